/**
 * Partitions of a machine for the parallel-DES study: which part of the machine a component or
 * process belongs to, and the lookahead the topology gives between parts.
 */
import type { TopologyGraph } from "@kb/topology";

/**
 * The partition of a component id or process name: `sipS.cubeC` for everything inside a cube,
 * `sipS` for the SIP level above the cubes (IO_CPU, the SIP links' ends), `host` for the rest.
 */
export function partitionOfId(id: string): string {
  const match = /^sip(\d+)(?:\.cube(\d+))?/.exec(id);
  if (match === null) return "host";
  return match[2] === undefined ? `sip${match[1]}` : `sip${match[1]}.cube${match[2]}`;
}

/** The smallest latency of the links between two kinds of partitions. */
export interface LookaheadRow {
  /** `cube-cube` (UCIe, same SIP), `cube-sip`, `sip-sip` (SIP links), `host-sip`, ... */
  readonly between: string;
  readonly links: number;
  readonly minLatencyNs: number;
  /** The smallest latency plus the first-flit (forward) overhead of the node the link enters. */
  readonly minWithOverheadNs: number;
}

const kindOf = (partition: string): string =>
  partition === "host" ? "host" : partition.includes(".cube") ? "cube" : "sip";

/**
 * For each pair of partition kinds, the directed links between two different partitions and
 * their smallest latency: the lookahead a conservative parallel DES gets from the topology (an
 * event in one partition cannot affect another sooner than that).
 */
export function topologyLookahead(graph: TopologyGraph): LookaheadRow[] {
  const rows = new Map<string, { links: number; min: number; minOverhead: number }>();
  for (const edge of graph.edges) {
    const a = partitionOfId(edge.src);
    const b = partitionOfId(edge.dst);
    if (a === b) continue;
    const between = [kindOf(a), kindOf(b)].sort().join("-");
    const params = graph.node(edge.dst).params;
    const overhead = Number(params.first_flit_ns ?? params.forward_ns ?? 0);
    const row = rows.get(between) ?? {
      links: 0,
      min: Number.POSITIVE_INFINITY,
      minOverhead: Number.POSITIVE_INFINITY,
    };
    row.links += 1;
    row.min = Math.min(row.min, edge.latencyNs);
    row.minOverhead = Math.min(row.minOverhead, edge.latencyNs + overhead);
    rows.set(between, row);
  }
  return [...rows.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([between, row]) => ({
      between,
      links: row.links,
      minLatencyNs: row.min,
      minWithOverheadNs: row.minOverhead,
    }));
}
