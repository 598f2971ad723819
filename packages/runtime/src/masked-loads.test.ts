import { MemorySink, OpLogger } from "@kb/oplog";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { comparePhases, type DeviceTensor, replay, Simulator } from "./index.js";

// Masked tl.load / tl.store (Triton's mask and other), end to end: phase 1's data, phase 2's
// replay of the op log, and --check-phases agree.

const BLOCK = 64;
const N = 150; // 3 programs; the last holds 22 elements, its pointers run 42 elements past x's end.

async function simulator() {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(
    { name: "masks" },
    { opLogger: new OpLogger(sink), checkPhases: true },
  );
  return { sim, sink };
}

/** Phase 1's view of `tensor` (pending bytes read 0), phase 2's, and the phase check of the run. */
async function bothPhases(sim: Simulator, sink: MemorySink, tensor: DeviceTensor) {
  const phase1 = await sim.fromDevice(tensor);
  const bytes = replay(sim.hostWrites, sink.records).store.read(tensor.address, tensor.nbytes);
  const phase2 = new Tensor(tensor.shape, tensor.dtype, bytes);
  const check = comparePhases(sim.loadObservations, sim.hostWrites, sink.records);
  return { phase1, phase2, check };
}

function values(tensor: Tensor): number[] {
  return [...tensor.toFloat64Array()];
}

