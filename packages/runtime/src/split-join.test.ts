import { MemorySink, OpLogger } from "@kb/oplog";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { comparePhases, type DeviceTensor, replay, Simulator } from "./index.js";

// Triton's tl.join, tl.split, tl.permute and tl.cat, end to end: phase 2's values (the op log
// replayed), --check-phases on a load of what they produced, and the PE_MATH ops they issue.

async function run(
  inputs: Record<string, { values: number[]; shape: number[] }>,
  outShape: number[],
  kernel: (tl: TL, out: DeviceTensor, ...xs: DeviceTensor[]) => Promise<void>,
) {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(
    { name: "shapes" },
    { opLogger: new OpLogger(sink), checkPhases: true },
  );
  const tensors: DeviceTensor[] = [];
  for (const [name, { values, shape }] of Object.entries(inputs))
    tensors.push(await sim.toDevice(sim.fromArray(values, shape, "f32"), { name }));
  const out = sim.empty(outShape, "f32", { name: "out" });
  await sim.launch(kernel as never, { grid: { pes: 1 }, args: [out, ...tensors] });
  const bytes = replay(sim.hostWrites, sink.records).store.read(out.address, out.nbytes);
  const ops = sink.records.flatMap((r) => (r.op_kind === "math" ? [r.op_name] : []));
  return {
    values: [...new Tensor(outShape, "f32", bytes).toFloat64Array()],
    ops,
    check: comparePhases(sim.loadObservations, sim.hostWrites, sink.records),
  };
}

const A = { values: [1, 2, 3], shape: [3] };
const B = { values: [10, 20, 30], shape: [3] };

describe("split, join, permute, cat", () => {
  it("join(a, b) stacks along a new last dimension of 2: [3] and [3] -> [3, 2]", async () => {
    const { values, ops } = await run({ a: A, b: B }, [3, 2], async (tl, out, a, b) => {
      const joined = await tl.join(
        await tl.load(a as DeviceTensor, [3], "f32"),
        await tl.load(b as DeviceTensor, [3], "f32"),
      );
      expect(joined.shape).toEqual([3, 2]);
      await tl.store(out, joined);
    });
    expect(values).toEqual([1, 10, 2, 20, 3, 30]);
    expect(ops).toEqual(["copy", "copy", "transpose"]);
  });

  it("split(x) of [2, 2, 2] gives x[..., 0] and x[..., 1], each [2, 2]; join(split(x)) is x", async () => {
    const x = { values: [0, 1, 2, 3, 4, 5, 6, 7], shape: [2, 2, 2] };
    const { values, check } = await run({ x }, [3, 2, 2], async (tl, out, x) => {
      const tile = await tl.load(x as DeviceTensor, [2, 2, 2], "f32");
      const [even, odd] = await tl.split(tile);
      expect([even.shape, odd.shape]).toEqual([
        [2, 2],
        [2, 2],
      ]);
      await tl.store(out.at(0, 0, 0), even);
      await tl.store(out.at(1, 0, 0), odd);
      await tl.store(out.at(1, 0, 0), await tl.join(even, odd));
    });
    expect(values.slice(0, 8)).toEqual([0, 2, 4, 6, 0, 1, 2, 3]);
    expect(values.slice(4, 12)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(check).toMatchObject({ observed: 1, compared: 1, differing: 0, unmatched: 0 });
  });

  it("permute(x, [2, 0, 1]) of [2, 3, 4]: out[k, i, j] = x[i, j, k], as two exchanges of axes", async () => {
    const x = { values: Array.from({ length: 24 }, (_, i) => i), shape: [2, 3, 4] };
    const { values, ops } = await run({ x }, [4, 2, 3], async (tl, out, x) => {
      const permuted = await tl.permute(await tl.load(x as DeviceTensor, [2, 3, 4], "f32"), [2, 0, 1]);
      expect(permuted.shape).toEqual([4, 2, 3]);
      await tl.store(out, permuted);
    });
    const expected = [];
    for (let k = 0; k < 4; k++)
      for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) expected.push(i * 12 + j * 4 + k);
    expect(values).toEqual(expected);
    expect(ops).toEqual(["transpose", "transpose"]);
  });

  it("cat(a, b) of [3] and [3] is [6], a then b; of [1, 2] and [2, 2] along the first dimension", async () => {
    const one = await run({ a: A, b: B }, [6], async (tl, out, a, b) => {
      const ta = await tl.load(a as DeviceTensor, [3], "f32");
      await tl.store(out, await tl.cat(ta, await tl.load(b as DeviceTensor, [3], "f32"), true));
    });
    expect(one.values).toEqual([1, 2, 3, 10, 20, 30]);
    expect(one.ops).toEqual(["copy", "copy"]);
    const two = await run(
      { a: { values: [1, 2], shape: [1, 2] }, b: { values: [3, 4, 5, 6], shape: [2, 2] } },
      [3, 2],
      async (tl, out, a, b) => {
        await tl.store(
          out,
          await tl.cat(
            await tl.load(a as DeviceTensor, [1, 2], "f32"),
            await tl.load(b as DeviceTensor, [2, 2], "f32"),
          ),
        );
      },
    );
    expect(two.values).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it.each([
    ["split of a last dimension other than 2", "the last dimension must be 2"],
    ["join of two shapes", "a and b must have one dtype and one shape"],
    ["permute with a repeated dim", "dims must list each of the 2 dimensions once"],
    ["cat of other trailing dimensions", "the same dimensions after the first"],
  ])("refuses %s (TL_INVALID_CALL)", async (what, message) => {
    const run2 = run({}, [1], async (tl) => {
      const x = tl.zeros([2, 3], "f32");
      const y = tl.zeros([3, 2], "f32");
      if (what.startsWith("split")) await tl.split(x);
      else if (what.startsWith("join")) await tl.join(x, y);
      else if (what.startsWith("permute")) await tl.permute(x, [0, 0]);
      else await tl.cat(x, y);
    });
    await expect(run2).rejects.toMatchObject({ code: "TL_INVALID_CALL" });
    await expect(run2).rejects.toThrow(message);
  });
});
