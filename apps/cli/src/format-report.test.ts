import { describe, expect, it } from "vitest";
import { formatReport } from "./format-run.js";

describe("formatReport", () => {
  it("prints the table, then a line per series over simulated time with its span, min, mean and max", () => {
    const text = formatReport({
      title: "serve",
      columns: ["figure", "value"],
      rows: [["TTFT p50", 12.5]],
      series: [{ name: "KV cache occupancy", unit: "% of blocks", x: [0, 1500, 2_000_000], y: [10, 30, 0] }],
    });
    expect(text).toBe(
      [
        "serve",
        "    figure  value",
        "  TTFT p50   12.5",
        "  KV cache occupancy (% of blocks): 3 points from t = 0 ns to 2 ms, min 0, mean 13.33, max 30",
        "  (the series' points: --json report.series; kb web charts them)",
        "",
      ].join("\n"),
    );
  });

  it("prints no series lines for a report without series", () => {
    expect(formatReport({ title: "t", columns: ["a"], rows: [[1]] })).toBe("t\n  a\n  1\n");
  });
});
