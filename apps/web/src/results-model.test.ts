import { readFileSync } from "node:fs";
import { type RunResults, RunResultsSchema } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import type { WebTimeline } from "./api.js";
import {
  bandwidthByKind,
  compareHeadlines,
  compareKinds,
  compareLaunches,
  hbmBandwidthByCube,
  utilisationByKind,
  verdictLines,
} from "./results-model.js";

const results = (name: string): RunResults =>
  RunResultsSchema.parse(JSON.parse(readFileSync(new URL(`__fixtures__/${name}`, import.meta.url), "utf8")));
const a = results("gemm-256.results.json");
const b = results("gemm-512.results.json");

describe("comparison of two results files", () => {
  it("puts the headline numbers side by side with B / A", () => {
    const rows = compareHeadlines(a, b);
    expect(rows.map((row) => row.label)).toEqual([
      "simulated time",
      "achieved FLOP/s",
      "HBM bytes/s",
      "GEMM of peak",
      "HBM of peak",
      "roofline time",
      "events",
    ]);
    expect(rows[0]).toEqual({
      label: "simulated time",
      unit: "ns",
      a: a.simTimeNs,
      b: b.simTimeNs,
      ratio: b.simTimeNs / a.simTimeNs,
    });
    expect(rows[1]?.ratio).toBeCloseTo(b.achieved.flopsPerS / a.achieved.flopsPerS, 12);
    expect(rows[2]?.ratio).toBeCloseTo(b.achieved.hbmBytesPerS / a.achieved.hbmBytesPerS, 12);
  });

  it("has no ratio where A is 0", () => {
    const idle = { ...a, achieved: { ...a.achieved, flopsPerS: 0 } };
    expect(compareHeadlines(idle, b)[1]?.ratio).toBeNull();
  });

  it("compares utilisation over the kinds either run used, a kind only one used without a ratio", () => {
    const onlyInB = {
      ...b,
      byKind: [
        ...b.byKind,
        { ...(b.byKind[0] as RunResults["byKind"][number]), kind: "extra", ops: 3, utilisation: 0.5 },
      ],
    };
    const rows = compareKinds(a, onlyInB);
    const gemm = rows.find((row) => row.label === "pe_gemm");
    const utilA = a.byKind.find((kind) => kind.kind === "pe_gemm")?.utilisation as number;
    const utilB = b.byKind.find((kind) => kind.kind === "pe_gemm")?.utilisation as number;
    expect(gemm).toEqual({ label: "pe_gemm", unit: "fraction", a: utilA, b: utilB, ratio: utilB / utilA });
    expect(rows.find((row) => row.label === "extra")).toEqual({
      label: "extra",
      unit: "fraction",
      a: null,
      b: 0.5,
      ratio: null,
    });
    expect(rows.map((row) => row.label)).toEqual([...rows.map((row) => row.label)].sort());
  });
});

describe("per-kind values", () => {
  it("utilisation of the kinds that serviced anything, by name", () => {
    const values = utilisationByKind(a);
    expect(values.map((value) => value.kind)).toEqual(
      a.byKind
        .filter((kind) => kind.ops > 0)
        .map((kind) => kind.kind)
        .sort(),
    );
  });

  it("bandwidth is bytes over simulated time in GB/s", () => {
    const hbm = bandwidthByKind(a).find((value) => value.kind === "hbm_ctrl");
    const bytes = a.byKind.find((kind) => kind.kind === "hbm_ctrl")?.bytes as number;
    expect(hbm?.value).toBeCloseTo(bytes / a.simTimeNs, 12);
    expect(bandwidthByKind(a).every((value) => value.value > 0)).toBe(true);
  });
});

describe("hbmBandwidthByCube", () => {
  const timeline = (counters: WebTimeline["counters"]): WebTimeline => ({
    file: "t.json",
    label: "t.json",
    endNs: 100,
    tracks: [],
    totalSlices: 0,
    markers: [],
    counters,
  });

  it("sums the latest point of every lane of a cube at each change, a point holding until the next", () => {
    const series = hbmBandwidthByCube(
      timeline([
        { name: "HBM GB/s", track: "sip0.cube0.hbm#0", points: [10, 4, 30, 1] },
        { name: "HBM GB/s", track: "sip0.cube0.hbm#1", points: [20, 2] },
        { name: "HBM GB/s", track: "sip0.cube1.hbm#0", points: [5, 8, 2000, 3] },
        { name: "queue depth", track: "sip0.cube0.xbar0", points: [1, 9] },
      ]),
    );
    expect(series).toEqual([
      {
        name: "sip0.cube0",
        points: [
          [10, 4],
          [20, 6],
          [30, 3],
        ],
      },
      {
        name: "sip0.cube1",
        points: [
          [5, 8],
          [2000, 3],
        ],
      },
    ]);
  });

  it("sums counters the server binned (binNs) bin by bin, over the whole run", () => {
    const series = hbmBandwidthByCube(
      timeline([
        { name: "HBM GB/s", track: "sip0.cube0.hbm#0", points: [1, 2, 0], binNs: 500 },
        { name: "HBM GB/s", track: "sip0.cube0.hbm#1", points: [0, 3, 4], binNs: 500 },
      ]),
    );
    expect(series).toEqual([
      {
        name: "sip0.cube0",
        points: [
          [0, 1],
          [500, 5],
          [1000, 4],
        ],
      },
    ]);
  });

  it("is empty without HBM counters", () => {
    expect(hbmBandwidthByCube(timeline([]))).toEqual([]);
  });
});

describe("bottleneck verdicts and launches", () => {
  it("one line per launch: its verdict, or null in results written before verdicts", () => {
    const hotspot = results("gemm-256-hotspot.results.json");
    expect(
      verdictLines([
        { label: "hot.json", results: hotspot },
        { label: "b.json", results: b },
      ]),
    ).toEqual([
      {
        file: "hot.json",
        launch: "gemm",
        text: "bound by sip0.cube0.hbm pseudo-channel 0: 97% busy while the other 15 average 9% (address mapping hotspot)",
        utilisation: 0.97,
      },
      { file: "b.json", launch: "gemm", text: null, utilisation: null },
    ]);
  });

  it("compares launches by position: kernel window time, B / A", () => {
    // gemm-256: 7172.4 .. 12649.78 ns; gemm-512: 9412.4 .. 15293.78 ns.
    const [row] = compareLaunches(a, b);
    expect(row?.label).toBe("launch 1: gemm time");
    expect(row?.a).toBeCloseTo(5477.38, 6);
    expect(row?.b).toBeCloseTo(5881.38, 6);
    expect(row?.ratio).toBeCloseTo(5881.38 / 5477.38, 9);
    const other = {
      ...b,
      launches: [...b.launches, { ...b.launches[0], name: "softmax" } as RunResults["launches"][number]],
    };
    expect(compareLaunches(a, other)[1]).toMatchObject({
      label: "launch 2: softmax time",
      a: null,
      ratio: null,
    });
  });
});
