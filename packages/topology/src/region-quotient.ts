import type { RegionPartition } from "./region-partition.js";
import { SearchScratch } from "./region-search.js";
import type { RegionShortcuts, Shortcuts } from "./region-shortcuts.js";
import type { RoutingInput } from "./route.js";
import type { RoutingArrays } from "./routing-arrays.js";
import { NODE_LIMIT } from "./search-queue.js";

/**
 * The searches of the region router's quotient graph (region-router.ts): its boundary nodes, the
 * edges between regions and the shortcuts inside each region ({@link RegionShortcuts}). It finds
 * which regions the corridor of a pair of regions holds ({@link QuotientSearch.corridorRegions}).
 * @internal
 */
export class QuotientSearch {
  private readonly input: RoutingInput;
  private readonly region: Int32Array;
  private readonly isBoundary: Uint8Array;
  private readonly boundaryStart: Int32Array;
  private readonly boundaryNodes: Int32Array;
  private readonly edgeLatency: Float64Array;
  private readonly nodeFirstFlit: Float64Array;
  private readonly outStart: Int32Array;
  private readonly outList: Int32Array;
  private readonly inStart: Int32Array;
  private readonly inList: Int32Array;
  private readonly shortcuts: RegionShortcuts;
  /** A quotient search, with the tight predecessors of each node and the walk back over them. */
  private readonly quotient: SearchScratch;
  private readonly marked: Int32Array;
  private readonly predHead: Int32Array;
  private predNode = new Int32Array(256);
  private predNext = new Int32Array(256);
  private predCount = 0;

