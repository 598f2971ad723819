// Models report what they count: a memory model's or stage engine's stats() reach
// machine.stats().components[].stats, checked; hbm_ctrl_v2 publishes its row outcomes and
// commands per pseudo-channel.
import { readFileSync } from "node:fs";
import { BUILTIN_COMPONENTS, defaultRegistry } from "@kb/builtins";
import { KbError } from "@kb/errors";
import { MemoryHarness } from "@kb/probe";
import { hbmTopologyParams } from "@kb/spec";
import { encodeAddress, expandTopology, parseTopology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { hbm3Harness } from "../../builtins/src/hbm-v2/test-support.js";
import { type ComponentDefinition, defineComponent, definePlugin } from "./define.js";
import { buildMachine, type Machine } from "./machine.js";
import { defineMemoryModel, type MemoryRequest } from "./memory.js";
import type { ModelStat } from "./model-stats.js";
import { ComponentRegistry } from "./registry.js";
import { defineStageEngine, type StageEngineDefinition } from "./stage-engine.js";
import { graphFrom, topologyPath } from "./test-support.js";

// hbm3 with mapping RoBaBgSiPcCo4ChCo1 (as behaviour.test.ts): column bits from 10, bank from 18,
// row from 20; offsets below all land on port 0 (channel 0, pseudo-channel 0), bank 0.
const COL = (n: number) => n << 10;
const ROW = (n: number) => n << 20;

const hbmV2 = (params: Record<string, unknown> = {}): MemoryHarness => hbm3Harness(params);

/** One 32 B read (one burst) at `t` ns, run to completion. */
function readAt(h: MemoryHarness, t: number, offset: number): void {
  if (h.machine.env.now < t) h.machine.env.run(t);
  h.machine.run(h.request("read", offset, 32));
}

const statsOf = (machine: Machine, id: string): readonly ModelStat[] | undefined =>
  machine.stats().components.find((report) => report.id === id)?.stats;

const byName = (stats: readonly ModelStat[] | undefined) =>
  Object.fromEntries((stats ?? []).map((stat) => [stat.name, stat.total]));

describe("hbm_ctrl_v2's counters in machine.stats()", () => {
  it("two reads of one row, then another row of the same bank: a miss, a hit, a conflict; 2 ACT, 1 PRE, 3 RD", () => {
    const h = hbmV2();
    readAt(h, 0, ROW(0) + COL(0)); // bank 0 closed: ACT, RD (miss)
    readAt(h, 100, ROW(0) + COL(1)); // row 0 still open (open page): RD (hit)
    readAt(h, 200, ROW(1)); // row 0 open, row 1 wanted: PRE, ACT, RD (conflict)
    const stats = statsOf(h.machine, "sip0.cube0.hbm");
    expect(byName(stats)).toEqual({
      row_hits: 1,
      row_misses: 1,
      row_conflicts: 1,
      act: 2,
      pre: 1, // 2 ACTs, row 1 still open at the end
      rd: 3,
      wr: 0,
      ref: 0,
      write_drain_ns: 0,
      read_queue_mean: expect.any(Number),
      read_queue_max: 1, // one 32 B read at a time
      write_queue_mean: 0,
      write_queue_max: 0,
      active_ns: expect.any(Number),
    });
    // Per pseudo-channel: everything on port 0 of the 32.
    const act = stats?.find((stat) => stat.name === "act");
    expect(act?.unit).toBe("count");
    expect(act?.perPort).toHaveLength(32);
    expect(act?.perPort?.[0]).toBe(2);
    expect(act?.perPort?.slice(1).every((value) => value === 0)).toBe(true);
  });

  it("closed page: every run precharges itself, so the second read of the row misses again (2 ACT, 2 PRE)", () => {
    const h = hbmV2({ page_policy: "closed" });
    readAt(h, 0, ROW(0) + COL(0));
    readAt(h, 100, ROW(0) + COL(1));
    expect(byName(statsOf(h.machine, "sip0.cube0.hbm"))).toMatchObject({
      row_hits: 0,
      row_misses: 2,
      row_conflicts: 0,
      act: 2,
      pre: 2,
      rd: 2,
    });
  });

  it("writes count as WR and in the same row outcomes", () => {
    const h = hbmV2();
    h.machine.run(h.request("write", ROW(0), 64)); // two bursts of one row: one run, a miss
    expect(byName(statsOf(h.machine, "sip0.cube0.hbm"))).toMatchObject({
      row_misses: 1,
      act: 1,
      wr: 2,
      rd: 0,
    });
  });

  it("its definition declares the counters it publishes (kb components list)", () => {
    const hbm = BUILTIN_COMPONENTS.find((definition) => definition.impl === "hbm_ctrl_v2");
    expect(hbm?.counters?.map((counter) => counter.name)).toEqual([
      "row_hits",
      "row_misses",
      "row_conflicts",
      "act",
      "pre",
      "rd",
      "wr",
      "ref",
      "write_drain_ns",
      "read_queue_mean",
      "read_queue_max",
      "write_queue_mean",
      "write_queue_max",
      "active_ns",
    ]);
  });

  it("a model without counters adds no stats field (hbm_ctrl_v1: results as before)", () => {
    const h = new MemoryHarness(graphFrom({}));
    h.machine.run(h.request("read", 0, 64));
    const report = h.machine.stats().components.find((each) => each.id === "sip0.cube0.hbm");
    expect(report?.ops).toBe(1);
    expect(report && "stats" in report).toBe(false);
  });
});

/** A plug-in memory model on the harness's HBM whose stats() returns `stats`. */
function memoryPublishing(stats: () => unknown): MemoryHarness {
  const definition = defineMemoryModel({
    kind: "hbm_ctrl",
    impl: "counting",
    description: "Test model: 10 ns per request; publishes what the test gives it.",
    params: hbmTopologyParams,
    create: (context) => {
      const reads = new Array<number>(context.ports).fill(0);
      return {
        service(request) {
          reads[request.port] = (reads[request.port] as number) + 1;
          return { startNs: request.arrivalNs + 10, endNs: request.arrivalNs + 10 };
        },
        stats: () =>
          (stats() ?? [
            { name: "reads", unit: "count", description: "Reads.", total: sum(reads), perPort: reads },
          ]) as never,
      };
    },
  });
  const registry = new ComponentRegistry()
    .registerBuiltins(BUILTIN_COMPONENTS)
    .registerPlugin(definePlugin({ meta: { name: "test", version: "0" }, components: [definition] }));
  const graph = graphFrom({ cube: { hbm: { impl: "test:counting", channels: 2, pseudo_channels: 1 } } });
  const h = new MemoryHarness(graph, { registry });
  h.machine.run(h.request("read", 0, 64));
  return h;
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

describe("a plug-in memory model's stats()", () => {
  it("reaches machine.stats() as published (a copy: later counting does not change the report)", () => {
    const h = memoryPublishing(() => null);
    const stats = statsOf(h.machine, "sip0.cube0.hbm");
    expect(stats).toEqual([
      { name: "reads", unit: "count", description: "Reads.", total: 1, perPort: [1, 0] },
    ]);
  });

  it.each([
    ["not an array", () => ({ reads: 1 }), /stats\(\) returned \{"reads":1\}, not an array/],
    [
      "a name that is not snake_case",
      () => [{ name: "Row Hits", unit: "count", description: "x", total: 1 }],
      /\[0\]\.name is "Row Hits"/,
    ],
    ["a name twice", () => [stat("a"), stat("a")], /names "a" twice/],
    ["a NaN total", () => [{ ...stat("a"), total: Number.NaN }], /"a" has total NaN/],
    [
      "a non-finite perPort value",
      () => [{ ...stat("a"), perPort: [1, Number.POSITIVE_INFINITY] }],
      /"a" has perPort\[1\] Infinity/,
    ],
    ["no unit", () => [{ ...stat("a"), unit: "" }], /"a" has no unit/],
  ])("is a MACHINE_INVARIANT naming the impl and node when it returns %s", (_what, stats, message) => {
    const h = memoryPublishing(stats);
    let caught: unknown;
    try {
      h.machine.stats();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(KbError);
    expect((caught as KbError).code).toBe("MACHINE_INVARIANT");
    expect((caught as KbError).message).toMatch(/node sip0\.cube0\.hbm: hbm_ctrl test:counting: stats\(\) /);
    expect((caught as KbError).message).toMatch(message);
  });

  it("a stats that is not a function is refused when the model is created", () => {
    const definition = defineMemoryModel({
      kind: "hbm_ctrl",
      impl: "bad_stats",
      description: "Test model.",
      params: hbmTopologyParams,
      create: () =>
        ({
          service: (request: MemoryRequest) => ({ startNs: request.arrivalNs, endNs: request.arrivalNs }),
          stats: 3,
        }) as never,
    });
    const registry = new ComponentRegistry()
      .registerBuiltins(BUILTIN_COMPONENTS)
      .registerPlugin(definePlugin({ meta: { name: "test", version: "0" }, components: [definition] }));
    const graph = graphFrom({ cube: { hbm: { impl: "test:bad_stats", channels: 2, pseudo_channels: 1 } } });
    expect(() => new MemoryHarness(graph, { registry })).toThrow(/optionally stats\(\)/);
  });
});

const stat = (name: string): ModelStat => ({ name, unit: "count", description: "A counter.", total: 0 });

describe("a stage engine's stats(state, params)", () => {
  // A PE_MATH engine that counts, in its state, the MATH stages it timed by op.
  const spec = {
    kind: "pe_math",
    impl: "counting_math",
    description: "Test engine: 1 ns per element; counts stages per op.",
    params: z.strictObject({}),
    init: () => new Map<string, number>(),
    process: function* (token, context) {
      context.state.set(token.op, (context.state.get(token.op) ?? 0) + 1);
      yield context.env.timeout(token.elements);
    },
    stats: (state) => [
      { name: "exp_stages", unit: "count", description: "MATH stages of exp.", total: state.get("exp") ?? 0 },
    ],
    counters: [{ name: "exp_stages", unit: "count", description: "MATH stages of exp." }],
  } satisfies StageEngineDefinition<"pe_math", z.ZodObject, Map<string, number>>;
  const counting = defineStageEngine(spec);

  it("a process engine that counts in its state publishes through machine.stats()", () => {
    const machine = runWith(counting);
    // exp over 256 x 512 f16 in row tiles: the planner's tiles, one MATH stage each.
    const stages = machine.components.find((c) => c.id === "sip0.cube0.pe0.pe_math")?.stats.ops;
    expect(stages).toBeGreaterThan(0);
    expect(statsOf(machine, "sip0.cube0.pe0.pe_math")).toEqual([
      { name: "exp_stages", unit: "count", description: "MATH stages of exp.", total: stages },
    ]);
    // An engine of the same impl that ran nothing publishes 0 (it is still reported: it exists).
    expect(byName(statsOf(machine, "sip0.cube0.pe1.pe_math"))).toEqual({ exp_stages: 0 });
    // The built-ins around it publish none.
    expect(statsOf(machine, "sip0.cube0.pe0.pe_dma")).toBeUndefined();
  });

  it("stats that is not a function is refused at definition", () => {
    expect(() => defineStageEngine({ ...spec, stats: 1 as never })).toThrow(
      /stats\(state, params\) must be a function/,
    );
  });
});

describe("counters declared on a definition", () => {
  const base = {
    kind: "pe_cpu",
    impl: "x",
    description: "Test.",
    params: z.strictObject({}),
    create: () => {
      throw new Error("not created");
    },
  } as unknown as ComponentDefinition;

  it("are checked when the definition is made", () => {
    expect(() =>
      defineComponent({ ...base, counters: [{ name: "Hits", unit: "count", description: "x" }] }),
    ).toThrow(/counters: each needs a snake_case name/);
    expect(() =>
      defineComponent({ ...base, counters: [{ name: "hits", unit: "", description: "x" }] }),
    ).toThrow(/counters: "hits" needs a unit/);
    expect(defineComponent({ ...base, counters: [stat("hits")] }).counters).toEqual([stat("hits")]);
  });
});

/** default.yaml with `definition` on every node of its kind; exp over 256 x 512 f16 on PE 0. */
function runWith(definition: ComponentDefinition): Machine {
  const plugin = definePlugin({ meta: { name: "test", version: "0" }, components: [definition] });
  const path = topologyPath("default");
  const topology = parseTopology(readFileSync(path, "utf8"), path);
  const graph = expandTopology({
    ...topology,
    plugins: ["test"],
    overrides: [{ match: `sip*.cube*.pe*.${definition.kind}`, impl: `test:${definition.impl}` }],
  });
  const machine = buildMachine(graph, { registry: defaultRegistry([plugin]) });
  const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
  machine.run(
    machine.submit("sip0.cube0.pe0", [
      {
        kind: "composite_math",
        op: "exp",
        inputs: [hbm(0)],
        out: hbm(1 << 20),
        rows: 256,
        cols: 512,
        dtype: "f16",
      },
    ]),
  );
  return machine;
}
