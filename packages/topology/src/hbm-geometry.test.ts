import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isKbError, type KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { expandTopology } from "./expand.js";
import { parseTopology, resolveTopology } from "./load.js";
import { loadTopologyGraphFile } from "./node.js";
import type { TopologyInput } from "./schema.js";
import { YamlValidationError } from "./yaml-validate.js";

function thrown(action: () => unknown): KbError {
  try {
    action();
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}

const expandWith = (overrides: TopologyInput["overrides"]) =>
  expandTopology(resolveTopology({ name: "t", sip: { cubes: 2 }, overrides }));

describe("one HBM organisation: cube.hbm", () => {
  it("refuses an override that changes channels on one controller, naming the node and what to set", () => {
    const error = thrown(() => expandWith([{ match: "sip0.cube0.hbm", params: { channels: 16 } }]));
    expect(error.code).toBe("TOPOLOGY_INVALID");
    expect(error.detail).toBe(
      "overrides[0].params.channels: 16 would change the HBM organisation of node sip0.cube0.hbm for its model only: the pseudo-channel nodes, the fabric, the address map and the peaks are built from cube.hbm.channels (8). Set cube.hbm.channels instead (every stack has the organisation cube.hbm gives).",
    );
  });

  it("refuses every geometry key, through a glob too, and counts the stacks it matched", () => {
    for (const key of [
      "pseudo_channels",
      "pc_bw_gbs",
      "interleave_bytes",
      "capacity_bytes",
      "mapping",
      "sids",
      "bank_groups",
      "banks_per_group",
      "row_bytes",
      "burst_bytes",
    ]) {
      const error = thrown(() =>
        expandWith([{ match: "sip0.cube1.m_cpu" }, { match: "sip0.cube*.hbm", params: { [key]: 64 } }]),
      );
      expect(error.detail).toMatch(
        new RegExp(
          `^overrides\\[1\\]\\.params\\.${key}: 64 would change the HBM organisation of 2 nodes, e.g\\. sip0\\.cube0\\.hbm, .* Set cube\\.hbm\\.${key} instead`,
        ),
      );
    }
  });

  it("still lets an override change a controller's timing or impl on one stack", () => {
    const graph = expandWith([
      { match: "sip0.cube1.hbm", impl: "hbm_ctrl_v2", params: { preset: "hbm3e", access_latency_ns: 30 } },
    ]);
    expect(graph.node("sip0.cube1.hbm")).toMatchObject({
      impl: "hbm_ctrl_v2",
      params: { preset: "hbm3e", access_latency_ns: 30, channels: 8 },
    });
    expect(graph.node("sip0.cube0.hbm").params).toMatchObject({ access_latency_ns: 40 });
  });

  it("refuses a key of cube.hbm written under cube.hbm.params (it would be overwritten), located", () => {
    const text = "name: t\ncube:\n  hbm:\n    params: { channels: 16 }\n";
    const error = thrown(() => parseTopology(text, "t.yaml"));
    expect(error).toBeInstanceOf(YamlValidationError);
    expect(error.message.split("\n").slice(1)).toEqual([
      "t.yaml:4:25: cube.hbm.params.channels: cube.hbm sets channels for every HBM controller, over its params; write it as cube.hbm.channels instead.",
    ]);
  });

  it("kb topology validate's loader reports the override at its value, file:line:col", () => {
    const path = join(mkdtempSync(join(tmpdir(), "kb-hbm-geometry-")), "t.yaml");
    writeFileSync(path, "name: t\noverrides:\n  - match: sip0.cube0.hbm\n    params: { channels: 16 }\n");
    const error = thrown(() => loadTopologyGraphFile(path));
    expect(error).toBeInstanceOf(YamlValidationError);
    expect(error.message.split("\n").slice(1)).toEqual([
      `${path}:4:25: overrides[0].params.channels: 16 would change the HBM organisation of node sip0.cube0.hbm for its model only: the pseudo-channel nodes, the fabric, the address map and the peaks are built from cube.hbm.channels (8). Set cube.hbm.channels instead (every stack has the organisation cube.hbm gives).`,
    ]);
  });
});

describe("a hop's overhead has one place: cube.<hop>.first_flit_ns (and forward_ns)", () => {
  it("refuses cube.xbar.params.first_flit_ns (the topology would overwrite it), located, naming the key to set", () => {
    const text = "name: t\ncube:\n  xbar:\n    params: { first_flit_ns: 4 }\n";
    const error = thrown(() => parseTopology(text, "t.yaml"));
    expect(error).toBeInstanceOf(YamlValidationError);
    expect(error.message.split("\n").slice(1)).toEqual([
      "t.yaml:4:30: cube.xbar.params.first_flit_ns: cube.xbar sets first_flit_ns for every xbar node, over its params (4 would be replaced by 1); write it as cube.xbar.first_flit_ns instead.",
    ]);
  });

  it("refuses the same under the routers, the bridge, the UCIe ports, M_CPU.DMA and IO_CPU", () => {
    const text = [
      "name: t",
      "sip:",
      "  io_cpu: { params: { forward_ns: 9 } }",
      "cube:",
      "  noc: { params: { first_flit_ns: 2 } }",
      "  bridge: { params: { first_flit_ns: 2 } }",
      "  ucie_port: { params: { first_flit_ns: 2 } }",
      "  m_cpu_dma: { params: { forward_ns: 2 } }",
      "",
    ].join("\n");
    const lines = thrown(() => parseTopology(text, "t.yaml"))
      .message.split("\n")
      .slice(1)
      .map((line) => line.split(": ")[1]);
    expect(lines.sort()).toEqual([
      "cube.bridge.params.first_flit_ns",
      "cube.m_cpu_dma.params.forward_ns",
      "cube.noc.params.first_flit_ns",
      "cube.ucie_port.params.first_flit_ns",
      "sip.io_cpu.params.forward_ns",
    ]);
  });

  it("takes cube.xbar.first_flit_ns, and a per-node override's params.first_flit_ns", () => {
    const text = [
      "name: t",
      "cube:",
      "  xbar: { first_flit_ns: 3 }",
      "overrides:",
      '  - { match: "sip0.cube0.xbar1", params: { first_flit_ns: 5 } }',
      "",
    ].join("\n");
    const graph = expandTopology(parseTopology(text, "t.yaml"));
    expect(graph.node("sip0.cube0.xbar0").params.first_flit_ns).toBe(3);
    expect(graph.node("sip0.cube0.xbar1").params.first_flit_ns).toBe(5);
  });
});