  constructor(
    input: RoutingInput,
    arrays: RoutingArrays,
    partition: RegionPartition,
    shortcuts: RegionShortcuts,
  ) {
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
      inStart: this.inStart,
      inList: this.inList,
    } = arrays);
    this.shortcuts = shortcuts;
    this.quotient = new SearchScratch(nodeCount);
    this.marked = new Int32Array(nodeCount);
    this.predHead = new Int32Array(nodeCount);
  }

  /**
   * The regions of the corridor of routes from region `from` to region `to`, ascending: both, and
   * the region of every node on a best path between a boundary node of one and a boundary node of
   * the other (see RegionRouter).
   */
  corridorRegions(from: number, to: number): number[] {
    const regions = new Set<number>([from, to]);
    const fromStart = this.boundaryStart[from] as number;
    const fromEnd = this.boundaryStart[from + 1] as number;
    const toStart = this.boundaryStart[to] as number;
    const toEnd = this.boundaryStart[to + 1] as number;
    if (fromEnd > fromStart && toEnd > toStart) {
      // Search from the end with fewer links to other regions: from the host (a link to every
      // IO_CPU) into a cube, backward from the cube's boundary.
      const backward = this.crossLinks(fromStart, fromEnd, false) > this.crossLinks(toStart, toEnd, true);
      const [rootStart, rootEnd, targetRegion, targetStart, targetEnd] = backward
        ? [toStart, toEnd, from, fromStart, fromEnd]
        : [fromStart, fromEnd, to, toStart, toEnd];
      for (let k = rootStart; k < rootEnd; k++) {
        this.search(this.boundaryNodes[k] as number, backward, targetRegion, targetEnd - targetStart);
        this.markTight(targetStart, targetEnd, regions);
      }
    }
    return [...regions].sort((a, b) => a - b);
  }

  /** Edges between the boundary nodes `boundaryNodes[start .. end - 1]` and other regions: out, or in. */
  private crossLinks(start: number, end: number, incoming: boolean): number {
    const [edgeStart, edgeList, far] = incoming
      ? [this.inStart, this.inList, this.input.edgeSrc]
      : [this.outStart, this.outList, this.input.edgeDst];
    let links = 0;
    for (let k = start; k < end; k++) {
      const node = this.boundaryNodes[k] as number;
      const last = edgeStart[node + 1] as number;
      for (let j = edgeStart[node] as number; j < last; j++) {
        if (this.region[far[edgeList[j] as number] as number] !== this.region[node]) links++;
      }
    }
    return links;
  }

  /**
   * Dijkstra's algorithm by (latency, hops) over the quotient graph from boundary node `root`
   * (forward: paths from it; backward: paths to it, over the edges against their direction),
   * until the `targets` boundary nodes of region `targetRegion` are settled (or nothing is
   * left), keeping for every node reached its tight neighbours towards the root.
   */
  private search(root: number, backward: boolean, targetRegion: number, targets: number): void {
    const { region, isBoundary, quotient } = this;
    const { settled, dist, hops: hopCount, heap } = quotient;
    const forwards = this.input.forwards;
    const [edgeStart, edgeList, far] = backward
      ? [this.inStart, this.inList, this.input.edgeSrc]
      : [this.outStart, this.outList, this.input.edgeDst];
    const shortcutLists = backward ? this.shortcuts.in : this.shortcuts.out;
    this.predCount = 0;
    const stamp = quotient.start(root);
    this.predHead[root] = -1;
    let remaining = targets;
    while (heap.pop()) {
      const latency = heap.latency;
      const node = heap.entry % NODE_LIMIT;
      const hops = (heap.entry - node) / NODE_LIMIT;
      if (settled[node] === stamp || dist[node] !== latency || hopCount[node] !== hops) continue;
      settled[node] = stamp;
      const nodeRegion = region[node] as number;
      if (nodeRegion === targetRegion && isBoundary[node] === 1 && --remaining === 0) break;
      // Forward, the node passes traffic on; backward, it receives it to pass on: either way it
      // is an intermediate hop unless it is the root.
      if (node !== root && forwards[node] === 0) continue;
      const base = latency + (node === root ? 0 : (this.nodeFirstFlit[node] as number));
      const end = edgeStart[node + 1] as number;
      for (let k = edgeStart[node] as number; k < end; k++) {
        const edge = edgeList[k] as number;
        const other = far[edge] as number;
        if (region[other] === nodeRegion) continue;
        this.relax(node, other, base + (this.edgeLatency[edge] as number), hops + 1, stamp);
      }
      if (shortcutLists[node] === undefined) this.shortcuts.compute(nodeRegion);
      const shortcuts = shortcutLists[node] as Shortcuts;
      for (let k = 0; k < shortcuts.nodes.length; k++) {
        this.relax(
          node,
          shortcuts.nodes[k] as number,
          base + (shortcuts.latencies[k] as number),
          hops + (shortcuts.hops[k] as number),
          stamp,
        );
      }
    }
  }

  private relax(from: number, node: number, latency: number, hops: number, stamp: number): void {
    const { seen, settled, dist, hops: hopCount, heap } = this.quotient;
    if (seen[node] !== stamp) {
      seen[node] = stamp;
      dist[node] = latency;
      hopCount[node] = hops;
      this.predHead[node] = this.addPred(from, -1);
      heap.push(latency, hops * NODE_LIMIT + node);
      return;
    }
    if (settled[node] === stamp) return;
    const known = dist[node] as number;
    if (latency < known || (latency === known && hops < (hopCount[node] as number))) {
      dist[node] = latency;
      hopCount[node] = hops;
      this.predHead[node] = this.addPred(from, -1);
      heap.push(latency, hops * NODE_LIMIT + node);
    } else if (latency === known && hops === hopCount[node]) {
      this.predHead[node] = this.addPred(from, this.predHead[node] as number);
    }
  }

  private addPred(node: number, next: number): number {
    if (this.predCount === this.predNode.length) {
      const nodes = new Int32Array(this.predCount * 2);
      nodes.set(this.predNode);
      this.predNode = nodes;
      const nexts = new Int32Array(this.predCount * 2);
      nexts.set(this.predNext);
      this.predNext = nexts;
    }
    const index = this.predCount++;
    this.predNode[index] = node;
    this.predNext[index] = next;
    return index;
  }

  /**
   * Adds to `regions` the region of every node on a tight path of the last quotient search to a
   * settled boundary node `boundaryNodes[targetStart .. targetEnd - 1]`.
   */
  private markTight(targetStart: number, targetEnd: number, regions: Set<number>): void {
    const { stamp, settled } = this.quotient;
    const { marked, region } = this;
    const stack: number[] = [];
    for (let k = targetStart; k < targetEnd; k++) {
      const target = this.boundaryNodes[k] as number;
      if (settled[target] !== stamp || marked[target] === stamp) continue;
      marked[target] = stamp;
      stack.push(target);
    }
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      regions.add(region[node] as number);
      for (let pred = this.predHead[node] as number; pred >= 0; pred = this.predNext[pred] as number) {
        const previous = this.predNode[pred] as number;
        if (marked[previous] === stamp) continue;
        marked[previous] = stamp;
        stack.push(previous);
      }
    }
  }
}