describe("masked loads and stores", () => {
  it("Triton's vector add with a ragged tail: masked-off pointers past the end are no error", async () => {
    const { sim, sink } = await simulator();
    const x = await sim.toDevice(
      sim.fromArray(
        Array.from({ length: N }, (_, i) => i),
        [N],
        "f32",
      ),
      { name: "x" },
    );
    const y = await sim.toDevice(
      sim.fromArray(
        Array.from({ length: N }, (_, i) => 2 * i),
        [N],
        "f32",
      ),
      { name: "y" },
    );
    const out = sim.empty([N], "f32", { name: "out" });
    const tails: number[][] = [];
    await sim.launch(
      async (tl: TL, x: DeviceTensor, y: DeviceTensor, out: DeviceTensor, n: number) => {
        const pid = tl.programId(0);
        const offsets = await tl.add(tl.arange(0, BLOCK), pid * BLOCK);
        const mask = await tl.lt(offsets, n);
        const xs = await tl.load(x.at(pid * BLOCK), [BLOCK], "f32", { mask });
        const ys = await tl.load(y.at(pid * BLOCK), [BLOCK], "f32", { mask, other: -1 });
        if (pid === 2) tails.push(values(xs.data).slice(20, 24), values(ys.data).slice(20, 24));
        await tl.store(out.at(pid * BLOCK), await tl.add(xs, ys), { mask });
      },
      { grid: { pes: 2 }, programs: [Math.ceil(N / BLOCK)], args: [x, y, out, N] },
    );
    // Elements 148 and 149 are on; past n the tile holds other (0 by default, -1 for y).
    expect(tails).toEqual([
      [148, 149, 0, 0],
      [296, 298, -1, -1],
    ]);
    // The sums are compute results, pending in phase 1: phase 2 computes them.
    const { phase2, check } = await bothPhases(sim, sink, out);
    expect(values(phase2)).toEqual(Array.from({ length: N }, (_, i) => 3 * i));
    expect(check).toMatchObject({ observed: 6, compared: 6, differing: 0, unmatched: 0 });
    // The tail program's loads and store are one record each, with the run that moves (22 f32).
    const masked = sink.records.flatMap((r) =>
      r.op_kind === "memory" && r.params.mask_runs !== undefined ? [r.params.mask_runs] : [],
    );
    expect(masked).toEqual([
      [0, 88],
      [0, 88],
      [0, 88],
    ]);
  });

  it("2-D row and column masks broadcast; masked-off elements keep their values when stored", async () => {
    // A 6 x 10 f32 matrix; 4 x 8 tiles at (4, 0) and (4, 8): rows 4-5 and columns 8-9 are in it.
    const { sim, sink } = await simulator();
    const a = await sim.toDevice(
      sim.fromArray(
        Array.from({ length: 60 }, (_, i) => i),
        [6, 10],
        "f32",
      ),
      { name: "a" },
    );
    const out = await sim.toDevice(sim.fromArray(new Array(60).fill(-5), [6, 10], "f32"), { name: "out" });
    const seen: number[][] = [];
    await sim.launch(
      async (tl: TL, a: DeviceTensor, out: DeviceTensor) => {
        const rows = tl.expandDims(await tl.lt(await tl.add(tl.arange(0, 4), 4), 6), 1); // [4, 1]
        const cols = await tl.lt(await tl.add(tl.arange(0, 8), 8), 10); // [8]
        const both = await tl.and(rows, cols); // [4, 8]
        const byRow = await tl.load(a.at(4, 0), [4, 8], "f32", { stride: 10, mask: rows, other: 7 });
        const byCol = await tl.load(a.at(4, 8), [2, 8], "f32", { stride: 10, mask: cols });
        const tile = await tl.load(a.at(4, 8), [4, 8], "f32", { stride: 10, mask: both });
        seen.push(values(byRow.data), values(byCol.data));
        await tl.store(out.at(4, 8), tile, { stride: 10, mask: both });
      },
      { grid: { pes: 1 }, args: [a, out] },
    );
    const row = (r: number) => Array.from({ length: 8 }, (_, c) => 10 * r + c);
    // Rows 4 and 5 load whole; rows 6 and 7 (past the matrix's end) are other.
    expect(seen[0]).toEqual([...row(4), ...row(5), ...new Array(16).fill(7)]);
    expect(seen[1]).toEqual([48, 49, 0, 0, 0, 0, 0, 0, 58, 59, 0, 0, 0, 0, 0, 0]);
    const { phase1, phase2, check } = await bothPhases(sim, sink, out);
    const expected = Array.from({ length: 60 }, (_, i) =>
      i === 48 || i === 49 || i === 58 || i === 59 ? i : -5,
    );
    expect(values(phase1)).toEqual(expected);
    expect(values(phase2)).toEqual(expected);
    expect(check).toMatchObject({ observed: 3, compared: 3, differing: 0 });
  });

  it("tl.loadAsync takes a mask and other too; tl.wait lands the masked tile", async () => {
    const { sim, sink } = await simulator();
    const x = await sim.toDevice(sim.fromArray([1, 2, 3, 4, 5, 6], [6], "f32"), { name: "x" });
    const seen: number[][] = [];
    await sim.launch(
      async (tl: TL, x: DeviceTensor) => {
        const mask = await tl.lt(await tl.add(tl.arange(0, 4), 4), 6); // elements 4, 5 of 6
        const future = await tl.loadAsync(x.at(4), [4], "f32", { mask, other: 9 });
        seen.push(values((await tl.wait(future)).data));
      },
      { grid: { pes: 1 }, args: [x] },
    );
    expect(seen).toEqual([[5, 6, 9, 9]]);
    expect(comparePhases(sim.loadObservations, sim.hostWrites, sink.records)).toMatchObject({
      observed: 1,
      compared: 1,
      differing: 0,
    });
  });

  it("a masked-on element past the allocation is still MEMORY_ACCESS", async () => {
    const { sim } = await simulator();
    const x = sim.empty([N], "f32", { name: "x" });
    const run = sim.launch(
      async (tl: TL, x: DeviceTensor) => {
        const mask = await tl.lt(tl.arange(0, BLOCK), 30); // 128..157: 150..157 are past the end
        await tl.load(x.at(128), [BLOCK], "f32", { mask });
      },
      { grid: { pes: 1 }, args: [x] },
    );
    await expect(run).rejects.toThrow(/MEMORY_ACCESS|outside/);
  });

  it("a mask computed from loaded data is refused, saying how to build one", async () => {
    const { sim } = await simulator();
    const x = await sim.toDevice(sim.fromArray([1, 2, 3, 4], [4], "f32"), { name: "x" });
    const run = sim.launch(
      async (tl: TL, x: DeviceTensor) => {
        const mask = await tl.lt(await tl.load(x, [4], "f32"), 3);
        await tl.load(x, [4], "f32", { mask });
      },
      { grid: { pes: 1 }, args: [x] },
    );
    await expect(run).rejects.toMatchObject({ code: "TL_INVALID_CALL" });
    await expect(run).rejects.toThrow(/must be computed from tl\.arange, tl\.full, program ids and scalars/);
  });

  it.each([
    [
      "a mask that is not i1",
      "the mask must be an i1 tile broadcastable to the tile's shape [4]; got handle #0 (i32 [4]",
    ],
    ["a mask that does not broadcast", "broadcastable to the tile's shape [4]; got handle #1 (i1 [3]"],
    ["other without a mask", "other (1) needs a mask; pass { mask, other }"],
  ])("refuses %s (TL_INVALID_CALL)", async (what, message) => {
    const { sim } = await simulator();
    const x = await sim.toDevice(sim.fromArray([1, 2, 3, 4], [4], "f32"), { name: "x" });
    const run = sim.launch(
      async (tl: TL, x: DeviceTensor) => {
        if (what === "a mask that is not i1") await tl.load(x, [4], "f32", { mask: tl.arange(0, 4) });
        else if (what === "other without a mask") await tl.load(x, [4], "f32", { other: 1 });
        else await tl.load(x, [4], "f32", { mask: await tl.lt(tl.arange(0, 3), 2) });
      },
      { grid: { pes: 1 }, args: [x] },
    );
    await expect(run).rejects.toMatchObject({ code: "TL_INVALID_CALL" });
    await expect(run).rejects.toThrow(message);
  });
});
