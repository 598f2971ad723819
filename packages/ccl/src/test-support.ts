import type { MemorySink } from "@kb/oplog";
import { type DeviceTensor, replay, type Simulator, verifyOutcome } from "@kb/runtime";
import type { Tensor } from "@kb/tensor";
import { encodeAddress, type Topology } from "@kb/topology";
import { expect } from "vitest";
import type { Region } from "./kernel-support.js";
import type { RankGroup } from "./ranks.js";

/** One HBM buffer per rank (in its own SIP for "sips", else at distinct offsets of SIP 0 cube 0). */
export function buffersOf(
  group: RankGroup,
  count: number,
  dtype: Region["dtype"] = "f32",
  base = 0,
): Region[] {
  return group.members.map((member, rank) => ({
    address:
      group.scope === "sips"
        ? encodeAddress({ sip: member, cube: 0, space: "hbm", offset: base })
        : encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: base + rank * 2 ** 22 }),
    count,
    dtype,
  }));
}

/** Phase 2: replays `sink`'s op log and expects each device tensor to equal its reference. */
export async function phase2(
  sim: Simulator,
  sink: MemorySink,
  checks: readonly (readonly [DeviceTensor, Tensor])[],
): Promise<void> {
  const { store } = replay(sim.hostWrites, sink.records);
  const report = await verifyOutcome(
    {
      check: Object.fromEntries(
        checks.map(([actual, reference]) => [actual.name, { actual, reference: () => reference }]),
      ),
    },
    store,
  );
  expect(report.pass, JSON.stringify(report.outputs.filter((o) => !o.pass))).toBe(true);
}

/**
 * `ref4sip` (topologies/ref-4sip.yaml, parsed) with its SIP-to-SIP links at 32 GB/s (PCIe 4.0 x16 class) instead of 128: the
 * links are then the ring's bottleneck, as the collectives' models assume. On ref-4sip itself the
 * PE's own port (64 GB/s) is, and one PE loads, adds and stores a 16 KiB piece in about the time
 * the port moves one, so the ring runs PE-bound (see packages/ccl/README.md).
 *
 * Its HBM is hbm_ctrl_v1, the analytic bus whose access latency the models' PE term is derived
 * with (pe-term.ts): ref-4sip's own hbm_ctrl_v2 (issue 37) times every DRAM command, which no
 * closed form has, and measured the ring all-reduce at 1.105 x its model (2 SIPs, 1 MiB; bound
 * 1.1) and reduce at 1.064 x (4 SIPs, 1 MiB; bound 1.05).
 */
export function linkBoundRef4sip(ref4sip: Topology): Topology {
  return {
    ...ref4sip,
    name: "ref-4sip-32gbs",
    system: { ...ref4sip.system, sip_link: { ...ref4sip.system.sip_link, bw_gbs: 32 } },
    cube: { ...ref4sip.cube, hbm: { ...ref4sip.cube.hbm, impl: "hbm_ctrl_v1", params: {} } },
  };
}
