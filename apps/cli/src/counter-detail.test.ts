import { describe, expect, it } from "vitest";
import { formatCounterDetail } from "./counter-detail.js";

// kb run's model counters go on with the row-buffer hit rate and the busiest pseudo-channel's
// counts (issue 37 point 5), from `components[].stats`.

const stat = (name: string, perPort: number[]) => ({
  name,
  unit: "count",
  description: "A counter.",
  total: perPort.reduce((sum, value) => sum + value, 0),
  perPort,
});

describe("formatCounterDetail", () => {
  it("an HBM stack: the hit rate over every run's first command, then the pseudo-channel with the most RD + WR and its counts", () => {
    const row = {
      kind: "hbm_ctrl",
      stats: [
        stat("row_hits", [30, 10, 5]),
        stat("row_misses", [10, 4, 5]),
        stat("row_conflicts", [0, 6, 5]),
        stat("act", [10, 10, 10]),
        stat("pre", [9, 9, 10]),
        stat("rd", [100, 1200, 300]),
        stat("wr", [50, 0, 1000]),
        stat("ref", [2, 2, 2]),
      ],
    };
    // Hits 45 of 45 + 19 + 11 = 75 runs: 60%. Busiest by RD + WR: pc2 (1300) before pc1 (1200).
    expect(formatCounterDetail(row)).toEqual([
      "  row-buffer hit rate 60.0% (45 row hits of 75 runs: hits, misses, conflicts)",
      "  busiest pc2 (most RD + WR): row_hits 5, row_misses 5, row_conflicts 5, act 10, pre 10, rd 300, wr 1,000, ref 2",
    ]);
  });

  it("without hit counters or per-port values: nothing; ties go to the lowest port; another kind's port is portN", () => {
    expect(
      formatCounterDetail({ kind: "x", stats: [{ name: "a", unit: "ns", description: "A.", total: 3 }] }),
    ).toEqual([]);
    expect(formatCounterDetail({ kind: "x", stats: [stat("rd", [4, 4]), stat("wr", [0, 0])] })).toEqual([
      "  busiest port0 (most RD + WR): rd 4, wr 0",
    ]);
    expect(formatCounterDetail({ kind: "x", stats: [stat("stalls", [1, 7])] })).toEqual([
      "  busiest port1 (the most counted): stalls 7",
    ]);
    // No run at all: no rate (not 0%).
    expect(
      formatCounterDetail({ kind: "hbm_ctrl", stats: [stat("row_hits", [0]), stat("row_misses", [0])] })[0],
    ).toBe("  row-buffer hit rate - (no runs)");
  });
});
