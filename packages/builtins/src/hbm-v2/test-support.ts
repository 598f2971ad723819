// Test helpers of hbm_ctrl_v2: one HBM3 stack on a MemoryHarness, requests at given times.
import type { KbPlugin } from "@kb/components";
import { MemoryHarness } from "@kb/probe";
import { graphFrom } from "../../../components/src/test-support.js";
import type { HbmCtrlV2Model } from "./hbm-ctrl-v2.js";

/** The reference HBM3 stack (mapping RoBaBgSiPcCo4ChCo1 unless given), `impl` with `params` (refresh off unless given). */
export function hbm3Harness(
  params: Record<string, unknown> = {},
  impl = "hbm_ctrl_v2",
  plugins: readonly KbPlugin[] = [],
  mapping = "RoBaBgSiPcCo4ChCo1",
): MemoryHarness {
  const hbm = {
    impl,
    preset: "hbm3",
    channels: 16,
    pseudo_channels: 2,
    pc_bw_gbs: 25.6,
    sids: 2,
    mapping,
    params: { refresh: "none", ...params },
  };
  return new MemoryHarness(graphFrom({ cube: { hbm } }), { plugins });
}

/** ref-cube's stack (topologies/ref-cube.yaml `cube.hbm`: the `xor` mapping) as hbm_ctrl_v2, with `params`. */
export function refCubeHarness(params: Record<string, unknown>): MemoryHarness {
  const hbm = {
    impl: "hbm_ctrl_v2",
    preset: "hbm3",
    channels: 16,
    pseudo_channels: 2,
    pc_bw_gbs: 25.6,
    capacity_bytes: 25769803776,
    interleave_bytes: 256,
    flit_bytes: 64,
    mapping: "xor",
    sids: 2,
    bank_groups: 4,
    banks_per_group: 4,
    row_bytes: 1024,
    burst_bytes: 32,
    params,
  };
  return new MemoryHarness(graphFrom({ cube: { hbm } }));
}

export type HarnessRequest = ReturnType<MemoryHarness["request"]>;

/** Advances to `t` ns and sends a request there. */
export function requestAt(
  h: MemoryHarness,
  t: number,
  kind: "read" | "write",
  offset: number,
  bytes = 32,
): HarnessRequest {
  if (h.machine.env.now < t) h.machine.env.run(t);
  return h.request(kind, offset, bytes);
}

/** Runs to the end; every request's doneNs. */
export function doneTimes(h: MemoryHarness, ...requests: HarnessRequest[]): number[] {
  h.machine.run();
  return requests.map((r) => r.value.doneNs);
}

/** The harness's memory as hbm_ctrl_v2 (its config and per-port stats). */
export const hbmModel = (h: MemoryHarness): HbmCtrlV2Model => h.memory.model as HbmCtrlV2Model;
