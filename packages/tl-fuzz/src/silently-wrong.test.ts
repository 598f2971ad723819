import { MemorySink, OpLogger } from "@kb/oplog";
import { type DeviceTensor, replay, Simulator } from "@kb/runtime";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";

// Each case here was reproduced by a new user at commit 24f5e57 as a run that printed wrong
// numbers, or a failure that did not say what was wrong (issue "Never silently wrong").

/** `a @ b` on the host in f64, rounded once to `dtype`. */
function matmul(a: Tensor, b: Tensor, dtype: "f16" | "f32"): Tensor {
  const [m, k] = a.shape as [number, number];
  const n = b.shape[1] as number;
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let l = 0; l < k; l++) sum += a.get(i, l) * b.get(l, j);
      out[i * n + j] = sum;
    }
  return Tensor.fromArray(out, [m, n], dtype);
}

function transpose(t: Tensor): Tensor {
  const [r, c] = t.shape as [number, number];
  const out = new Float64Array(r * c);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = t.get(i, j);
  return Tensor.fromArray(out, [c, r], t.dtype);
}

/** Runs `host` on a fresh simulator of the schema's default topology, then phase 2. */
async function phase2Of(host: (sim: Simulator) => Promise<DeviceTensor>): Promise<Tensor> {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology({ name: "silently-wrong" }, { opLogger: new OpLogger(sink) });
  const out = await host(sim);
  const { store } = replay(sim.hostWrites, sink.records);
  return store.readTensor(out.address, out.shape, out.dtype);
}

describe("a transposed ref operand of a composite GEMM", () => {
  // A Linear layer with its weight stored [N, K], as packages/tl/README.md suggests: y = x @ W^T.
  async function linear(tl: TL, x: DeviceTensor, w: DeviceTensor, y: DeviceTensor, tile: number[] | null) {
    const [m, k] = x.shape as [number, number];
    const n = w.shape[0] as number;
    const a = tl.ref(x, [m, k], x.dtype);
    const b = tl.trans(tl.ref(w, [n, k], w.dtype));
    const done = await tl.composite("gemm", a, b, {
      outPtr: y,
      ...(tile !== null ? { tileShape: tile as [number, number, number] } : {}),
    });
    await tl.wait(done);
  }

  for (const tile of [null, [16, 8, 8]]) {
    it(`is read transposed (weight [N, K], tile ${tile === null ? "default" : tile.join("x")})`, async () => {
      const x = Tensor.random([32, 24], "f16", { seed: 3 });
      const w = Tensor.random([40, 24], "f16", { seed: 4 });
      const actual = await phase2Of(async (sim) => {
        const X = await sim.toDevice(x);
        const W = await sim.toDevice(w);
        const Y = sim.empty([32, 40], "f16");
        await sim.launch(linear, { grid: { pes: 1 }, args: [X, W, Y, tile] });
        return Y;
      });
      const expected = matmul(x, transpose(w), "f16");
      let worst = 0;
      for (let i = 0; i < expected.size; i++)
        worst = Math.max(worst, Math.abs(actual.getFlat(i) - expected.getFlat(i)));
      expect(worst).toBeLessThan(0.01);
    });
  }

  it("a transposed A operand is read transposed too", async () => {
    async function kernel(tl: TL, at: DeviceTensor, b: DeviceTensor, c: DeviceTensor) {
      const [k, m] = at.shape as [number, number];
      const n = b.shape[1] as number;
      const a = tl.trans(tl.ref(at, [k, m], "f32"));
      await tl.wait(
        await tl.composite("gemm", a, tl.ref(b, [k, n], "f32"), { outPtr: c, tileShape: [8, 8, 4] }),
      );
    }
    const aT = Tensor.random([12, 20], "f32", { seed: 5 });
    const b = Tensor.random([12, 9], "f32", { seed: 6 });
    const actual = await phase2Of(async (sim) => {
      const [AT, B] = [await sim.toDevice(aT), await sim.toDevice(b)];
      const C = sim.empty([20, 9], "f32");
      await sim.launch(kernel, { grid: { pes: 1 }, args: [AT, B, C] });
      return C;
    });
    const expected = matmul(transpose(aT), b, "f32");
    for (let i = 0; i < expected.size; i++) expect(actual.getFlat(i)).toBeCloseTo(expected.getFlat(i), 4);
  });
});

describe("a tile loaded with { stride }, reshaped (issue 33)", () => {
  // Its TCM copy is contiguous, as packages/tl/README.md says: reshape and expandDims read it in
  // row-major order, in phase 2 as in phase 1.
  async function kernel(tl: TL, x: DeviceTensor, y: DeviceTensor) {
    const block = await tl.load(x.at(0, 4), [8, 4], "f32", { stride: 16 }); // columns 4..7
    const row = tl.expandDims(tl.reshape(block, [32]), 0);
    await tl.store(y, await tl.mul(row, 2));
  }

  it("phase 2 stores the block's elements row by row, doubled", async () => {
    const x = Tensor.random([8, 16], "f32", { seed: 7 });
    const actual = await phase2Of(async (sim) => {
      const X = await sim.toDevice(x);
      const Y = sim.empty([1, 32], "f32");
      await sim.launch(kernel, { grid: { pes: 1 }, args: [X, Y] });
      return Y;
    });
    for (let i = 0; i < 32; i++) expect(actual.getFlat(i)).toBe(2 * x.get(Math.floor(i / 4), 4 + (i % 4)));
  });
});
