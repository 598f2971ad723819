import type { Machine } from "@kb/components";
import type { Work } from "../results.js";

/** Per-component counters at an instant, to take the work of a launch as a difference. */
export type WorkSnapshot = ReadonlyMap<
  string,
  { readonly ops: number; readonly flops: number; readonly bytes: number }
>;

/** @internal The counters of every component now. */
export function snapshotWork(machine: Machine): WorkSnapshot {
  return new Map(
    machine.components.map((c) => [c.id, { ops: c.stats.ops, flops: c.stats.flops, bytes: c.stats.bytes }]),
  );
}

/** @internal The work done since `before` (everything when `before` is empty) and its roofline. */
export function workSince(machine: Machine, before: WorkSnapshot): Work {
  let gemmFlops = 0;
  let mathFlops = 0;
  let hbmBytes = 0;
  const peaks = { gemm: 0, math: 0, hbm: 0 };
  for (const component of machine.components) {
    const was = before.get(component.id) ?? { ops: 0, flops: 0, bytes: 0 };
    if (component.stats.ops === was.ops) continue;
    const peak = component.peak();
    if (component.kind === "pe_gemm") {
      gemmFlops += component.stats.flops - was.flops;
      peaks.gemm += peak.flopsPerNs ?? 0;
    } else if (component.kind === "pe_math") {
      mathFlops += component.stats.flops - was.flops;
      peaks.math += peak.flopsPerNs ?? 0;
    } else if (component.kind === "hbm_ctrl") {
      hbmBytes += component.stats.bytes - was.bytes;
      peaks.hbm += peak.bytesPerNs ?? 0;
    }
  }
  const bound = (work: number, perNs: number) => (work > 0 && perNs > 0 ? work / perNs : 0);
  const rooflineNs = Math.max(
    bound(gemmFlops, peaks.gemm),
    bound(mathFlops, peaks.math),
    bound(hbmBytes, peaks.hbm),
  );
  return { gemmFlops, mathFlops, hbmBytes, rooflineNs, peaks };
}
