import { describe, expect, it } from "vitest";
import { launchMarks, markAt, placeLabels } from "./timeline-marks-model.js";

const markers = [
  { tNs: 500, label: "launch_complete: gemm" },
  { tNs: 100, label: "launch: gemm" },
  { tNs: 600, label: "launch: gemm" },
  { tNs: 900, label: "launch_complete: gemm" },
];

describe("the timeline's launch markers", () => {
  it("numbers launches in time order and ties each end to its start", () => {
    const marks = launchMarks(markers);
    expect(marks.map((mark) => [mark.tNs, mark.at, mark.launch, mark.label])).toEqual([
      [100, "start", 1, "#1 gemm"],
      [500, "end", 1, "end #1"],
      [600, "start", 2, "#2 gemm"],
      [900, "end", 2, "end #2"],
    ]);
    expect(marks[0]?.text).toBe("launch #1 gemm: starts at 100 ns, ends at 500 ns (400 ns)");
    expect(marks[3]?.text).toBe("launch #2 gemm: ends at 900 ns (300 ns after its start)");
  });

  it("labels a marker where its label fits, starts first, never two labels overlapping", () => {
    const marks = launchMarks(markers);
    // 1 px per 10 ns; every label 30 px wide; a 6 px gap between labels.
    const xOf = (tNs: number) => tNs / 10;
    const placed = placeLabels(marks, xOf, 0, 200, () => 30);
    // Starts at x 10 (label 13..43) and 60 (63..93); end #1 at 50: right of it (53..83) overlaps
    // #2's label, left of it (17..47) #1's; end #2 at 90: right (93..123) is 0 px from #2's label
    // (needs 6), left (57..87) overlaps it. Neither end fits.
    expect(placed.map((label) => [label.mark.label, label.x])).toEqual([
      ["#1 gemm", 13],
      ["#2 gemm", 63],
    ]);
    // Wider apart (1 px per ns), all four fit; a label that would pass the right edge goes left
    // of its marker (end #2 at 900: 867..897).
    const wide = (t: number) => t;
    expect(placeLabels(marks, wide, 0, 1000, () => 30).length).toBe(4);
    const placed920 = placeLabels(marks, wide, 0, 920, () => 30);
    expect(placed920.map((label) => [label.mark.label, label.x])).toEqual([
      ["#1 gemm", 103],
      ["end #1", 503],
      ["#2 gemm", 603],
      ["end #2", 867],
    ]);
  });

  it("finds the marker under the pointer, within 3 px", () => {
    const marks = launchMarks(markers);
    expect(markAt(marks, 52, (t) => t / 10)?.label).toBe("end #1");
    expect(markAt(marks, 54, (t) => t / 10)).toBeNull();
  });
});
