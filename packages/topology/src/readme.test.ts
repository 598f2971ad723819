import { describe, expect, it } from "vitest";
import { parseTopology, topologyToYaml } from "./index.js";

// The "Loading a topology" example of the package README.
describe("README example", () => {
  it("fills in defaults and dumps every one of them", () => {
    const topology = parseTopology(
      `
name: tiny
sip: { cubes: 2 }
cube:
  hbm: { channels: 4, pc_bw_gbs: 25.6 }
  noc: { rows: 1, cols: 2 }
`,
      "tiny.yaml",
    );
    expect(topology.cube.hbm.pseudo_channels).toBe(2);
    expect(topology.pe_template.components.pe_gemm.impl).toBe("pe_gemm_v1");
    expect(topologyToYaml(topology).split("\n").length).toBeGreaterThan(100);
    expect(parseTopology(topologyToYaml(topology), "dump.yaml")).toEqual(topology);
  });
});
