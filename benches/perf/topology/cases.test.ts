import { expandTopology, resolveTopology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { topologyCases } from "./cases.js";

describe("topology bench cases", () => {
  it.each(topologyCases.map((topologyCase) => [topologyCase.name, topologyCase] as const))(
    "%s expands to the hand-counted nodes and edges",
    (_, topologyCase) => {
      const graph = expandTopology(resolveTopology(topologyCase.input));
      expect(graph.nodes).toHaveLength(topologyCase.expected.nodes);
      expect(graph.edges).toHaveLength(topologyCase.expected.edges);
      expect(graph.byKind("pe_dma").length * graph.byKind("hbm_channel").length).toBe(
        topologyCase.expected.routes,
      );
    },
  );
});
