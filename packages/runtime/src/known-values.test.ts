import { MemorySink, OpLogger } from "@kb/oplog";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { comparePhases, type DeviceTensor, replay, Simulator } from "./index.js";

const BLOCK = 8;
const N = 12;

/**
 * The Triton way to build a mask: offsets from `tl.arange` and the program id, compared to n.
 * Every value derives from constants, so phase 1 knows it: the kernel reads `data`, then stores
 * the offsets, the mask and a float result and loads them back (each load is compared with phase 2).
 */
async function masks(
  tl: TL,
  offsOut: DeviceTensor,
  maskOut: DeviceTensor,
  halfOut: DeviceTensor,
  seen: number[][][],
) {
  const pid = tl.programId(0);
  const offs = await tl.add(tl.arange(0, BLOCK), pid * BLOCK);
  const mask = await tl.lt(offs, N);
  // exp2(offs / 4) in f16: 2^(k/4) is not exact in f16, so phase 1 must round as phase 2 does.
  const half = await tl.exp2(await tl.div(await tl.cast(offs, "f16"), 4));
  const mine: number[][] = [[...offs.data.toFloat64Array()], [...mask.data.toFloat64Array()]];
  seen[pid] = mine;
  await tl.store(offsOut.at(pid * BLOCK), offs);
  await tl.store(maskOut.at(pid * BLOCK), mask);
  await tl.store(halfOut.at(pid * BLOCK), half);
  await tl.load(offsOut.at(pid * BLOCK), [BLOCK], "i32");
  await tl.load(maskOut.at(pid * BLOCK), [BLOCK], "i1");
  const back = await tl.load(halfOut.at(pid * BLOCK), [BLOCK], "f16");
  mine.push([...back.data.toFloat64Array()]);
}

describe("math results of constants are known in phase 1", () => {
  it("offsets, a mask and a float result agree byte for byte with phase 2", async () => {
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology(
      { name: "known" },
      { opLogger: new OpLogger(sink), checkPhases: true },
    );
    const offsOut = sim.empty([2 * BLOCK], "i32", { name: "offs" });
    const maskOut = sim.empty([2 * BLOCK], "i1", { name: "mask" });
    const halfOut = sim.empty([2 * BLOCK], "f16", { name: "half" });
    const seen: number[][][] = [];
    await sim.launch(masks, { grid: { pes: 2 }, args: [offsOut, maskOut, halfOut, seen] });

    // Phase 1 read them: program 1's offsets are 8..15, of which 8..11 are below n = 12.
    expect(seen[1]?.slice(0, 2)).toEqual([
      [8, 9, 10, 11, 12, 13, 14, 15],
      [1, 1, 1, 1, 0, 0, 0, 0],
    ]);
    // Every load of the known results was compared with phase 2's copy of the same bytes.
    const check = comparePhases(sim.loadObservations, sim.hostWrites, sink.records);
    expect(check).toMatchObject({ observed: 6, compared: 6, differing: 0, unmatched: 0 });

    const phase2 = replay(sim.hostWrites, sink.records).store;
    const half = new Tensor([2 * BLOCK], "f16", phase2.read(halfOut.address, halfOut.nbytes));
    const expected = Tensor.fromArray(
      Array.from({ length: 2 * BLOCK }, (_, k) => 2 ** (k / 4)),
      [2 * BLOCK],
      "f16",
    );
    expect(half.equals(expected)).toBe(true);
    // What phase 1 loaded back is what phase 2 computed.
    expect([...(seen[0]?.[2] ?? []), ...(seen[1]?.[2] ?? [])]).toEqual([...expected.toFloat64Array()]);
  });

  it("results of loaded data stay pending", async () => {
    const sim = await Simulator.fromTopology({ name: "pending" });
    const x = await sim.toDevice(sim.fromArray([1, 2, 3, 4], [4], "f32"), { name: "x" });
    const codes: string[] = [];
    await sim.launch(
      async (tl: TL, src: DeviceTensor) => {
        const y = await tl.lt(await tl.load(src, [4], "f32"), 3);
        try {
          void y.data;
        } catch (error) {
          codes.push((error as { code: string }).code);
        }
      },
      { grid: { pes: 1 }, args: [x] },
    );
    expect(codes).toEqual(["TL_PENDING_HANDLE"]);
  });
});
