import { readFileSync } from "node:fs";
import { defaultRegistry, gemmParams, macArrayNs, simdNs } from "@kb/builtins";
import { KbError } from "@kb/errors";
import { MemorySink, OpLogger, type OpRecord } from "@kb/oplog";
import { type PeCommand, type PluginComponent, defineStageEngine as specDefineStageEngine } from "@kb/spec";
import { encodeAddress, expandTopology, parseTopology, tcmAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { ComponentDefinition } from "./define.js";
import { definePlugin } from "./define.js";
import { gemmTimingOf } from "./gemm-timing.js";
import { buildMachine, type Machine } from "./machine.js";
import { TileToken } from "./message.js";
import { defineStageEngine, gemmWork, mathWork, StageEngine, type TileWork } from "./stage-engine.js";
import { topologyPath } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
const tcm = (offset: number) => tcmAddress(0, 0, 0, offset);

// 256^3 in 128^3 tiles: 8 GEMM tiles (2 K tiles each), a cast on each output tile's store.
const GEMM: readonly PeCommand[] = [
  {
    kind: "composite_gemm",
    a: hbm(0),
    b: hbm(1 << 20),
    c: hbm(2 << 20),
    m: 256,
    n: 256,
    k: 256,
    dtype: "f16",
  },
];
// exp over 256 x 512 f16 in row tiles.
const MATH: readonly PeCommand[] = [
  {
    kind: "composite_math",
    op: "exp",
    inputs: [hbm(0)],
    out: hbm(1 << 20),
    rows: 256,
    cols: 512,
    dtype: "f16",
  },
];

interface Run {
  readonly machine: Machine;
  readonly endNs: number;
  readonly records: readonly OpRecord[];
}

/** default.yaml with `definition` (a plug-in "test") on every node of its kind of PE 0..7. */
function run(definition: ComponentDefinition | PluginComponent | null, commands: readonly PeCommand[]): Run {
  const plugin =
    definition === null
      ? null
      : definePlugin({ meta: { name: "test", version: "0" }, components: [definition] });
  const sink = new MemorySink();
  const opLogger = new OpLogger(sink);
  const path = topologyPath("default");
  const topology = parseTopology(readFileSync(path, "utf8"), path);
  const graph = expandTopology(
    definition === null
      ? topology
      : {
          ...topology,
          plugins: ["test"],
          overrides: [{ match: `sip*.cube*.pe*.${definition.kind}`, impl: `test:${definition.impl}` }],
        },
  );
  const machine = buildMachine(graph, {
    registry: defaultRegistry(plugin === null ? [] : [plugin]),
    opLogger,
  });
  machine.run(machine.submit("sip0.cube0.pe0", commands));
  opLogger.close();
  return { machine, endNs: machine.env.now, records: sink.records };
}

const durations = (records: readonly OpRecord[], kind: string) =>
  records.filter((record) => record.op_kind === kind).map((record) => record.t_end - record.t_start);

/** pe_gemm_v1's formula as a timing function. */
const gemmV1AsTiming = defineStageEngine({
  kind: "pe_gemm",
  impl: "v1_again",
  analytic: true,
  description: "pe_gemm_v1's formula through defineStageEngine.",
  params: gemmParams,
  timing: ({ gemm }, p) => macArrayNs(p, gemm.m, gemm.n, gemm.k, gemm.dtype),
  array: (p) => ({ rows: p.mac_rows, cols: p.mac_cols, freqGhz: p.freq_ghz }),
  peak: (p) => ({
    flopsPerNs: (2 * p.mac_rows * p.mac_cols * p.freq_ghz) / Math.min(...Object.values(p.dtype_cycles), 1),
  }),
});

describe("defineStageEngine", () => {
  it("a timing function times like the built-in it copies: same end, op log, stats and GemmTiming", () => {
    const builtin = run(null, GEMM);
    const copy = run(gemmV1AsTiming, GEMM);
    expect(copy.endNs).toBe(builtin.endNs);
    expect(copy.records).toEqual(builtin.records);
    const engine = copy.machine.component("sip0.cube0.pe0.pe_gemm");
    const original = builtin.machine.component("sip0.cube0.pe0.pe_gemm");
    expect(engine).toBeInstanceOf(StageEngine);
    expect(engine.stats).toEqual(original.stats);
    expect(engine.stats.flops).toBe(8 * 2 * 128 ** 3);
    expect(engine.peak()).toEqual(original.peak());
    const timing = gemmTimingOf(engine);
    const stated = gemmTimingOf(original);
    expect(timing).toMatchObject({ macRows: 32, macCols: 32, freqGhz: 1, arrayCycles: stated?.arrayCycles });
    expect(timing?.gemmCycles(128, 128, 128, "f16")).toBe(2056);
    expect(timing?.gemmCycles(100, 20, 7, "f32")).toBe(stated?.gemmCycles(100, 20, 7, "f32"));
  });

  it("a PE_MATH timing function changes timing only; it may count flops of its own", () => {
    const flat = defineStageEngine({
      kind: "pe_math",
      impl: "flat_math",
      description: "Every op costs ns_per_element per element.",
      params: z.strictObject({ ns_per_element: z.number().positive().default(0.01) }),
      timing: (token, p) => ({ ns: token.elements * p.ns_per_element, flops: 3 * token.elements }),
    });
    const builtin = run(null, MATH);
    const plugin = run(flat, MATH);
    const ours = durations(plugin.records, "math");
    expect(ours.length).toBeGreaterThan(1);
    const elements = plugin.records
      .filter((record) => record.op_kind === "math")
      .map((record) => (record.params.shape_out as number[]).reduce((a, b) => a * b, 1))
      .reduce((a, b) => a + b, 0);
    expect(elements).toBe(256 * 512);
    expect(ours.reduce((a, b) => a + b, 0)).toBeCloseTo(256 * 512 * 0.01, 6);
    expect(plugin.endNs).not.toBe(builtin.endNs);
    expect(timeless(plugin.records)).toEqual(timeless(builtin.records));
    expect(plugin.machine.component("sip0.cube0.pe0.pe_math").stats.flops).toBe(3 * 256 * 512);
  });

  it("reads the token's work through typed accessors; gemmWork and mathWork build the same", () => {
    const seen: TileWork[] = [];
    const watch = (token: TileWork) => {
      seen.push(watchFields(token));
      return 1;
    };
    run(
      defineStageEngine({
        kind: "pe_gemm",
        impl: "g",
        description: "d",
        params: z.strictObject({}),
        timing: watch,
      }),
      GEMM,
    );
    run(
      defineStageEngine({
        kind: "pe_math",
        impl: "m",
        description: "d",
        params: z.strictObject({}),
        timing: watch,
      }),
      MATH,
    );
    const fetchStore: TileWork[] = [];
    run(
      defineStageEngine({
        kind: "pe_fetch_store",
        impl: "fs",
        description: "d",
        params: z.strictObject({}),
        timing: (token) => {
          fetchStore.push(watchFields(token));
          return token.bytes / 64;
        },
      }),
      GEMM,
    );
    expect(seen[0]).toEqual(gemmWork(128, 128, 128, "f16"));
    const exp = seen.find((work) => work.stageType === "math") as TileWork;
    const rows = (exp.math?.elements ?? 0) / 512;
    expect(exp).toEqual(mathWork("exp", rows * 512, "f16", 0));
    expect(exp.flops).toBe(rows * 512);
    // Fetch: A and B tiles of 128 x 128 f16; store: the f32 accumulator or the f16 result.
    expect(fetchStore[0]).toMatchObject({
      stageType: "fetch",
      op: "fetch",
      bytes: 2 * 128 * 128 * 2,
      dtype: null,
    });
    expect(fetchStore.some((work) => work.stageType === "store")).toBe(true);
    expect(mathWork("add+relu", 10, "f16").flops).toBe(20);
  });

  it("process: multi-step timing with per-instance state, on the compute slot", () => {
    const warm = defineStageEngine({
      kind: "pe_gemm",
      impl: "warm_gemm",
      description: "A cold first GEMM pays warmup_ns, then k ns per tile.",
      params: z.strictObject({ warmup_ns: z.number().default(500) }),
      init: () => ({ tiles: 0 }),
      process: function* (token, { env, params, state }) {
        if (state.tiles++ === 0) yield env.timeout(params.warmup_ns);
        yield env.timeout(token.gemm.k);
      },
    });
    const { records, machine } = run(warm, GEMM);
    expect(durations(records, "gemm")).toEqual([628, 128, 128, 128, 128, 128, 128, 128]);
    expect(machine.component("sip0.cube0.pe0.pe_gemm").stats).toMatchObject({
      ops: 8,
      flops: 8 * 2 * 128 ** 3,
    });
  });

  it("process written on @kb/spec alone (its SimEnvironment's timeouts) runs the same in the machine", () => {
    const warm = specDefineStageEngine({
      kind: "pe_gemm",
      impl: "warm_gemm",
      description: "A cold first GEMM pays warmup_ns, then k ns per tile.",
      params: z.strictObject({ warmup_ns: z.number().default(500) }),
      init: () => ({ tiles: 0 }),
      process: function* (token, { env, params, state, stats }) {
        if (state.tiles++ === 0) yield env.timeout(params.warmup_ns);
        yield env.timeout(token.gemm.k);
        stats.bytes += 1;
      },
      stats: (state) => [{ name: "tiles", unit: "count", description: "GEMM tiles.", total: state.tiles }],
    });
    const { records, machine } = run(warm, GEMM);
    // 500 ns warm-up + k = 128 ns on the first of 8 tiles, 128 ns on each other.
    expect(durations(records, "gemm")).toEqual([628, 128, 128, 128, 128, 128, 128, 128]);
    const engine = machine.component("sip0.cube0.pe0.pe_gemm");
    expect(engine.stats).toMatchObject({ ops: 8, flops: 8 * 2 * 128 ** 3, bytes: 8 });
    expect(engine.modelStats()).toEqual([
      { name: "tiles", unit: "count", description: "GEMM tiles.", total: 8 },
    ]);
  });

  it("holds the PE's compute slot shared with PE_MATH unless computeSlot is false", () => {
    const commands: readonly PeCommand[] = [
      {
        kind: "gemm",
        a: tcm(0),
        b: tcm(1 << 16),
        out: tcm(2 << 16),
        m: 128,
        n: 128,
        k: 128,
        dtype: "f16",
        async: true,
      },
      {
        kind: "math",
        op: "exp",
        inputs: [tcm(4 << 16)],
        shape: [128, 128],
        out: tcm(6 << 16),
        dtype: "f16",
        async: true,
      },
      { kind: "wait" },
    ];
    const math = (computeSlot: boolean) =>
      defineStageEngine({
        kind: "pe_math",
        impl: "simd",
        description: "pe_math_v1's formula.",
        params: z.strictObject({}),
        computeSlot,
        timing: ({ math: op }) =>
          simdNs(
            { freq_ghz: 1, lanes: 64, op_cycles: {}, overhead_cycles: 4, queue_depth: 4 },
            op.op,
            op.elements,
            op.reduceLength,
          ),
      });
    const [shared, separate] = [run(math(true), commands), run(math(false), commands)];
    const span = ({ records }: Run, kind: string) =>
      records.find((record) => record.op_kind === kind) as OpRecord;
    // exp of 128 x 128 on 64 lanes: 256 vectors x 4 cycles + 4 = 1028 ns, after the 2056 ns GEMM.
    expect(span(shared, "math").t_end - span(shared, "gemm").t_end).toBeCloseTo(1028, 9);
    expect(span(separate, "math").t_end).toBeLessThan(span(separate, "gemm").t_end);
  });

  it("fault: a plug-in's NaN or Infinity time is named as such, with the plug-in, node, method and time", () => {
    for (const [returned, shown] of [
      [Number.NaN, "NaN"],
      [Number.POSITIVE_INFINITY, "Infinity"],
      [{ ns: Number.NaN, flops: 1 }, '{"ns":NaN,"flops":1}'],
      [-1, "-1"],
      [undefined, "undefined"],
    ] as const) {
      const broken = defineStageEngine({
        kind: "pe_gemm",
        impl: "broken",
        description: "d",
        params: z.strictObject({}),
        timing: () => returned as never,
      });
      let error: unknown;
      try {
        run(broken, GEMM);
      } catch (caught) {
        error = caught;
      }
      expect((error as KbError).code).toBe("MACHINE_INVARIANT");
      expect((error as KbError).detail).toMatch(
        new RegExp(
          `^plug-in test:broken \\(sip0\\.cube0\\.pe\\d+\\.pe_gemm\\) returned ${shown.replace(/[{}()[\]]/g, "\\$&")} from timing\\(\\) at t=\\d+(\\.\\d+)? ns for gemm`,
        ),
      );
    }
  });

  it("checks the definition when it is made", () => {
    const base = { impl: "x", description: "d", params: z.strictObject({}) };
    const invalid = (definition: unknown) => () => defineStageEngine(definition as never);
    expect(invalid({ ...base, kind: "pe_dma", timing: () => 1 })).toThrow(
      /kind must be one of pe_gemm, pe_math, pe_fetch_store/,
    );
    expect(invalid({ ...base, kind: "pe_gemm" })).toThrow(/either timing/);
    expect(invalid({ ...base, kind: "pe_gemm", timing: () => 1, process: function* () {} })).toThrow(
      /either timing/,
    );
    expect(invalid({ ...base, kind: "pe_math", timing: () => 1, array: () => ({}) })).toThrow(
      /array states a PE_GEMM/,
    );
    expect(invalid({ ...base, kind: "pe_gemm", impl: "Bad-Name", timing: () => 1 })).toThrow(KbError);
  });

  it("TileToken's accessors are views: a token outside any machine reads its stage", () => {
    const token = new TileToken(
      {
        tileId: 3,
        stages: [
          {
            type: "gemm",
            component: null as never,
            params: { type: "gemm", m: 2, n: 3, k: 4, dtype: "bf16" },
            ops: [],
          },
        ],
      },
      null as never,
    );
    expect([
      token.tileId,
      token.stageType,
      token.op,
      token.dtype,
      token.elements,
      token.bytes,
      token.flops,
    ]).toEqual([3, "gemm", "gemm", "bf16", 6, 0, 48]);
    expect(token.gemm).toBe(token.stage.params);
    expect(token.math).toBeNull();
  });
});

/**
 * An op log without times and ids, in a canonical order: what two timing models must agree on
 * (a different timing may start the ops of different tiles in another order, renumbering them).
 */
function timeless(records: readonly OpRecord[]): string[] {
  const key = new Map<number, string>();
  for (const { id, component_id, op_kind, op_name, params } of records) {
    key.set(id, JSON.stringify({ component_id, op_kind, op_name, params }));
  }
  return records
    .map(
      (record) =>
        `${key.get(record.id)} after ${JSON.stringify(record.dependency_ids.map((id) => key.get(id)))}`,
    )
    .sort();
}

function watchFields(token: TileWork): TileWork {
  const { stageType, op, gemm, math, dtype, elements, bytes, flops } = token;
  return { stageType, op, gemm, math, dtype, elements, bytes, flops };
}
