import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySink, OpLogger } from "@kb/oplog";
import { JsonlSink, readOpLog } from "@kb/oplog/node";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, replay, Simulator, verificationJson, verifyOutcome } from "./index.js";

/** C = A @ B on the host in f64, rounded once to f16: the reference. */
function matmul(a: Tensor, b: Tensor): Tensor {
  const [m, k] = a.shape as [number, number];
  const n = b.shape[1] as number;
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let l = 0; l < k; l++) sum += a.get(i, l) * b.get(l, j);
      out[i * n + j] = sum;
    }
  return Tensor.fromArray(out, [m, n], "f16");
}

/** Each of 4 PEs computes 16 rows of C; `shift` rows of A off to break it on purpose. */
async function rowsGemm(tl: TL, a: DeviceTensor, b: DeviceTensor, c: DeviceTensor, shift: number) {
  const row = tl.programId(0) * 16;
  const [, k] = a.shape as [number, number];
  const n = b.shape[1] as number;
  const at = await tl.load(a.at((row + shift) % 64, 0), [16, k], "f16");
  const bt = await tl.load(b, [k, n], "f16");
  const acc = await tl.dot(at, bt);
  await tl.store(c.at(row, 0), await acc.to("f16"));
}

async function runGemm(shift: number) {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology({ name: "phase2" }, { opLogger: new OpLogger(sink) });
  const a = sim.random([64, 32], "f16", { seed: 1 });
  const b = sim.random([32, 48], "f16", { seed: 2 });
  const A = await sim.toDevice(a);
  const B = await sim.toDevice(b);
  const C = sim.empty([64, 48], "f16", { name: "C" });
  await sim.launch(rowsGemm, { grid: { pes: 4 }, args: [A, B, C, shift] });
  const phase2 = replay(sim.hostWrites, sink.records);
  const report = await verifyOutcome(
    { check: { C: { actual: C, reference: () => matmul(a, b) } } },
    phase2.store,
  );
  return { report, phase2, records: sink.records };
}

