import { describe, expect, it } from "vitest";
import { CATEGORY_PALETTE } from "./colour.js";
import { KIND_PALETTE, kindLegend, trackColours } from "./timeline-legend-model.js";

describe("the timeline's legend", () => {
  it("gives each kind of the trace its own colour, kinds in name order, with their track counts", () => {
    const tracks = [
      { name: "sip0.cube0.pe0.pe_gemm" },
      { name: "sip0.cube0.hbm#0" },
      { name: "sip0.cube0.hbm#1" },
      { name: "sip0.cube0.noc.r0c1" },
    ];
    expect(kindLegend(tracks)).toEqual([
      { kind: "hbm", colour: CATEGORY_PALETTE[0], tracks: 2 },
      { kind: "noc", colour: CATEGORY_PALETTE[1], tracks: 1 },
      { kind: "pe_gemm", colour: CATEGORY_PALETTE[2], tracks: 1 },
    ]);
    expect(trackColours(tracks)).toEqual([
      CATEGORY_PALETTE[2],
      CATEGORY_PALETTE[0],
      CATEGORY_PALETTE[0],
      CATEGORY_PALETTE[1],
    ]);
  });

  it("tells up to twenty kinds apart (a trace of the default topology has 14)", () => {
    expect(new Set(KIND_PALETTE).size).toBe(20);
    const tracks = Array.from({ length: 20 }, (_, i) => ({
      name: `sip0.kind_${String.fromCharCode(97 + i)}`,
    }));
    expect(new Set(kindLegend(tracks).map((entry) => entry.colour)).size).toBe(20);
  });
});
