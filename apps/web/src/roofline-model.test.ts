import type { LaunchRoofline, RunResults } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { rooflineLaunches, rooflineView } from "./roofline-model.js";

/** A 64^3 f16 gemm as launch-roofline.test.ts measures it, at 1 TFLOP/s (hand-made figures). */
const gemm: LaunchRoofline = {
  flops: 524_288,
  flopsPerS: 1e12,
  ceilings: [
    { engine: "gemm", dtype: "i8", flopsPerS: 4096e9 },
    { engine: "gemm", dtype: "f16", flopsPerS: 2048e9 },
    { engine: "gemm", dtype: "bf16", flopsPerS: 2048e9 },
    { engine: "math", dtype: null, flopsPerS: 64e9 },
  ],
  slopes: [
    { resource: "hbm", name: "HBM", bytesPerS: 409.6e9 },
    { resource: "link", name: "xbar -> pe0", bytesPerS: 128e9 },
  ],
  points: [
    { traffic: "hbm", bytes: 32_768, intensity: 16, flopsPerS: 1e12 },
    { traffic: "minimal", bytes: 24_576, intensity: 524_288 / 24_576, flopsPerS: 1e12 },
  ],
};

describe("rooflineView", () => {
  it("axes in powers of ten around the points and ridges; ceilings from the HBM ridge, slopes up to the top ceiling", () => {
    const view = rooflineView([{ name: "#1 gemm", roofline: gemm }]);
    // x: the points (16, 21.3) and the ridges 4096e9 / 409.6e9 = 10, 4096e9 / 128e9 = 32; 10 / 4 =
    // 2.5 -> 1, 32 x 4 = 128 -> 1000. y: 64e9 / 4 = 16e9 -> 1e10, 4096e9 x 1.2 -> 1e13.
    expect(view.x).toEqual([1, 1000]);
    expect(view.y).toEqual([1e10, 1e13]);
    const [i8, f16, math, hbm, link] = view.lines;
    expect(i8).toMatchObject({ kind: "ceiling", from: [10, 4096e9], to: [1000, 4096e9] });
    expect(i8?.name).toBe("PE_GEMM i8 4.096 TFLOP/s");
    // f16 and bf16 at one peak: one line, from 2048e9 / 409.6e9 = 5.
    expect(f16).toMatchObject({ name: "PE_GEMM f16, bf16 2.048 TFLOP/s", from: [5, 2048e9] });
    expect(math?.name).toMatch(/^PE_MATH /);
    expect(math?.from[0]).toBe(1); // 64e9 / 409.6e9 = 0.16, left of the axis: from its start
    // HBM from y = 1e10 (x = 1e10 / 409.6e9) up to the i8 ceiling at x = 10.
    expect(hbm?.kind).toBe("slope");
    expect(hbm?.from[0]).toBe(1); // 1e10 / 409.6e9 = 0.024, clipped to the axis
    expect(hbm?.from[1]).toBeCloseTo(409.6e9, 0);
    expect(hbm?.to).toEqual([10, 4096e9]);
    expect(link?.to[0]).toBe(32);
    expect(link?.name).toMatch(/^link xbar -> pe0 128/);
    expect(view.marks.map((mark) => [mark.name, mark.x, mark.y])).toEqual([
      ["actual HBM traffic", 16, 1e12],
      ["minimal HBM traffic", 524_288 / 24_576, 1e12],
    ]);
  });

  it("names each entry's points, draws the lines A and B share once and names the others", () => {
    const b: LaunchRoofline = {
      ...gemm,
      ceilings: gemm.ceilings.filter((ceiling) => ceiling.engine === "gemm"),
      points: [],
    };
    const view = rooflineView([
      { name: "A", roofline: gemm },
      { name: "B", roofline: b },
    ]);
    expect(view.marks.map((mark) => mark.name)).toEqual(["A: actual HBM traffic", "A: minimal HBM traffic"]);
    // The GEMM ceilings and both slopes are the same in A and B: once each, of neither; PE_MATH is A's.
    expect(view.lines.map((line) => [line.entry, line.name.replace(/ [\d.]+ \w+\/s$/, "")])).toEqual([
      [null, "PE_GEMM i8"],
      [null, "PE_GEMM f16, bf16"],
      [0, "A: PE_MATH"],
      [null, "HBM"],
      [null, "link xbar -> pe0"],
    ]);
  });
});

describe("rooflineLaunches", () => {
  it("lists the launches that carry a roofline, numbered by position", () => {
    const launch = (name: string, roofline?: LaunchRoofline) => ({ name, ...(roofline ? { roofline } : {}) });
    const results = { launches: [launch("old"), launch("gemm", gemm)] } as unknown as RunResults;
    expect(rooflineLaunches(results).map(({ index, label }) => ({ index, label }))).toEqual([
      { index: 1, label: "#2 gemm" },
    ]);
  });
});
