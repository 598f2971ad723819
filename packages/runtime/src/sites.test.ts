import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { TraceRecorder } from "@kb/components";
import { MemorySink, OpLogger, type OpRecord, opRecordSchema, opRecordToJson } from "@kb/oplog";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, RunResultsSchema, Simulator } from "./index.js";

/** default.yaml with the HBM interleaved by 64 KiB: a 32 KiB block lies in one pseudo-channel (docs/latency-model.md section 7). */
const yaml = readFileSync(
  fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url)),
  "utf8",
).replace("interleave_bytes: 256", "interleave_bytes: 65536");

/** The line of this file where `marker` is written (1-based). */
function lineOf(marker: string): string {
  const source = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
  const index = source.findIndex((text) => text.includes(marker) && !text.includes("lineOf("));
  return `packages/runtime/src/sites.test.ts:${index + 1}`;
}

async function twoLoadsAndADot(tl: TL, a: DeviceTensor, b: DeviceTensor): Promise<void> {
  const x = await tl.load(a, [128, 128], "f16"); // first load
  const y = await tl.load(b, [128, 128], "f16"); // second load
  await tl.dot(x, y); // the dot
}

describe("launches[].sites: per-line attribution", () => {
  it("two 32 KiB loads and a 128^3 f16 dot on one PE: each line's wait is its latency formula", async () => {
    const sim = await Simulator.fromTopology(yaml);
    const a = await sim.toDevice(sim.random([128, 128], "f16", { seed: 1 }));
    const b = await sim.toDevice(sim.random([128, 128], "f16", { seed: 2 }));
    const record = await sim.launch(twoLoadsAndADot, { grid: { pes: 1, cubes: 1 }, args: [a, b] });
    // By hand (docs/latency-model.md section 7): each load is PE_CPU dispatch 2 + a TLB miss 50
    // (a at hbm(0) is page 0, b at hbm(2 MiB) page 1) + the 32 KiB read from one PC 1322.06 =
    // 1374.06 ns + its PE_TCM write 1 + 32768 / 512 = 65: 1439.06 ns, the PE_DMA holding it from
    // the translation on (1437.06); the dot is dispatch 2 + its fetch of A and B (1 + 65536 / 512 =
    // 129) + the 128^3 f16 tile on pe_gemm_v1, (4 x 4 x 128 + 8) / 1 = 2056 ns + the store of its
    // f32 result (129): 2316 ns. The program's time is their sum, 5194.12 ns.
    const program = 1439.06 + 1439.06 + 2316;
    const sites = record.sites;
    expect(sites?.programNs).toBeCloseTo(program, 9);
    expect(sites?.lines.map((row) => row.line)).toEqual([
      lineOf("// the dot"),
      lineOf("// first load"),
      lineOf("// second load"),
    ]);
    const [dot, first, second] = sites?.lines ?? [];
    expect(dot).toMatchObject({
      calls: ["dot"],
      count: 1,
      waitNs: 2316,
      busyNs: { pe_gemm: 2056 },
      bytes: 0,
    });
    expect(dot?.share).toBeCloseTo(2316 / program, 12); // 44.6%
    for (const load of [first, second]) {
      expect(load).toMatchObject({ calls: ["load"], count: 1, bytes: 32768 });
      expect(load?.waitNs).toBeCloseTo(1439.06, 9);
      expect(load?.busyNs.pe_dma).toBeCloseTo(1437.06, 9);
      expect(load?.share).toBeCloseTo(1439.06 / program, 12); // 27.7%
    }
    // The results carry them, and the published schema accepts them.
    const results = RunResultsSchema.parse(sim.results());
    expect(results.launches[0]?.sites).toEqual(sites);
  });

  it("a logical grid: every program's calls count at their lines, and the waits add up to the programs' time", async () => {
    const tracer = new TraceRecorder();
    const sim = await Simulator.fromTopology(yaml, { tracer });
    async function spin(tl: TL): Promise<void> {
      await tl.cycles(100); // spin a
      await tl.cycles(300); // spin b
    }
    const record = await sim.launch(spin, { grid: { pes: 2, cubes: 1 }, programs: [5], args: [] });
    const [b, a] = record.sites?.lines ?? [];
    expect(a).toMatchObject({ line: lineOf("// spin a"), calls: ["cycles"], count: 5 });
    expect(b).toMatchObject({ line: lineOf("// spin b"), calls: ["cycles"], count: 5 });
    // tl.cycles(n) keeps the PE_CPU n cycles; b waits 3 x a's time in every program.
    expect(b?.waitNs).toBeCloseTo(3 * (a?.waitNs ?? 0), 9);
    // Each further program's start cycles (no line) count in the programs' time, not at a line.
    expect(record.sites?.programNs).toBeGreaterThan((a?.waitNs ?? 0) + (b?.waitNs ?? 0));
    // The tracer behind the tally still gets every event.
    expect(tracer.events.some((event) => event.type === "engine_complete")).toBe(true);
  });

  it("op records and trace slices carry the line whose call issued them", async () => {
    const sink = new MemorySink();
    const tracer = new TraceRecorder();
    const sim = await Simulator.fromTopology(yaml, { opLogger: new OpLogger(sink), tracer });
    const a = await sim.toDevice(sim.random([128, 128], "f16", { seed: 1 }));
    const b = await sim.toDevice(sim.random([128, 128], "f16", { seed: 2 }));
    await sim.launch(twoLoadsAndADot, { grid: { pes: 1, cubes: 1 }, args: [a, b] });
    // The kernel's dma_reads and its gemm name their lines.
    const kernelOps = sink.records.filter((record) => record.site !== undefined);
    expect(kernelOps.map((record) => [record.op_name, record.site])).toEqual([
      ["dma_read", lineOf("// first load")],
      ["dma_read", lineOf("// second load")],
      [expect.stringMatching(/^gemm/), lineOf("// the dot")],
    ]);
    // The record's site is part of its JSONL line, and the schema reads it back.
    const [first] = kernelOps;
    expect(opRecordToJson(first as OpRecord)).toContain(`,"site":"${lineOf("// first load")}"}`);
    expect(opRecordSchema.parse(JSON.parse(opRecordToJson(first as OpRecord))).site).toBe(
      lineOf("// first load"),
    );
    // Trace slices: the engine slices of the kernel's tiles name the line in args.site.
    const sited = tracer
      .toChromeTrace()
      .traceEvents.filter((event) => event.ph === "B" && event.args?.site !== undefined);
    expect(new Set(sited.map((event) => event.args?.site))).toEqual(
      new Set([lineOf("// first load"), lineOf("// second load"), lineOf("// the dot")]),
    );
  });

  it("sites: false leaves them out", async () => {
    const sim = await Simulator.fromTopology(yaml, { sites: false });
    async function spin(tl: TL): Promise<void> {
      await tl.cycles(10);
    }
    const record = await sim.launch(spin, { grid: { pes: 1, cubes: 1 }, args: [] });
    expect(record.sites).toBeUndefined();
  });
});
