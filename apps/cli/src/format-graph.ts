import type { TopologyEdge, TopologyGraph, TopologyNode } from "@kb/topology";
import { formatNumber } from "./format-topology.js";

/** How much of the graph `kb topology graph` draws. */
export type GraphLevel = "cube" | "pe" | "all";

/** The levels, for the option's choices. */
export const GRAPH_LEVELS: readonly GraphLevel[] = ["cube", "pe", "all"];

/** The output formats, for the option's choices. */
export const GRAPH_FORMATS = ["dot", "mermaid"] as const;

/** `dot` (Graphviz) or `mermaid` (a Mermaid flowchart). */
export type GraphFormat = (typeof GRAPH_FORMATS)[number];

/**
 * Node kinds whose descendants are drawn as the node itself, per level: at `cube` a PE is one
 * node and the HBM stack is one node (its channels and pseudo-channels folded in); at `pe` the
 * PE components and the HBM channels are drawn (pseudo-channels folded into their channel); at
 * `all` every node is drawn.
 */
const COLLAPSED_KINDS: Record<GraphLevel, ReadonlySet<string>> = {
  cube: new Set(["pe", "hbm_ctrl"]),
  pe: new Set(["hbm_channel"]),
  all: new Set(),
};

/** A drawn node. */
interface DrawnNode {
  readonly id: string;
  readonly label: string;
  /** Id of the enclosing drawn cluster, or null at the top. */
  readonly cluster: string | null;
}

/** A drawn cluster: a SIP, a cube, a PE or an HBM stack whose parts are drawn. */
interface DrawnCluster {
  readonly id: string;
  readonly label: string;
  readonly cluster: string | null;
}

/** A drawn edge: every graph edge between two drawn nodes, merged. */
interface DrawnEdge {
  readonly from: string;
  readonly to: string;
  /** True when edges run both ways. */
  readonly both: boolean;
  readonly label: string;
}

/** The graph as drawn at one level: nodes, clusters and merged edges, in expansion order. */
export interface DrawnGraph {
  readonly name: string;
  readonly nodes: readonly DrawnNode[];
  readonly clusters: readonly DrawnCluster[];
  readonly edges: readonly DrawnEdge[];
}

/**
 * Folds the expanded graph to a level. A node is drawn when it has an implementation or an edge
 * (after folding); a node with drawn descendants and no edges (a SIP, a cube, a PE, an HBM stack)
 * is drawn as a cluster around them instead. Edges between
 * the same two drawn nodes merge into one, labelled with their bandwidth (`2 x 64 GB/s` for two
 * parallel links); self-loops (edges inside a folded node) disappear. Order follows the graph's
 * expansion order, so the same topology always draws the same way.
 */
