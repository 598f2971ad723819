import { isKbError, type KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { expandTopology } from "./expand.js";
import { parseTopology } from "./load.js";
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
