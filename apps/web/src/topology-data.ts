import type { TopologyGraph } from "@kb/topology";
import type { WebTopology } from "./api.js";

// The expanded topology graph as the page draws it (kb web's /api/data, the playground's run).

/** `graph` (expanded from topology `name`, read from `file`) as {@link WebTopology}. */
export function webTopologyOf(file: string, name: string, graph: TopologyGraph): WebTopology {
  return {
    file,
    name,
    nodes: graph.nodes.map((node) => ({
      id: node.id,
      kind: node.kind,
      impl: node.impl,
      parent: node.parent,
      sip: node.sip,
      cube: node.cube,
      pe: node.pe,
      row: node.coords?.row ?? null,
      col: node.coords?.col ?? null,
    })),
    edges: graph.edges.map((edge) => ({
      src: edge.src,
      dst: edge.dst,
      bw: edge.bwGbs,
      latencyNs: edge.latencyNs,
    })),
  };
}
