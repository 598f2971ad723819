import { describe, expect, it } from "vitest";
import { metricName } from "./metric-names.js";

describe("a sweep metric's name for people", () => {
  it("reads the last word as a unit: dropped when it is only the unit, kept when it is what is counted", () => {
    expect(metricName("time_ns").text).toBe("time (ns)");
    expect(metricName("time_us").text).toBe("time (µs)");
    expect(metricName("busbw_gbs").text).toBe("busbw (GB/s)");
    expect(metricName("hbm_bytes").text).toBe("hbm bytes (B)");
    expect(metricName("simTimeNs")).toEqual({ label: "sim time", unit: "ns", text: "sim time (ns)" });
    expect(metricName("energy_pj").text).toBe("energy (pJ)");
  });

  it("keeps names without a unit as words, and a name that is only a unit as it is", () => {
    expect(metricName("gemm_fraction")).toEqual({
      label: "gemm fraction",
      unit: null,
      text: "gemm fraction",
    });
    expect(metricName("row_hits").text).toBe("row hits");
    expect(metricName("bound").text).toBe("bound");
    expect(metricName("ns").text).toBe("ns");
  });
});
