import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadTopologyFile } from "./node.js";

// The reference design points in topologies/ (besides default.yaml, covered by topologies.test.ts).
const topologiesDir = new URL("../../../topologies/", import.meta.url);

function load(name: string) {
  return loadTopologyFile(new URL(name, topologiesDir).pathname);
}

// PE_GEMM of both: the 32 x 32 array they had as pe_gemm_v1's default, timed by pe_gemm_v2 (output
// stationary, SCALE-Sim's fill and drain per fold; topologies/README.md says why).
const V2_OS_32X32 = {
  kind: "pe_gemm",
  impl: "pe_gemm_v2",
  params: { mac_rows: 32, mac_cols: 32, dataflow: "os", fold_overlap: false, overhead_cycles: 0 },
};

describe("reference topologies", () => {
  it("ref-cube.yaml: 1 SIP, 1 cube, 32 PEs (4 x 8), one HBM3 stack of 16 x 2 x 25.6 GB/s = 819.2 GB/s", () => {
    const topology = load("ref-cube.yaml");
    expect(topology.name).toBe("ref-cube");
    expect(topology.system.sips).toBe(1);
    expect(topology.sip.cubes).toBe(1);
    expect([topology.cube.noc.rows, topology.cube.noc.cols]).toEqual([4, 8]);
    const { channels, pseudo_channels, pc_bw_gbs } = topology.cube.hbm;
    expect({ channels, pseudo_channels, pc_bw_gbs }).toEqual({
      channels: 16,
      pseudo_channels: 2,
      pc_bw_gbs: 25.6,
    });
    expect(channels * pseudo_channels * pc_bw_gbs).toBeCloseTo(819.2, 9);
    expect(topology.sip.host_link.bw_gbs).toBe(64);
    expect(topology.pe_template.components.pe_gemm).toEqual(V2_OS_32X32);
  });

  it("ref-4sip.yaml: 4 SIPs all-to-all, 4 cubes per SIP on a UCIe ring, 16 PEs (4 x 4) per cube", () => {
    const topology = load("ref-4sip.yaml");
    expect(topology.name).toBe("ref-4sip");
    expect(topology.system.sips).toBe(4);
    expect(topology.system.sip_link).toMatchObject({ pattern: "all_to_all", bw_gbs: 128, latency_ns: 500 });
    expect(topology.sip.cubes).toBe(4);
    expect(topology.sip.ucie).toMatchObject({ pattern: "ring", bw_gbs: 256, length_mm: 2 });
    expect([topology.cube.noc.rows, topology.cube.noc.cols]).toEqual([4, 4]);
    expect(topology.cube.hbm).toMatchObject({ channels: 16, pseudo_channels: 2, pc_bw_gbs: 25.6 });
    const pes = topology.system.sips * topology.sip.cubes * topology.cube.noc.rows * topology.cube.noc.cols;
    expect(pes).toBe(256);
    expect(topology.pe_template.components.pe_gemm).toEqual(V2_OS_32X32);
  });

  it("each references the JSON Schema on its first line", () => {
    for (const name of ["ref-cube.yaml", "ref-4sip.yaml"]) {
      const firstLine = readFileSync(new URL(name, topologiesDir), "utf8").split("\n")[0];
      expect(firstLine).toBe("# yaml-language-server: $schema=./topology.schema.json");
    }
  });
});
