import { readFileSync } from "node:fs";
import { type RunResults, RunResultsSchema } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { modelCounterRows } from "./results-model.js";
import { metricDirection, numericMetrics } from "./sweep-model.js";

const fixture = (name: string): RunResults =>
  RunResultsSchema.parse(JSON.parse(readFileSync(new URL(`__fixtures__/${name}`, import.meta.url), "utf8")));

describe("modelCounterRows", () => {
  it("lists each published counter with its total and busiest and idlest pseudo-channel", () => {
    const results = fixture("gemm-256.results.json");
    const hbm = results.components.find((row) => row.kind === "hbm_ctrl");
    if (hbm === undefined) throw new Error("the fixture has no HBM controller");
    const withStats: RunResults = {
      ...results,
      components: results.components.map((row) =>
        row.id === hbm.id
          ? {
              ...row,
              stats: [
                {
                  name: "row_hits",
                  unit: "count",
                  description: "Row hits.",
                  total: 7,
                  perPort: [1, 5, 0, 1],
                },
                { name: "stall_ns", unit: "ns", description: "Stalled.", total: 2.5 },
              ],
            }
          : row,
      ),
    };
    expect(modelCounterRows(withStats)).toEqual([
      {
        component: hbm.id,
        impl: hbm.impl,
        name: "row_hits",
        unit: "count",
        description: "Row hits.",
        total: 7,
        ports: { max: 5, maxAt: "pc1", min: 0, minAt: "pc2" },
      },
      {
        component: hbm.id,
        impl: hbm.impl,
        name: "stall_ns",
        unit: "ns",
        description: "Stalled.",
        total: 2.5,
        ports: null,
      },
    ]);
  });

  it("is empty for results without counters (every results file written before them)", () => {
    expect(modelCounterRows(fixture("gemm-256.results.json"))).toEqual([]);
  });
});

describe("a model counter as a sweep metric on the sweep page", () => {
  it("plots like any numeric metric; row hits are better high, conflicts low", () => {
    const row = (point: number, hits: number | null) => ({
      point,
      key: `k${point}`,
      status: "ok" as const,
      cached: false,
      reason: null,
      digest: null,
      values: { page: point === 0 ? "open" : "closed" },
      metrics: { time_ns: 100 + point, row_hits: hits, row_conflicts: 3 },
    });
    expect(
      numericMetrics({ metrics: ["time_ns", "row_hits", "row_conflicts"], rows: [row(0, 12), row(1, 0)] }),
    ).toEqual(["time_ns", "row_hits", "row_conflicts"]);
    // A counter no point's model published (null everywhere) is not offered.
    expect(numericMetrics({ metrics: ["row_hits"], rows: [row(0, null)] })).toEqual([]);
    expect(metricDirection("row_hits")).toBe("max");
    expect(metricDirection("row_conflicts")).toBe("min");
  });
});
