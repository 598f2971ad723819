import { gemmTimingOf, type Machine, MemoryComponent } from "@kb/components";
import type { RunResults } from "../results.js";

// The figures of `achieved` that read the models themselves, beyond work / time.

/**
 * @internal `sum(m n k) / sum(cycles x R x C)` over the PE_GEMMs that state their timing (`gemmTimingOf`)
 * and ran: the array utilisation of the GEMMs themselves, by each impl's own cycles, where
 * `achieved.gemmFraction` also counts the time the engines sat idle. Null when none ran.
 */
export function gemmArrayUtilisation(machine: Machine): number | null {
  let macs = 0;
  let slots = 0;
  for (const component of machine.components) {
    if (component.kind !== "pe_gemm" || component.stats.ops === 0) continue;
    const timing = gemmTimingOf(component);
    if (timing === null || timing.arrayCycles <= 0) continue;
    macs += component.stats.flops / 2;
    slots += timing.arrayCycles * timing.macRows * timing.macCols;
  }
  return slots > 0 ? macs / slots : null;
}

/** @internal Data-bus time per pseudo-channel of the HBM stack whose load is least even (max / mean). */
export function hbmPortBalance(
  machine: Machine,
): NonNullable<RunResults["achieved"]["hbmPortBalance"]> | null {
  let worst: NonNullable<RunResults["achieved"]["hbmPortBalance"]> | null = null;
  for (const component of machine.components) {
    if (!(component instanceof MemoryComponent) || component.kind !== "hbm_ctrl") continue;
    const busy = [...component.portBusyNs];
    const mean = busy.reduce((sum, value) => sum + value, 0) / busy.length;
    if (!(mean > 0)) continue;
    const maxBusyNs = Math.max(...busy);
    let windowMax = 0;
    let windowMean = 0;
    for (const window of component.windowBusyNs) {
      let max = 0;
      let sum = 0;
      for (const value of window) {
        if (value > max) max = value;
        sum += value;
      }
      windowMax += max;
      windowMean += sum / window.length;
    }
    const balance = {
      stack: component.id,
      ports: busy.length,
      meanBusyNs: mean,
      maxBusyNs,
      minBusyNs: Math.min(...busy),
      maxOverMean: maxBusyNs / mean,
      windowMaxOverMean: windowMean > 0 ? windowMax / windowMean : 1,
    };
    if (worst === null || balance.windowMaxOverMean > worst.windowMaxOverMean) worst = balance;
  }
  return worst;
}
