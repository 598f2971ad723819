import { describe, expect, it } from "vitest";
import type { SweepWebRow } from "./sweep-api.js";
import {
  axisColours,
  cellText,
  logScaleOf,
  metricDirection,
  NO_VALUE_COLOUR,
  numericMetrics,
  parallelModel,
  paretoFront,
  runHint,
  scatterModel,
  sortRows,
  sweepColumns,
} from "./sweep-model.js";

/** A row of a sweep over `tile` with metrics `time_ns` and `gbs`. */
function row(
  point: number,
  metrics: SweepWebRow["metrics"],
  values: Record<string, unknown> = { tile: point },
  status: "ok" | "failed" = "ok",
): SweepWebRow {
  return {
    point,
    key: `key${point}`,
    status,
    reason: status === "failed" ? "out of memory" : null,
    digest: status === "failed" ? null : `digest${point}`,
    values,
    metrics,
    cached: false,
  };
}

describe("metricDirection", () => {
  it("maximises bandwidths, utilisations, efficiencies and fractions; minimises times and the rest", () => {
    expect(metricDirection("busbw_gbs")).toBe("max");
    expect(metricDirection("hbmUtilisation")).toBe("max");
    expect(metricDirection("gemm_fraction")).toBe("max");
    expect(metricDirection("bandwidth")).toBe("max");
    expect(metricDirection("energy_efficiency")).toBe("max");
    expect(metricDirection("tflops")).toBe("max");
    expect(metricDirection("time_ns")).toBe("min");
    expect(metricDirection("latency_us")).toBe("min");
    expect(metricDirection("simTimeNs")).toBe("min");
    expect(metricDirection("cycles")).toBe("min");
  });

  it("minimises energy, power and their products (a time-energy front); maximises work per joule or watt", () => {
    for (const name of [
      "energy_j",
      "energy_uj",
      "power_w",
      "edp",
      "j_per_token",
      "hbm_energy_pj",
      "dynamicJ",
    ]) {
      expect(metricDirection(name), name).toBe("min");
    }
    for (const name of ["tokens_per_j", "tokensPerJoule", "ops_per_w", "perf_per_watt", "macs_per_uj"]) {
      expect(metricDirection(name), name).toBe("max");
    }
  });
});

describe("paretoFront", () => {
  it("minimising both: the points no other beats in both coordinates", () => {
    // (1,5) (2,3) (4,1) trade off; (3,4) is beaten by (2,3); (5,5) by all three.
    const points = [
      [3, 4],
      [1, 5],
      [5, 5],
      [2, 3],
      [4, 1],
    ] as const;
    expect(paretoFront(points, ["min", "min"])).toEqual([false, true, false, true, true]);
  });

  it("minimise x, maximise y: time against bandwidth", () => {
    // (10, 50) fastest; (20, 80) more bandwidth; (30, 70) slower and less than (20, 80); (40, 90) most.
    const points = [
      [10, 50],
      [20, 80],
      [30, 70],
      [40, 90],
    ] as const;
    expect(paretoFront(points, ["min", "max"])).toEqual([true, true, false, true]);
    // Maximising both, only (40, 90) is left.
    expect(paretoFront(points, ["max", "max"])).toEqual([false, false, false, true]);
  });

  it("ties: twins of a front point are on it; an equal x or y with a worse other coordinate is not", () => {
    // (1,2) twice: both on the front. (1,3): same x, worse y. (2,2): same y, worse x. (0,9): best x.
    const points = [
      [1, 2],
      [1, 3],
      [2, 2],
      [1, 2],
      [0, 9],
    ] as const;
    expect(paretoFront(points, ["min", "min"])).toEqual([true, false, false, true, true]);
  });

  it("a lone point is the front; none gives none", () => {
    expect(paretoFront([[7, 7]], ["max", "min"])).toEqual([true]);
    expect(paretoFront([], ["min", "min"])).toEqual([]);
  });
});

describe("scatterModel", () => {
  const rows = [
    row(0, { time_ns: 300, gbs: 10 }),
    row(1, { time_ns: 200, gbs: 5 }),
    row(2, { time_ns: 100, gbs: 1 }, { tile: 2 }, "failed"),
    row(3, { time_ns: 250, gbs: 4 }),
    row(4, { time_ns: null, gbs: 20 }),
  ];

  it("keeps failed rows and rows without numbers off the plot and off the front", () => {
    // Point 2 would beat every time but failed; point 4 has no time. Of 0, 1, 3: 3 (250, 4) is
    // beaten by 1 (200, 5); 0 and 1 trade time for bandwidth.
    const model = scatterModel(rows, "time_ns", "gbs", ["min", "max"]);
    expect(model.front.map((point) => point.row.point)).toEqual([1, 0]);
    expect(model.others.map((point) => point.row.point)).toEqual([3]);
    expect(model.failed.map((failed) => failed.point)).toEqual([2]);
    expect(model.missing.map((missing) => missing.point)).toEqual([4]);
  });

  it("numericMetrics lists the metrics an ok row has a number for", () => {
    const withText = [row(0, { time_ns: 5, bound: "latency", gbs: null }), row(1, { gbs: 3 }, {}, "failed")];
    expect(numericMetrics({ metrics: ["bound", "gbs", "time_ns"], rows: withText })).toEqual(["time_ns"]);
  });
});

