import type { RunResults } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import type { WebResults } from "./api.js";
import { reportSeriesCharts } from "./report-series-model.js";

const entry = (label: string, series: NonNullable<RunResults["report"]>["series"]): WebResults => ({
  file: `${label}.json`,
  label,
  results: { report: { title: "t", columns: [], rows: [], series } } as unknown as RunResults,
});

describe("report series charts", () => {
  it("makes a chart per series name, a line per results file with its (time, value) points", () => {
    const charts = reportSeriesCharts([
      entry("A", [
        { name: "KV cache occupancy", unit: "% of blocks", x: [0, 100, 250], y: [12.5, 25, 0] },
        { name: "batch", unit: "sequences", x: [0, 100, 250], y: [2, 3, 0] },
      ]),
      entry("B", [{ name: "KV cache occupancy", unit: "% of blocks", x: [0, 80], y: [50, 0] }]),
      entry("C", undefined),
    ]);
    expect(charts).toEqual([
      {
        name: "KV cache occupancy",
        unit: "% of blocks",
        lines: [
          {
            name: "A",
            points: [
              [0, 12.5],
              [100, 25],
              [250, 0],
            ],
          },
          {
            name: "B",
            points: [
              [0, 50],
              [80, 0],
            ],
          },
        ],
      },
      {
        name: "batch",
        unit: "sequences",
        lines: [
          {
            name: "A",
            points: [
              [0, 2],
              [100, 3],
              [250, 0],
            ],
          },
        ],
      },
    ]);
  });
});
