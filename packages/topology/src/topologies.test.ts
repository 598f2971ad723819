import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { topologyJsonSchema } from "./index.js";
import { loadTopologyFile } from "./node.js";

const topologiesDir = new URL("../../../topologies/", import.meta.url);

describe("topologies/", () => {
  it("topology.schema.json is the current schema (run `npx -y pnpm@10 schema:write` after changing it)", () => {
    const onDisk = JSON.parse(readFileSync(new URL("topology.schema.json", topologiesDir), "utf8"));
    expect(onDisk).toEqual(topologyJsonSchema());
  });

  it("default.yaml loads: 1 SIP, 2 cubes, 2 x 4 PEs, HBM 8 x 2 at 25.6 GB/s", () => {
    const topology = loadTopologyFile(new URL("default.yaml", topologiesDir).pathname);
    expect(topology.name).toBe("default");
    expect(topology.system.sips).toBe(1);
    expect(topology.sip.cubes).toBe(2);
    expect([topology.cube.noc.rows, topology.cube.noc.cols]).toEqual([2, 4]);
    expect(topology.cube.hbm).toMatchObject({ channels: 8, pseudo_channels: 2, pc_bw_gbs: 25.6 });
    expect(topology.pe_template.components.pe_gemm).toEqual({
      kind: "pe_gemm",
      impl: "pe_gemm_v1",
      params: {},
    });
  });

  it("every topology file references the JSON Schema on its first line", () => {
    for (const name of ["default.yaml"]) {
      const firstLine = readFileSync(new URL(name, topologiesDir), "utf8").split("\n")[0];
      expect(firstLine).toBe("# yaml-language-server: $schema=./topology.schema.json");
    }
  });
});