describe("phase 2: replay and verify", () => {
  it("a tiled GEMM replayed from its op log matches the host reference (f16 tolerance)", async () => {
    const { report, phase2 } = await runGemm(0);
    expect(report.pass).toBe(true);
    expect(report.outputs[0]?.mismatches).toBe(0);
    // 4 GEMMs of 16 x 48 x 32, batched across the PEs where independent.
    expect(phase2.stats.gemmFlops).toBe(4 * 2 * 16 * 48 * 32);
    expect(phase2.stats.byName).toMatchObject({ dma_read: 8, gemm_f16: 4, cast: 4, dma_write: 4 });
  });

  it("replays the same from a JSONL op log on disk (what --oplog writes) as from memory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kb-phase2-"));
    try {
      const file = join(dir, "run.oplog.jsonl");
      const logger = new OpLogger(new JsonlSink(file));
      const sim = await Simulator.fromTopology({ name: "phase2" }, { opLogger: logger });
      const a = sim.random([64, 32], "f16", { seed: 1 });
      const b = sim.random([32, 48], "f16", { seed: 2 });
      const [A, B] = [await sim.toDevice(a), await sim.toDevice(b)];
      const C = sim.empty([64, 48], "f16");
      await sim.launch(rowsGemm, { grid: { pes: 4 }, args: [A, B, C, 0] });
      await logger.close();
      const records = await readOpLog(file);
      const report = await verifyOutcome(
        { check: { C: { actual: C, reference: () => matmul(a, b) } } },
        replay(sim.hostWrites, records).store,
      );
      expect(records).toHaveLength(20);
      expect(report.pass).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the check can fail: a kernel loading the wrong tile FAILs at the first mismatching index", async () => {
    const { report } = await runGemm(16);
    expect(report.pass).toBe(false);
    const [output] = report.outputs;
    expect(output?.pass).toBe(false);
    // PE0 wrote rows 0..15 from A's rows 16..31: the very first element is wrong.
    expect(output?.firstMismatch?.index).toEqual([0, 0]);
    expect(output?.mismatches).toBeGreaterThan(64 * 48 * 0.9);
  });

  it("the report carries the replay's first non-finite op when given it, and verificationJson writes it", async () => {
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology({ name: "phase2" }, { opLogger: new OpLogger(sink) });
    const x = sim.fromArray([1, -1, 4, -4], [4], "f32");
    const X = await sim.toDevice(x);
    const Y = sim.empty([4], "f32");
    async function root(tl: TL, src: DeviceTensor, dst: DeviceTensor) {
      await tl.store(dst, await tl.sqrt(await tl.load(src, [4], "f32")));
    }
    await sim.launch(root, { grid: { pes: 1 }, args: [X, Y] });
    const phase2 = replay(sim.hostWrites, sink.records);
    const sqrt = sink.records.find((record) => record.op_name === "sqrt");
    if (sqrt === undefined || sqrt.op_kind !== "math") throw new Error("no sqrt record in the op log");
    // sqrt of [1, -1, 4, -4] is [1, NaN, 2, NaN]: its element 1 is the first NaN.
    expect(phase2.executor.firstNonFinite).toMatchObject({ id: sqrt.id, opName: "sqrt", index: 1 });
    const outcome = {
      check: { Y: { actual: Y, reference: () => Tensor.fromArray([1, 1, 2, 2], [4], "f32") } },
    };
    const report = await verifyOutcome(outcome, phase2.store, {
      firstNonFinite: phase2.executor.firstNonFinite,
    });
    expect(report.firstNonFinite).toBe(phase2.executor.firstNonFinite);
    expect(report.outputs[0]?.actualNonFinite).toMatchObject({ nan: 2, first: { index: [1] } });
    expect(verificationJson(report).firstNonFinite).toEqual({
      id: sqrt.id,
      opName: "sqrt",
      opKind: "math",
      componentId: sqrt.component_id,
      tStartNs: sqrt.t_start,
      dst: sqrt.params.dst_addr,
      index: 1,
      value: "NaN",
      inputNonFinite: false,
    });
    expect(verificationJson(report).outputs[0]).toMatchObject({
      actualNonFinite: { nan: 2, posInf: 0, negInf: 0, first: { index: [1], value: "NaN" } },
      referenceNonFinite: { nan: 0, posInf: 0, negInf: 0, first: null },
    });
    // Without it the report says nothing of where values came from (older callers).
    const plain = await verifyOutcome(outcome, phase2.store);
    expect("firstNonFinite" in plain).toBe(false);
    expect("firstNonFinite" in verificationJson(plain)).toBe(false);
  });

  it("host writes between launches reach only the later kernels", async () => {
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology({ name: "phase2" }, { opLogger: new OpLogger(sink) });
    const first = sim.fromArray([1, 2, 3, 4], [4], "f32");
    const second = sim.fromArray([5, 6, 7, 8], [4], "f32");
    const X = await sim.toDevice(first);
    const Y = sim.empty([4], "f32");
    const Z = sim.empty([4], "f32");
    async function copy(tl: TL, src: DeviceTensor, dst: DeviceTensor) {
      await tl.store(dst, await tl.exp(await tl.load(src, [4], "f32")));
    }
    await sim.launch(copy, { grid: { pes: 1 }, args: [X, Y] });
    await sim.copyToDevice(second, X);
    await sim.launch(copy, { grid: { pes: 1 }, args: [X, Z] });
    const exp = (t: Tensor) => Tensor.fromArray([...t.toFloat64Array()].map(Math.exp), [4], "f32");
    const report = await verifyOutcome(
      {
        check: {
          Y: { actual: Y, reference: () => exp(first) },
          Z: { actual: Z, reference: () => exp(second) },
        },
      },
      replay(sim.hostWrites, sink.records).store,
    );
    expect(report.outputs.map((o) => [o.name, o.pass])).toEqual([
      ["Y", true],
      ["Z", true],
    ]);
  });
});
