import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { type DeviceTensor, deferredTensor, defineBench, type HostDataMode, runBenchCore } from "../index.js";
import { loadSimulator } from "../node.js";
import { failure } from "../test-support.js";

// Deferred tensors: bytes made only when a run needs them (issue 38, point 3).

/** Each PE writes exp of its rows of `src` to `dst`: compute only, no branch on the data. */
async function expRows(tl: TL, src: DeviceTensor, dst: DeviceTensor, rows: number) {
  const row = tl.programId(0) * rows;
  const cols = src.shape[1] as number;
  await tl.store(dst.at(row, 0), await tl.exp(await tl.load(src.at(row, 0), [rows, cols], src.dtype)));
}

/** Reads the first loaded value, as a kernel that branches on its data does. */
async function firstValue(tl: TL, src: DeviceTensor) {
  const tile = await tl.load(src.at(0, 0), [1, 4], src.dtype);
  if ((tile.data.toFloat64Array()[0] as number) > 10) await tl.store(src.at(0, 0), tile);
}

const SHAPE = [64, 1024];

/** Copies a deferred [64, 1024] f32 tensor (256 KiB) to the device and runs expRows on 4 PEs. */
async function run(hostData: HostDataMode) {
  const sim = await loadSimulator({ name: "deferred" }, { hostData });
  let made = 0;
  const w = deferredTensor(SHAPE, "f32", () => {
    made++;
    return Tensor.random(SHAPE, "f32", { seed: 5 });
  });
  const W = await sim.toDevice(w, { name: "W" });
  const copiedAt = sim.now;
  const Y = sim.empty(SHAPE, "f32", { name: "Y" });
  await sim.launch(expRows, { grid: { pes: 4 }, args: [W, Y, 16] });
  return { sim, W, made, copiedAt, pages: sim.memory.touched(W.address, W.nbytes) };
}

describe("deferred tensors", () => {
  it("full mode makes the bytes once and copies them as a Tensor's", async () => {
    const { sim, W, made } = await run("full");
    expect(made).toBe(1);
    expect((await sim.fromDevice(W)).equals(Tensor.random(SHAPE, "f32", { seed: 5 }))).toBe(true);
  });

  it("timing-only mode never makes them, holds none of them, and takes the same simulated time", async () => {
    const full = await run("full");
    const timing = await run("timing-only");
    expect(timing.made).toBe(0);
    expect(timing.pages).toBe(false);
    expect(full.pages).toBe(true);
    expect(timing.copiedAt).toBe(full.copiedAt);
    expect(timing.sim.now).toBe(full.sim.now);
    expect(timing.sim.results("deferred", {})).toEqual(full.sim.results("deferred", {}));
  });

  it("a kernel reading timing-only data is a located error naming the tensor", async () => {
    const { sim, W } = await run("timing-only");
    const error = await failure(sim.launch(firstValue, { grid: { pes: 1 }, args: [W] }));
    expect(error.code).toBe("TL_PENDING_HANDLE");
    expect(error.message).toContain("timing-only data: tensor W at [0x");
    expect(error.message).toMatch(/copied at \S*deferred-data\.test\.ts:\d+:\d+/);
    expect(error.message).toContain("Run with --verify or --full-data");
    expect(error.context.file).toMatch(/deferred-data\.test\.ts$/);
    expect(error.context.kernel).toBe("firstValue");
  });

  it("a make() of another shape is refused where the tensor was declared", async () => {
    const sim = await loadSimulator({ name: "deferred" });
    const bad = deferredTensor([2, 2], "f32", () => Tensor.zeros([4], "f32"));
    const error = await failure(sim.toDevice(bad));
    expect(error.code).toBe("RUNTIME_INVALID");
    expect(error.message).toMatch(
      /deferred-data\.test\.ts:\d+:\d+: the deferred tensor \[2, 2\] f32 was made as \[4\] f32/,
    );
  });
});

describe("runBenchCore's host data", () => {
  const bench = defineBench({
    name: "deferred-bench",
    params: z.object({}),
    async run(sim) {
      const w = deferredTensor(SHAPE, "f32", () => Tensor.random(SHAPE, "f32", { seed: 7 }));
      const W = await sim.toDevice(w, { name: "W" });
      const Y = sim.empty(SHAPE, "f32", { name: "Y" });
      await sim.launch(expRows, { grid: { pes: 4 }, args: [W, Y, 16] });
      const expected = () =>
        Tensor.fromArray(
          [...Tensor.random(SHAPE, "f32", { seed: 7 }).toFloat64Array()].map(Math.exp),
          SHAPE,
          "f32",
        );
      return { check: { Y: { actual: Y, reference: expected } } };
    },
  });
  const base = { bench, topology: "name: deferred-bench\n", benchSource: "the bench's text" };

  it("gives the same results JSON timing-only (the default without verify) and full", async () => {
    const timing = await runBenchCore({ ...base });
    const full = await runBenchCore({ ...base, hostData: "full" });
    expect(JSON.stringify(timing.results)).toBe(JSON.stringify(full.results));
    const verified = await runBenchCore({ ...base, verify: true });
    expect(verified.passed).toBe(true);
    expect(verified.verification?.pass).toBe(true);
  });

  it("refuses timing-only with verify", async () => {
    const error = await failure(runBenchCore({ ...base, verify: true, hostData: "timing-only" }));
    expect(error.code).toBe("RUNTIME_INVALID");
    expect(error.message).toContain("phase 2 (verify, checkPhases) needs them");
  });
});
