import { describe, expect, it } from "vitest";
import { expandTopology, idealTransferNs, parseTopology, topologyToYaml } from "./index.js";

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

describe("README graph example", () => {
  it("expands, routes and times a 32 KiB transfer", () => {
    const graph = expandTopology(parseTopology("name: t\nsip: { cubes: 2 }\n", "t.yaml"));
    expect(graph.pesOfCube(0, 1)).toHaveLength(8);
    const route = graph.route("sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm.ch0");
    expect(route.hops).toEqual(["sip0.cube0.pe0.pe_dma", "sip0.cube0.xbar0", "sip0.cube0.hbm.ch0"]);
    // pe_dma -> xbar0: 2 mm x 0.01 = 0.02 ns; xbar0 first flit 1 ns; xbar0 -> ch0: 0.01 ns;
    // narrowest link 64 GB/s: 1.03 + 32768 / 64 = 513.03 ns.
    expect(idealTransferNs(route, 32768)).toBeCloseTo(513.03, 9);
  });
});
