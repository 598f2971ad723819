import type { Machine } from "./machine.js";
import { MemoryComponent } from "./memory.js";

/** The peak of one HBM stack as its controller's model states it. */
export interface HbmStackPeak {
  /** The controller's node id (`sip0.cube0.hbm`). */
  readonly id: string;
  readonly impl: string;
  /** Its ports: the topology's pseudo-channels (`cube.hbm.channels x pseudo_channels`). */
  readonly ports: number;
  /** The model's `peak().bytesPerNs` (GB/s), or null when the model states no peak. */
  readonly bytesPerNs: number | null;
}

/**
 * The peak of every HBM stack of `machine`, in graph order, from its controller's own `peak()`:
 * the number `kb topology show`, `kb probe` and the run results' `peak.hbmBytesPerS` all use
 * (`hbm_ctrl_v1`: ports x `pc_bw_gbs`; `hbm_ctrl_v2`: ports x `burst_bytes / tBL` of its timing).
 */
export function hbmStackPeaks(machine: Machine): HbmStackPeak[] {
  const { channels, pseudo_channels: pseudoChannels } = machine.graph.topology.cube.hbm;
  return machine.components
    .filter((component) => component.kind === "hbm_ctrl")
    .map((component) => ({
      id: component.id,
      impl: component.impl,
      ports: component instanceof MemoryComponent ? component.ports : channels * pseudoChannels,
      bytesPerNs: component.peak().bytesPerNs ?? null,
    }));
}
