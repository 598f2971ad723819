import type { RegionPartition } from "./region-partition.js";
import { SearchScratch } from "./region-search.js";
import type { RoutingInput } from "./route.js";
import type { RoutingArrays } from "./routing-arrays.js";
import { NODE_LIMIT } from "./search-queue.js";

/** Shortcuts of a boundary node: the other ends, and the (latency units, hops) of each. @internal */
export interface Shortcuts {
  readonly nodes: Int32Array;
  readonly latencies: Float64Array;
  readonly hops: Int32Array;
}

function shortcutsOf(nodes: number[], latencies: number[], hops: number[]): Shortcuts {
  return {
    nodes: Int32Array.from(nodes),
    latencies: Float64Array.from(latencies),
    hops: Int32Array.from(hops),
  };
}

/**
 * The shortcuts of the region router's quotient graph (region-router.ts): for each boundary node,
 * the (latency, hops) of the best path inside its region to and from each other boundary node of
 * that region, computed for a whole region on first use ({@link RegionShortcuts.compute}). @internal
 */
export class RegionShortcuts {
  /**
   * Shortcuts of each boundary node, set for every boundary node of a region at once: `out` to
   * the other boundary nodes of its region, `in` from them.
   */
  readonly out: (Shortcuts | undefined)[];
  readonly in: (Shortcuts | undefined)[];
  private readonly input: RoutingInput;
  private readonly region: Int32Array;
  private readonly isBoundary: Uint8Array;
  private readonly boundaryStart: Int32Array;
  private readonly boundaryNodes: Int32Array;
  private readonly edgeLatency: Float64Array;
  private readonly nodeFirstFlit: Float64Array;
  private readonly outStart: Int32Array;
  private readonly outList: Int32Array;
  /** The searches in a region. */
  private readonly inRegion: SearchScratch;

  constructor(input: RoutingInput, arrays: RoutingArrays, partition: RegionPartition) {
    const nodeCount = input.ids.length;
    this.input = input;
    ({
      region: this.region,
      isBoundary: this.isBoundary,
      boundaryStart: this.boundaryStart,
      boundaryNodes: this.boundaryNodes,
    } = partition);
    ({
      edgeLatency: this.edgeLatency,
      nodeFirstFlit: this.nodeFirstFlit,
      outStart: this.outStart,
      outList: this.outList,
    } = arrays);
    this.out = new Array<Shortcuts | undefined>(nodeCount);
    this.in = new Array<Shortcuts | undefined>(nodeCount);
    this.inRegion = new SearchScratch(nodeCount);
  }

  /**
   * The shortcuts of every boundary node of region `r`: (latency, hops) of the best path to each
   * other boundary node of `r` that stays in `r` (the root always sends; other nodes pass
   * traffic on only when they forward), kept at both ends.
   */
  compute(r: number): void {
    const { region, isBoundary, inRegion } = this;
    const { seen, settled, dist, hops: hopCount, heap } = inRegion;
    const forwards = this.input.forwards;
    const edgeDst = this.input.edgeDst;
    const boundaryStart = this.boundaryStart[r] as number;
    const boundaryEnd = this.boundaryStart[r + 1] as number;
    const incoming = new Map<number, { nodes: number[]; latencies: number[]; hops: number[] }>();
    for (let b = boundaryStart; b < boundaryEnd; b++) {
      incoming.set(this.boundaryNodes[b] as number, { nodes: [], latencies: [], hops: [] });
    }
    for (let b = boundaryStart; b < boundaryEnd; b++) {
      const root = this.boundaryNodes[b] as number;
      const stamp = inRegion.start(root);
      const to: number[] = [];
      const latencies: number[] = [];
      const hopList: number[] = [];
      while (heap.pop()) {
        const latency = heap.latency;
        const node = heap.entry % NODE_LIMIT;
        const hops = (heap.entry - node) / NODE_LIMIT;
        if (settled[node] === stamp || dist[node] !== latency || hopCount[node] !== hops) continue;
        settled[node] = stamp;
        if (node !== root && isBoundary[node] === 1) {
          to.push(node);
          latencies.push(latency);
          hopList.push(hops);
          const into = incoming.get(node) as { nodes: number[]; latencies: number[]; hops: number[] };
          into.nodes.push(root);
          into.latencies.push(latency);
          into.hops.push(hops);
        }
        if (node !== root && forwards[node] === 0) continue;
        const base = latency + (node === root ? 0 : (this.nodeFirstFlit[node] as number));
        const end = this.outStart[node + 1] as number;
        for (let k = this.outStart[node] as number; k < end; k++) {
          const edge = this.outList[k] as number;
          const other = edgeDst[edge] as number;
          if (region[other] !== r || settled[other] === stamp) continue;
          const candidate = base + (this.edgeLatency[edge] as number);
          const nextHops = hops + 1;
          if (
            seen[other] !== stamp ||
            candidate < (dist[other] as number) ||
            (candidate === dist[other] && nextHops < (hopCount[other] as number))
          ) {
            seen[other] = stamp;
            dist[other] = candidate;
            hopCount[other] = nextHops;
            heap.push(candidate, nextHops * NODE_LIMIT + other);
          }
        }
      }
      this.out[root] = shortcutsOf(to, latencies, hopList);
    }
    for (const [node, into] of incoming) this.in[node] = shortcutsOf(into.nodes, into.latencies, into.hops);
  }
}
