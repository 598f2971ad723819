import { describe, expect, it } from "vitest";
import { gemmPeakFlopsPerNs, gemmTimingOf } from "./gemm-timing.js";
import { machineOf } from "./test-support.js";

/** The GemmTiming of PE 0's PE_GEMM on `topology`. */
function timingOn(topology: string | Record<string, unknown>) {
  const timing = gemmTimingOf(machineOf(topology).component("sip0.cube0.pe0.pe_gemm"));
  if (timing === null) throw new Error("the PE_GEMM states no timing");
  return timing;
}

const peaks = (topology: string | Record<string, unknown>) => {
  const timing = timingOn(topology);
  return Object.fromEntries(["i8", "f16", "bf16", "f32"].map((d) => [d, gemmPeakFlopsPerNs(timing, d)]));
};

describe("gemmPeakFlopsPerNs", () => {
  // 32 x 32 MACs x 2 FLOPs at 1 GHz = 2048 FLOP/ns per MAC step; dtype_cycles i8 0.5, f16 and
  // bf16 1, f32 4 (the built-in default): 4096, 2048, 2048 and 512 FLOP/ns.
  const expected = { i8: 4096, f16: 2048, bf16: 2048, f32: 512 };

  it("pe_gemm_v1 on default.yaml: 2 R C freq / dtype_cycles, its overhead not counted", () => {
    expect(peaks("default")).toEqual(expected);
  });

  it("pe_gemm_v2 (ref-cube.yaml, os): the same rates, fill and drain not counted", () => {
    expect(peaks("ref-cube")).toEqual(expected);
  });

  it("pe_gemm_v2 in the weight-stationary dataflow streams m: the same rates", () => {
    const ws = {
      pe_template: { components: { pe_gemm: { impl: "pe_gemm_v2", params: { dataflow: "ws" } } } },
    };
    expect(peaks(ws)).toEqual(expected);
  });
});
