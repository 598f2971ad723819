import type { MemorySink } from "@kb/oplog";
import { type DeviceTensor, replay, type Simulator, verifyOutcome } from "@kb/runtime";
import type { Tensor } from "@kb/tensor";
import { encodeAddress } from "@kb/topology";
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
