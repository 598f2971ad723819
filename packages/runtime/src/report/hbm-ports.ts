import { type Machine, MemoryComponent } from "@kb/components";
import type * as z from "zod";
import type { hbmPortsSchema } from "../spread-results.js";

/** @internal The per-pseudo-channel rows of every HBM controller that moved data. */
export function hbmPortRows(machine: Machine): NonNullable<z.infer<typeof hbmPortsSchema>> {
  const simTimeNs = machine.env.now;
  const rows: NonNullable<z.infer<typeof hbmPortsSchema>> = [];
  for (const component of machine.components) {
    if (!(component instanceof MemoryComponent) || component.kind !== "hbm_ctrl") continue;
    if (component.stats.ops === 0) continue;
    rows.push({
      id: component.id,
      ports: Array.from(component.portBusyNs, (busyNs, port) => ({
        busyNs,
        bytes: component.portBytes[port] as number,
        utilisation: simTimeNs > 0 ? busyNs / simTimeNs : 0,
      })),
    });
  }
  return rows;
}
