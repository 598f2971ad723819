import type { Machine } from "@kb/components";
import type { LaunchDetail } from "../launch-results.js";
import type { LaunchRoofline } from "../roofline-results.js";
import type { BusySnapshot } from "./launch-busy.js";

/** The link that carried the most bandwidth time during a launch. */
export interface BusiestLink {
  /** `src -> dst`. */
  readonly name: string;
  /** Its bandwidth, B/s. */
  readonly bytesPerS: number;
  /** The bytes it carried during the launch. */
  readonly bytes: number;
}

/**
 * @internal The link with the most bandwidth time (busyNs) since `before`, null when none
 * carried traffic. Its bytes are that time at its bandwidth (busyNs is the sum of bytes / bw).
 */
export function busiestLinkSince(machine: Machine, before: BusySnapshot): BusiestLink | null {
  let best: BusiestLink | null = null;
  let bestNs = 0;
  for (const link of machine.fabric.usedLinks()) {
    const name = `${link.edge.src} -> ${link.edge.dst}`;
    const busyNs = link.busyNs - (before.links.get(name) ?? 0);
    if (busyNs <= bestNs) continue;
    bestNs = busyNs;
    best = { name, bytesPerS: link.edge.bwGbs * 1e9, bytes: busyNs * link.edge.bwGbs };
  }
  return best;
}

/**
 * @internal A launch's roofline chart from its own figures: the ceilings are its `peak` per GEMM
 * dtype and PE_MATH, the slopes `peak.hbmBytesPerS` and the busiest link's bandwidth, the point's
 * height its FLOP/s over the window, its x the FLOPs over each traffic's bytes.
 */
export function launchRoofline(
  work: { readonly gemmFlops: number; readonly mathFlops: number; readonly hbmBytes: number },
  detail: Pick<LaunchDetail, "durationNs" | "peak" | "minimal">,
  link: BusiestLink | null,
): LaunchRoofline {
  const flops = work.gemmFlops + work.mathFlops;
  const flopsPerS = detail.durationNs > 0 ? (flops / detail.durationNs) * 1e9 : 0;
  const ceilings: LaunchRoofline["ceilings"] = [];
  for (const [dtype, perS] of Object.entries(detail.peak.gemmFlopsPerSByDtype))
    if (perS > 0) ceilings.push({ engine: "gemm", dtype, flopsPerS: perS });
  if (detail.peak.mathFlopsPerS > 0)
    ceilings.push({ engine: "math", dtype: null, flopsPerS: detail.peak.mathFlopsPerS });
  const slopes: LaunchRoofline["slopes"] = [];
  if (detail.peak.hbmBytesPerS > 0)
    slopes.push({ resource: "hbm", name: "HBM", bytesPerS: detail.peak.hbmBytesPerS });
  if (link !== null) slopes.push({ resource: "link", name: link.name, bytesPerS: link.bytesPerS });
  const points: LaunchRoofline["points"] = [];
  const point = (traffic: "hbm" | "minimal" | "link", bytes: number) => {
    if (flops > 0 && bytes > 0) points.push({ traffic, bytes, intensity: flops / bytes, flopsPerS });
  };
  point("hbm", work.hbmBytes);
  point("minimal", detail.minimal.hbmBytes);
  if (link !== null) point("link", link.bytes);
  return { flops, flopsPerS, ceilings, slopes, points };
}