describe("logScaleOf", () => {
  it("offers a log scale for positive values and suggests it from three decades on", () => {
    // 1 KiB .. 4 MiB: 4096 = 10^3.6, rounded to 4 decades.
    expect(logScaleOf([1024, 16384, 262144, 4194304])).toEqual({
      possible: true,
      suggested: true,
      why: "values span 4 decades",
    });
    expect(logScaleOf([10, 200, 9999])).toMatchObject({ possible: true, suggested: false });
    expect(logScaleOf([0, 5, 5000])).toEqual({
      possible: false,
      suggested: false,
      why: "a value is 0: a log scale needs values > 0",
    });
    expect(logScaleOf([])).toMatchObject({ possible: false });
  });
});

describe("runHint", () => {
  it("says a cached point opens, and why another does not", () => {
    const cached = { ...row(0, {}), cached: true };
    expect(runHint(cached, "/c")).toBe("click to open its run");
    expect(runHint(row(1, {}), null)).toContain("run with --cache DIR to open runs");
    expect(runHint(row(2, {}, {}, "failed"), "/c")).toBe("failed: no run to open");
    expect(runHint(row(3, {}), "/c")).toContain("no results of this point in /c");
  });
});

describe("table", () => {
  const rows = [
    row(0, { time_ns: 300, bound: "latency" }, { hbm: "hbm3", pes: [2, 4] }),
    row(1, { time_ns: 200, bound: "compute" }, { hbm: "hbm2e", pes: [4, 4] }),
    row(2, { time_ns: null, bound: null }, { hbm: "hbm3e", pes: [2, 4] }, "failed"),
    row(3, { time_ns: 200, bound: "compute" }, { hbm: "hbm10", pes: [4, 8] }),
  ];
  const data = { axes: ["hbm", "pes"], metrics: ["time_ns", "bound"], rows };

  it("has point, status, axes, metrics and reason columns, numeric where every value is a number", () => {
    expect(sweepColumns(data).map((column) => `${column.id}${column.numeric ? "#" : ""}`)).toEqual([
      "point#",
      "status",
      "axis:hbm",
      "axis:pes",
      "metric:time_ns#",
      "metric:bound",
      "reason",
    ]);
  });

  it("sorts numbers by value, text naturally, missing values last, ties by point", () => {
    const points = (sorted: SweepWebRow[]) => sorted.map((sortedRow) => sortedRow.point);
    expect(points(sortRows(rows, "metric:time_ns", false))).toEqual([1, 3, 0, 2]);
    expect(points(sortRows(rows, "metric:time_ns", true))).toEqual([0, 1, 3, 2]);
    // hbm2e < hbm3 < hbm3e < hbm10 (numeric collation).
    expect(points(sortRows(rows, "axis:hbm", false))).toEqual([1, 0, 2, 3]);
    expect(points(sortRows(rows, "status", true))).toEqual([0, 1, 3, 2]);
  });

  it("shows lists as JSON and fractions to 6 significant digits", () => {
    expect(cellText([2, 4])).toBe("[2,4]");
    expect(cellText(0.123456789)).toBe("0.123457");
    expect(cellText(1024)).toBe("1024");
    expect(cellText(null)).toBe("");
  });

  it("fault: shows numbers of any magnitude (a metric of 1.5e-200 once threw in the formatter)", () => {
    expect(cellText(1.5e-200)).toBe("1.5e-200");
    expect(cellText(1e300)).toBe("1e+300");
  });

  it("parallel coordinates: categories for text and list axes, values for numbers, ok rows only", () => {
    const model = parallelModel(data);
    expect(model.dimensions).toEqual([
      { name: "hbm", source: "axis", categories: ["hbm3", "hbm2e", "hbm10"] },
      { name: "pes", source: "axis", categories: ["[2,4]", "[4,4]", "[4,8]"] },
      { name: "time_ns", source: "metric", categories: null },
      { name: "bound", source: "metric", categories: ["latency", "compute"] },
    ]);
    expect(model.rows.map((drawn) => drawn.point)).toEqual([0, 1, 3]);
    expect(model.values[0]).toEqual(["hbm3", "[2,4]", 300, "latency"]);
  });
});

describe("axisColours", () => {
  it("gives each value of the axis its own colour, numbers in ascending order, grey without a value", () => {
    const rows = [
      row(0, {}, { tile: 128, dtype: "f16" }),
      row(1, {}, { tile: 32, dtype: "f32" }),
      row(2, {}, { tile: 64, dtype: "f16" }),
      row(3, {}, { dtype: "f16" }),
    ];
    const byTile = axisColours(rows, "tile");
    expect(byTile.legend.map((entry) => entry.value)).toEqual(["32", "64", "128"]);
    expect(new Set(byTile.legend.map((entry) => entry.colour)).size).toBe(3);
    expect(byTile.colourOf(rows[1] as SweepWebRow)).toBe(byTile.legend[0]?.colour);
    expect(byTile.colourOf(rows[0] as SweepWebRow)).toBe(byTile.legend[2]?.colour);
    expect(byTile.colourOf(rows[3] as SweepWebRow)).toBe(NO_VALUE_COLOUR);
    const byDtype = axisColours(rows, "dtype");
    expect(byDtype.legend.map((entry) => entry.value)).toEqual(["f16", "f32"]);
    expect(byDtype.colourOf(rows[0] as SweepWebRow)).toBe(byDtype.colourOf(rows[2] as SweepWebRow));
  });
});
