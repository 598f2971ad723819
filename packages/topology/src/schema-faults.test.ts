import { describe, expect, it } from "vitest";
import { parseTopology, YamlValidationError } from "./index.js";

function issuesOf(text: string): string[] {
  try {
    parseTopology(text, "t.yaml");
  } catch (error) {
    expect(error).toBeInstanceOf(YamlValidationError);
    return (error as YamlValidationError).message.split("\n").slice(1);
  }
  throw new Error("expected a validation error");
}

describe("fault: physical numbers out of any sane range", () => {
  it("refuses a 1e300 ns link latency at its line and column, saying the range", () => {
    const issues = issuesOf(
      ["name: big", "cube:", "  links:", "    xbar_to_hbm: { bw_gbs: 64, latency_ns: 1e300 }", ""].join("\n"),
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^t\.yaml:4:44: cube\.links\.xbar_to_hbm\.latency_ns: /);
    expect(issues[0]).toContain("1e+300");
    expect(issues[0]).toContain("must be <= 1000000000");
  });

  it("refuses bandwidths, lengths, per-hop times and delays beyond the range, each located", () => {
    const text = [
      "name: big",
      "wire_delay_ns_per_mm: 1e12",
      "sip:",
      "  io_link: { bw_gbs: 1e-300, length_mm: 1e300 }",
      "  io_cpu: { forward_ns: 1e200 }",
      "cube:",
      "  hbm: { pc_bw_gbs: 1e300, access_latency_ns: 1e100 }",
      "  xbar: { first_flit_ns: 1e50 }",
      "  sram: { latency_ns: 1e15, bw_gbs: 1e20 }",
      "",
    ].join("\n");
    const paths = issuesOf(text).map((issue) => /^t\.yaml:\d+:\d+: (\S+):/.exec(issue)?.[1]);
    expect(paths).toEqual([
      "wire_delay_ns_per_mm",
      "sip.io_link.bw_gbs",
      "sip.io_link.length_mm",
      "sip.io_cpu.forward_ns",
      "cube.hbm.pc_bw_gbs",
      "cube.hbm.access_latency_ns",
      "cube.xbar.first_flit_ns",
      "cube.sram.latency_ns",
      "cube.sram.bw_gbs",
    ]);
  });

  it("accepts the ranges' ends", () => {
    const text = [
      "name: edge",
      "wire_delay_ns_per_mm: 1000",
      "sip:",
      "  io_link: { bw_gbs: 0.001, length_mm: 1000000 }",
      "cube:",
      "  links:",
      "    xbar_to_hbm: { bw_gbs: 1000000, latency_ns: 1000000000 }",
      "",
    ].join("\n");
    expect(parseTopology(text, "t.yaml").cube.links.xbar_to_hbm.latency_ns).toBe(1e9);
  });
});
