import type { TopologyEdge } from "./graph.js";

/**
 * Latencies are compared in integer units of 1e-9 ns: each link latency and per-hop overhead
 * (`first_flit_ns` or `forward_ns`) is rounded once to this grid, so sums are exact integers (below 2^53, that is for paths
 * shorter than about 9 ms), sums such as 0.1 + 0.2 tie exactly with 0.3, and the order of paths
 * is a true total order. That is what makes the best path the same whichever end the search
 * starts from (see `Router` in route.ts).
 */
export const LATENCY_UNITS_PER_NS = 1e9;

/** A graph's latencies on the 1e-9 ns grid and its edges grouped by node, as searches read them. @internal */
export interface RoutingArrays {
  /** Latency of each edge, in units of 1e-9 ns. */
  readonly edgeLatency: Float64Array;
  /** Overhead of each node as an intermediate hop, in units of 1e-9 ns. */
  readonly nodeFirstFlit: Float64Array;
  /** Edges leaving each node (see {@link groupEdges}). */
  readonly outStart: Int32Array;
  readonly outList: Int32Array;
  /** Edges entering each node. */
  readonly inStart: Int32Array;
  readonly inList: Int32Array;
}

/** The {@link RoutingArrays} of a graph given as flat arrays. @internal */
export function routingArrays(input: {
  readonly edges: readonly TopologyEdge[];
  readonly firstFlitNs: Float64Array;
  readonly edgeSrc: Int32Array;
  readonly edgeDst: Int32Array;
}): RoutingArrays {
  const nodeCount = input.firstFlitNs.length;
  const edgeLatency = new Float64Array(input.edges.length);
  for (let e = 0; e < edgeLatency.length; e++) {
    edgeLatency[e] = Math.round((input.edges[e] as TopologyEdge).latencyNs * LATENCY_UNITS_PER_NS);
  }
  const nodeFirstFlit = new Float64Array(nodeCount);
  for (let n = 0; n < nodeCount; n++) {
    nodeFirstFlit[n] = Math.round((input.firstFlitNs[n] as number) * LATENCY_UNITS_PER_NS);
  }
  const [outStart, outList] = groupEdges(nodeCount, input.edgeSrc);
  const [inStart, inList] = groupEdges(nodeCount, input.edgeDst);
  return { edgeLatency, nodeFirstFlit, outStart, outList, inStart, inList };
}

/**
 * Groups edge numbers by node (`ends[e]` is the node of edge e), keeping insertion order: the
 * edges of node n are `list[start[n]]` to `list[start[n + 1] - 1]`. @internal
 */
export function groupEdges(nodeCount: number, ends: Int32Array): [Int32Array, Int32Array] {
  const start = new Int32Array(nodeCount + 1);
  for (let e = 0; e < ends.length; e++) {
    const slot = (ends[e] as number) + 1;
    start[slot] = (start[slot] as number) + 1;
  }
  for (let n = 0; n < nodeCount; n++) start[n + 1] = (start[n + 1] as number) + (start[n] as number);
  const fill = start.slice(0, nodeCount);
  const list = new Int32Array(ends.length);
  for (let e = 0; e < ends.length; e++) {
    const node = ends[e] as number;
    list[fill[node] as number] = e;
    fill[node] = (fill[node] as number) + 1;
  }
  return [start, list];
}
