import { BUILTIN_COMPONENTS, defaultRegistry } from "@kb/builtins";
import { type ComponentDefinition, definePlugin } from "@kb/components";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, RunResultsSchema, Simulator } from "./index.js";
import {
  BUILTIN_COUNTERS,
  implCounters,
  parseStatMetric,
  statMetricValue,
  statsOfBusiestModel,
} from "./model-stats.js";

// The results carry what the timing models count (components[].stats).

/** default.yaml's stack (8 channels x 2 PCs) timed by hbm_ctrl_v2 (hbm3: 32 B bursts), no refresh. */
const topology = {
  name: "model-stats",
  cube: {
    hbm: {
      impl: "hbm_ctrl_v2",
      preset: "hbm3",
      channels: 8,
      pseudo_channels: 2,
      pc_bw_gbs: 25.6,
      params: { refresh: "none" },
    },
  },
} as const;
const N = 256; // f32: 1 KiB per operand

async function vectorAdd(tl: TL, x: DeviceTensor, y: DeviceTensor, z: DeviceTensor) {
  const a = await tl.load(x, [N], "f32");
  const b = await tl.load(y, [N], "f32");
  await tl.store(z, await tl.add(a, b));
}

describe("components[].stats of the results", () => {
  it("a vector add on hbm_ctrl_v2: one RD or WR per 32 B burst, an ACT per miss or conflict (hand-computed)", async () => {
    const sim = await Simulator.fromTopology(topology);
    const x = await sim.toDevice(sim.random([N], "f32", { seed: 1 }));
    const y = await sim.toDevice(sim.random([N], "f32", { seed: 2 }));
    const z = sim.empty([N], "f32");
    await sim.launch(vectorAdd, { grid: { pes: 1, cubes: 1 }, args: [x, y, z] });
    await sim.fromDevice(z);
    const results = RunResultsSchema.parse(sim.results());
    const hbm = results.components.filter((row) => row.kind === "hbm_ctrl");
    expect(hbm.map((row) => row.id)).toEqual(["sip0.cube0.hbm"]);
    const stats = Object.fromEntries((hbm[0]?.stats ?? []).map((stat) => [stat.name, stat]));
    // Written: two 1 KiB copies in and the 1 KiB store (3072 B = 96 bursts of 32 B); read: the
    // two 1 KiB loads and the 1 KiB copy out (96 bursts).
    expect(results.work.hbmBytes).toBe(6144);
    expect(stats.wr?.total).toBe(96);
    expect(stats.rd?.total).toBe(96);
    expect(stats.ref?.total).toBe(0);
    // Every ACT is a miss (bank closed) or a conflict (another row open); PRE closes what ACT opened.
    const act = stats.act?.total ?? 0;
    expect(act).toBeGreaterThan(0);
    expect((stats.row_misses?.total ?? 0) + (stats.row_conflicts?.total ?? 0)).toBe(act);
    expect(stats.pre?.total).toBeLessThanOrEqual(act);
    // Per pseudo-channel, adding up to the total.
    expect(stats.rd?.perPort).toHaveLength(16);
    expect((stats.rd?.perPort ?? []).reduce((sum, value) => sum + value, 0)).toBe(96);
    // Only models that count publish: the HBM stack and the NOC routers (port_hop_v1: port waits,
    // credit stalls); the PEs' built-ins do not.
    expect(
      results.components
        .filter((row) => row.stats !== undefined && row.kind !== "noc_router")
        .map((row) => row.id),
    ).toEqual(["sip0.cube0.hbm"]);
    // The busiest model that publishes, and the counter as a sweep metric reads it.
    expect(statsOfBusiestModel(results.components)?.id).toBe("sip0.cube0.hbm");
    const metric = parseStatMetric("stats.hbm_ctrl.wr");
    expect(metric).toEqual({ selector: "hbm_ctrl", name: "wr" });
    expect(statMetricValue(results.components, metric as never)).toBe(96);
    expect(statMetricValue(results.components, { selector: "sip0.cube0.hbm", name: "rd" })).toBe(96);
    expect(statMetricValue(results.components, { selector: "hbm_ctrl", name: "credit_stalls" })).toBeNull();
  });

  it("hbm_ctrl_v1 (no counters): its row carries no stats field; routers that never waited have nothing to show", async () => {
    const sim = await Simulator.fromTopology({
      name: "v1",
      cube: { hbm: { channels: 8, pseudo_channels: 2 } },
    });
    await sim.fromDevice(await sim.toDevice(sim.random([N], "f32", { seed: 1 })));
    const results = sim.results();
    expect(results.components.length).toBeGreaterThan(0);
    expect(results.components.some((row) => row.kind === "hbm_ctrl" && "stats" in row)).toBe(false);
    // Whatever publishes here (the default NOC routers, port_hop_v1, when a copy crosses them)
    // counted nothing: no component for kb run's counters line.
    expect(results.components.every((row) => row.stats?.every((stat) => stat.total === 0) ?? true)).toBe(
      true,
    );
    expect(statsOfBusiestModel(results.components)).toBeNull();
    // A publisher whose counters are all zero is passed over; one that counted is taken.
    const zero = { id: "r0", kind: "noc_router", impl: "port_hop_v1", utilisation: 0.5 };
    const counted = { id: "r1", kind: "noc_router", impl: "port_hop_v1", utilisation: 0.1 };
    const stat = (total: number) => [{ name: "port_wait_ns", unit: "ns", total, description: "Waits." }];
    expect(statsOfBusiestModel([{ ...zero, stats: stat(0) }])).toBeNull();
    expect(
      statsOfBusiestModel([
        { ...zero, stats: stat(0) },
        { ...counted, stats: stat(3) },
      ])?.id,
    ).toBe("r1");
  });
});

describe("a model counter as a metric path", () => {
  it.each([
    ["simTimeNs", null],
    ["stats.hbm_ctrl_v2.row_hits", { selector: "hbm_ctrl_v2", name: "row_hits" }],
    ["stats.sip0.cube0.hbm.act", { selector: "sip0.cube0.hbm", name: "act" }],
  ])("%s", (path, expected) => {
    expect(parseStatMetric(path)).toEqual(expected);
  });

  it.each(["stats.row_hits", "stats..row_hits", "stats.hbm_ctrl.Row-Hits", "stats.hbm_ctrl."])(
    "%s says how to write one",
    (path) => {
      expect(parseStatMetric(path)).toMatch(/write stats\.<component id \| kind \| impl>\.<counter>/);
    },
  );
});

describe("the counters a registry's impls declare", () => {
  it("names each impl's counters as a topology writes it, plug-ins included", () => {
    const rowHits = { name: "row_hits", unit: "count", description: "Reads and writes to an open row." };
    const plugin = definePlugin({
      meta: { name: "kb-plugin-counting", version: "1.0.0" },
      components: [
        {
          ...(BUILTIN_COMPONENTS.find((d) => d.impl === "hbm_ctrl_v1") as ComponentDefinition),
          counters: [rowHits],
        },
      ],
    });
    const counters = implCounters(defaultRegistry([plugin]));
    expect(counters.get("kb-plugin-counting:hbm_ctrl_v1")).toEqual([rowHits]);
    expect(counters.get("hbm_ctrl_v1")).toEqual([]);
    expect(counters.get("hbm_ctrl_v2")?.map((counter) => counter.name)).toContain("row_hits");
    expect([...BUILTIN_COUNTERS.keys()].sort()).toEqual(BUILTIN_COMPONENTS.map((d) => d.impl).sort());
  });
});