export function drawGraph(graph: TopologyGraph, level: GraphLevel): DrawnGraph {
  const collapsed = COLLAPSED_KINDS[level];
  const byId = new Map<string, TopologyNode>(graph.nodes.map((node) => [node.id, node]));
  const order = new Map<string, number>(graph.nodes.map((node, index) => [node.id, index]));

  // The drawn node a graph node folds into: its outermost collapsed ancestor, or itself.
  const drawnIdOf = new Map<string, string>();
  for (const node of graph.nodes) {
    let drawn = node.id;
    for (let current: TopologyNode | undefined = node; current !== undefined; ) {
      if (collapsed.has(current.kind) && current.id !== node.id) drawn = current.id;
      current = current.parent === null ? undefined : byId.get(current.parent);
    }
    drawnIdOf.set(node.id, drawn);
  }
  const drawnOf = (id: string) => drawnIdOf.get(id) as string;

  // Merge the edges per pair of drawn nodes, in order of first appearance.
  interface Group {
    readonly a: string;
    readonly b: string;
    forward: TopologyEdge[];
    backward: TopologyEdge[];
  }
  const groups = new Map<string, Group>();
  const edgeEnds = new Set<string>();
  for (const edge of graph.edges) {
    const src = drawnOf(edge.src);
    const dst = drawnOf(edge.dst);
    if (src === dst) continue;
    edgeEnds.add(src);
    edgeEnds.add(dst);
    const [a, b] = (order.get(src) as number) <= (order.get(dst) as number) ? [src, dst] : [dst, src];
    const key = `${a}\u0000${b}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { a, b, forward: [], backward: [] };
      groups.set(key, group);
    }
    (src === a ? group.forward : group.backward).push(edge);
  }

  const drawnIds = new Set<string>();
  for (const node of graph.nodes) {
    const id = drawnOf(node.id);
    if (id === node.id && (node.impl !== null || edgeEnds.has(id))) drawnIds.add(id);
  }
  // Ancestors of drawn nodes are clusters.
  const clusterIds = new Set<string>();
  for (const id of drawnIds) {
    for (
      let parent = byId.get(id)?.parent ?? null;
      parent !== null;
      parent = byId.get(parent)?.parent ?? null
    ) {
      clusterIds.add(parent);
    }
  }
  // An ancestor without edges of its own (an HBM stack whose channels are drawn) is only a
  // cluster; one with edges (a channel whose pseudo-channels are drawn) is only a node, its
  // parts drawn beside it in the enclosing cluster.
  for (const id of clusterIds) {
    if (edgeEnds.has(id)) clusterIds.delete(id);
    else drawnIds.delete(id);
  }

  const clusterOf = (node: TopologyNode): string | null => {
    for (let parent = node.parent; parent !== null; parent = byId.get(parent)?.parent ?? null) {
      if (clusterIds.has(parent)) return parent;
    }
    return null;
  };
  const localName = (node: TopologyNode, cluster: string | null) =>
    cluster === null ? node.id : node.id.slice(cluster.length + 1);

  const nodes: DrawnNode[] = [];
  const clusters: DrawnCluster[] = [];
  for (const node of graph.nodes) {
    if (clusterIds.has(node.id)) {
      const cluster = clusterOf(node);
      const name = localName(node, cluster);
      clusters.push({ id: node.id, label: node.impl === null ? name : `${name} (${node.impl})`, cluster });
    }
    if (drawnIds.has(node.id)) {
      const cluster = clusterOf(node);
      const name = localName(node, cluster);
      nodes.push({ id: node.id, label: node.impl === null ? name : `${name}\n${node.impl}`, cluster });
    }
  }

  const edges = [...groups.values()].map((group): DrawnEdge => {
    const both = group.forward.length > 0 && group.backward.length > 0;
    const [from, to, edgesOneWay] =
      group.forward.length > 0 ? [group.a, group.b, group.forward] : [group.b, group.a, group.backward];
    return { from, to, both, label: bandwidthLabel(edgesOneWay) };
  });
  return { name: graph.topology.name, nodes, clusters, edges };
}

/** `64 GB/s`, `4 x 64 GB/s` for parallel links of one bandwidth, `3 links, 192 GB/s` otherwise. */
function bandwidthLabel(edges: readonly TopologyEdge[]): string {
  const first = edges[0] as TopologyEdge;
  if (edges.every((edge) => edge.bwGbs === first.bwGbs)) {
    return edges.length === 1
      ? `${formatNumber(first.bwGbs)} GB/s`
      : `${edges.length} x ${formatNumber(first.bwGbs)} GB/s`;
  }
  const total = edges.reduce((sum, edge) => sum + edge.bwGbs, 0);
  return `${edges.length} links, ${formatNumber(total)} GB/s`;
}

/** The drawn graph as Graphviz dot: clusters for SIPs, cubes (and PEs), one edge per linked pair. */
export function toDot(drawn: DrawnGraph): string {
  const lines = [
    `digraph ${dotString(drawn.name)} {`,
    '  graph [rankdir=LR, compound=true, fontname="Helvetica"];',
    '  node [shape=box, fontname="Helvetica", fontsize=10];',
    '  edge [fontname="Helvetica", fontsize=8];',
  ];
  const emit = (cluster: string | null, indent: string) => {
    for (const node of drawn.nodes) {
      if (node.cluster === cluster)
        lines.push(`${indent}${dotString(node.id)} [label=${dotString(node.label)}];`);
    }
    for (const child of drawn.clusters) {
      if (child.cluster !== cluster) continue;
      lines.push(`${indent}subgraph ${dotString(`cluster_${child.id}`)} {`);
      lines.push(`${indent}  label=${dotString(child.label)};`);
      emit(child.id, `${indent}  `);
      lines.push(`${indent}}`);
    }
  };
  emit(null, "  ");
  for (const edge of drawn.edges) {
    lines.push(
      `  ${dotString(edge.from)} -> ${dotString(edge.to)} [${edge.both ? "dir=both, " : ""}label=${dotString(edge.label)}];`,
    );
  }
  lines.push("}");
  return `${lines.join("\n")}\n`;
}

/** The drawn graph as a Mermaid flowchart: subgraphs for SIPs, cubes (and PEs), one link per pair. */
export function toMermaid(drawn: DrawnGraph): string {
  const lines = ["flowchart LR"];
  const emit = (cluster: string | null, indent: string) => {
    for (const node of drawn.nodes) {
      if (node.cluster === cluster) {
        lines.push(`${indent}${mermaidId(node.id)}[${mermaidString(node.label.replaceAll("\n", "<br/>"))}]`);
      }
    }
    for (const child of drawn.clusters) {
      if (child.cluster !== cluster) continue;
      lines.push(`${indent}subgraph ${mermaidId(`cluster_${child.id}`)}[${mermaidString(child.label)}]`);
      emit(child.id, `${indent}  `);
      lines.push(`${indent}end`);
    }
  };
  emit(null, "  ");
  for (const edge of drawn.edges) {
    lines.push(
      `  ${mermaidId(edge.from)} ${edge.both ? "<-->" : "-->"}|${mermaidString(edge.label)}| ${mermaidId(edge.to)}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function dotString(text: string): string {
  return `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")}"`;
}

/** Node ids are dotted paths; Mermaid ids may not contain dots (segments never contain `__`). */
function mermaidId(id: string): string {
  return id.replaceAll(".", "__").replace(/[^A-Za-z0-9_]/g, "_");
}

function mermaidString(text: string): string {
  return `"${text.replaceAll('"', "#quot;")}"`;
}
