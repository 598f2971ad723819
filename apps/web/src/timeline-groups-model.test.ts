import { describe, expect, it } from "vitest";
import { groupBusy, groupOf, timelineRows, trackBusy, windowShare } from "./timeline-groups-model.js";

const tracks = [
  { name: "sip0.io_cpu", group: "sip0" },
  { name: "sip0.cube0.hbm#0", group: "sip0.cube0" },
  { name: "sip0.cube0.pe0.pe_gemm", group: "sip0.cube0" },
  { name: "sip0.cube1.pe0.pe_gemm", group: "sip0.cube1" },
  { name: "sip1.cube0.hbm#0", group: "sip1.cube0" },
  { name: "host", group: "host" },
];

describe("the timeline's track groups", () => {
  it("groups a track by its cube, its SIP or its component kind", () => {
    const gemm = tracks[3] as (typeof tracks)[number];
    expect(groupOf(gemm, "cube")).toBe("sip0.cube1");
    expect(groupOf(gemm, "sip")).toBe("sip0");
    expect(groupOf(gemm, "kind")).toBe("pe_gemm");
    expect(groupOf(tracks[5] as (typeof tracks)[number], "sip")).toBe("host");
  });

  it("puts a header row before each group's tracks, groups in order of their first track", () => {
    expect(timelineRows(tracks, "kind", new Set())).toEqual([
      { kind: "group", key: "io_cpu", tracks: [0], collapsed: false },
      { kind: "track", track: 0 },
      { kind: "group", key: "hbm", tracks: [1, 4], collapsed: false },
      { kind: "track", track: 1 },
      { kind: "track", track: 4 },
      { kind: "group", key: "pe_gemm", tracks: [2, 3], collapsed: false },
      { kind: "track", track: 2 },
      { kind: "track", track: 3 },
      { kind: "group", key: "host", tracks: [5], collapsed: false },
      { kind: "track", track: 5 },
    ]);
  });

  it("a collapsed group is its header alone; a filter keeps only its tracks and their groups", () => {
    const rows = timelineRows(tracks, "sip", new Set(["sip0"]), new Set([2, 4]));
    expect(rows).toEqual([
      { kind: "group", key: "sip0", tracks: [2], collapsed: true },
      { kind: "group", key: "sip1", tracks: [4], collapsed: false },
      { kind: "track", track: 4 },
    ]);
    expect(timelineRows(tracks, "none", new Set(), new Set([5, 1]))).toEqual([
      { kind: "track", track: 1 },
      { kind: "track", track: 5 },
    ]);
  });

  it("a group's busy bar is the mean of its tracks' in each column", () => {
    // 3 tracks x 4 columns: the group of tracks 0 and 2.
    const busy = new Uint8Array([255, 0, 100, 1, 9, 9, 9, 9, 255, 0, 0, 0]);
    // Column 3: (1 + 0) / 2 rounds to 1 (a touched column shows); column 1: nothing.
    expect([...groupBusy(busy, 4, [0, 2])]).toEqual([255, 0, 50, 1]);
  });

  it("states a track's busy share over the window shown: the mean of its columns", () => {
    // Track 1 of 4 columns busy all of one: 255 / (4 x 255) = 0.25.
    const busy = new Uint8Array([0, 0, 0, 0, 255, 0, 0, 0]);
    expect(windowShare(trackBusy(busy, 4, 1))).toBe(0.25);
    expect(windowShare([255, 0, 255, 0])).toBe(0.5);
    expect(windowShare([])).toBe(0);
  });
});
