import type { TopologyEdge } from "./graph.js";
import { SearchScratch, type Shortcuts, shortcutsOf } from "./region-search.js";
import { noRouteError, type Route, Router, type RoutingInput, selfRoute } from "./route.js";
import { RouteCache } from "./route-cache.js";
import { groupEdges, routingArrays } from "./routing-arrays.js";
import { NODE_LIMIT } from "./search-queue.js";

/** What the region router needs: the router's input plus a region number for every node. @internal */
export interface RegionRoutingInput extends RoutingInput {
  /**
   * Region of each node, numbered from 0: any partition of the nodes gives the same routes; it
   * is fast when regions are small and joined by few nodes (TopologyGraph: one region per cube,
   * every node outside a cube a region of its own).
   */
  readonly region: Int32Array;
  /**
   * When a route is searched in the whole graph instead of a corridor (defaults below; tests set
   * both to Infinity to route every pair through corridors).
   */
  readonly wholeGraph?: {
    /**
     * An end whose routes so far used corridors of more nodes in all than this share of the graph
     * has its later routes searched in the whole graph, where one search tree serves them all
     * (default 1/4).
     */
    readonly endShare: number;
    /** A corridor of more than this share of the nodes is not used (default 1/8). */
    readonly corridorShare: number;
  };
}

/** Default of `RegionRoutingInput.wholeGraph`. */
const WHOLE_GRAPH = { endShare: 1 / 4, corridorShare: 1 / 8 } as const;

/** A Router over the nodes of some regions (a corridor), and where each global node sits in it. */
interface Corridor {
  readonly router: Router;
  /** First local node number of each region of the corridor. */
  readonly base: Map<number, number>;
  /** Its number of nodes. */
  readonly nodes: number;
}

/**
 * Best paths by the order of {@link Router}, found in a small part of the graph: the same routes
 * as a {@link Router} over the whole graph (the reference; tests compare them), at a cost that
 * does not grow with the size of the system for routes that stay local.
 *
 * **Regions.** The nodes are partitioned into regions (`RegionRoutingInput.region`); a node with
 * an edge to or from another region is a boundary node. The quotient graph has the boundary
 * nodes, the edges between regions, and a shortcut between every two boundary nodes of one region
 * weighted with the (latency, hops) of the best path between them inside the region (computed
 * per region on first use).
 *
 * **Corridors.** For a source region A and a destination region B, the corridor is A, B and
 * every region that holds a node of some path between a boundary node of A and one of B that is
 * best by (latency, hops): found by a search of the quotient graph from each boundary node of A,
 * stopped once every boundary node of B is settled, then a walk back from those over the
 * predecessors that are tight (equal latency and hops). The best route from any src in A to any
 * dst in B lies in the corridor: where it leaves A for the last time before a node x outside A
 * and B (at a boundary node a) and first enters B after x (at b), its part from a to b is a best
 * path from a to b (every part of a best path is best, the order being total and kept under
 * extension), so x's region is in the corridor. A {@link Router} over the corridor's nodes and
 * the edges between them (in the same order) then finds exactly the route the whole graph's
 * Router finds; id order, and so the tie-break, is the same in any subset of the nodes.
 *
 * Corridors are cached by (A, B), their Routers by their set of regions. With one region per
 * cube, a route inside a cube searches that cube only, a route between the host and a cube the
 * host, one IO_CPU and the cube (and a neighbour cube where it ties). The quotient search of a new
 * pair of regions is what still grows with the system: it settles the boundary nodes nearer to
 * its root than the farthest target, from whichever end has fewer links to other regions.
 *
 * **Whole graph.** Searching corridors pays off while each end meets few regions. An end whose
 * corridors add up to a quarter of the graph (`wholeGraph.endShare`: the host, which meets every
 * cube; routing all pairs of two kinds), or a pair whose corridor is a large share of the graph,
 * is routed by a Router over the whole graph, whose kept trees then serve every later route
 * from or to their roots: one search for all the host's routes, and for all pairs of two kinds
 * one search per node of the smaller kind, as before regions. An IO_CPU's routes to the cubes of
 * its SIP, or a PE's to its cube, stay in corridors.
 * @internal
 */
export class RegionRouter {
  private readonly input: RegionRoutingInput;
  private readonly region: Int32Array;
  private readonly edgeLatency: Float64Array;
  private readonly nodeFirstFlit: Float64Array;
  private readonly outStart: Int32Array;
  private readonly outList: Int32Array;
  private readonly inStart: Int32Array;
  private readonly inList: Int32Array;
  /** Nodes of each region, ascending: `regionNodes[regionStart[r] .. regionStart[r + 1] - 1]`. */
  private readonly regionStart: Int32Array;
  private readonly regionNodes: Int32Array;
  /** Position of each node in its region's node list. */
  private readonly indexInRegion: Int32Array;
  /** Boundary nodes of each region, ascending. */
  private readonly boundaryStart: Int32Array;
  private readonly boundaryNodes: Int32Array;
  private readonly isBoundary: Uint8Array;
  /**
   * Shortcuts of each boundary node, set for every boundary node of a region at once: `out` to
   * the other boundary nodes of its region, `in` from them.
   */
  private readonly shortcutsOut: (Shortcuts | undefined)[];
  private readonly shortcutsIn: (Shortcuts | undefined)[];
  /** Quotient searches (with the tight predecessors and the walk back), and searches in a region. */
  private readonly quotient: SearchScratch;
  private readonly inRegion: SearchScratch;
  private readonly marked: Int32Array;
  private readonly predHead: Int32Array;
  private predNode = new Int32Array(256);
  private predNext = new Int32Array(256);
  private predCount = 0;
  private readonly corridorByPair = new Map<number, Corridor>();
  /** The Router over the whole graph, made on first use. */
  private whole: Router | null = null;
  private readonly wholeGraph: NonNullable<RegionRoutingInput["wholeGraph"]>;
  /** For each node routed so far, the corridors its routes used, and their nodes in all. */
  private readonly endCorridors: (Corridor[] | undefined)[];
  private readonly endNodes: Float64Array;
  private readonly corridorByRegions = new Map<string, Corridor>();
  private readonly routes: RouteCache;

  constructor(input: RegionRoutingInput) {
    this.input = input;
    const nodeCount = input.ids.length;
    const edgeCount = input.edges.length;
    if (nodeCount >= NODE_LIMIT)
      throw new Error(`RegionRouter: ${nodeCount} nodes is more than the ${NODE_LIMIT} it can order`);
    if (input.region.length !== nodeCount)
      throw new Error(`RegionRouter: ${input.region.length} regions for ${nodeCount} nodes`);
    this.region = input.region;
    this.routes = new RouteCache(nodeCount);
    this.endCorridors = new Array<Corridor[] | undefined>(nodeCount);
    this.endNodes = new Float64Array(nodeCount);
    this.wholeGraph = input.wholeGraph ?? WHOLE_GRAPH;
    ({
      edgeLatency: this.edgeLatency,
      nodeFirstFlit: this.nodeFirstFlit,
      outStart: this.outStart,
      outList: this.outList,
      inStart: this.inStart,
      inList: this.inList,
    } = routingArrays(input));

    let regionCount = 0;
    for (let n = 0; n < nodeCount; n++) {
      const r = this.region[n] as number;
      if (!Number.isInteger(r) || r < 0) throw new Error(`RegionRouter: node ${n} has region ${r}`);
      if (r >= regionCount) regionCount = r + 1;
    }
    [this.regionStart, this.regionNodes] = groupEdges(regionCount, this.region);
    this.indexInRegion = new Int32Array(nodeCount);
    for (let r = 0; r < regionCount; r++) {
      const end = this.regionStart[r + 1] as number;
      for (let k = this.regionStart[r] as number; k < end; k++) {
        this.indexInRegion[this.regionNodes[k] as number] = k - (this.regionStart[r] as number);
      }
    }
    this.isBoundary = new Uint8Array(nodeCount);
    const { edgeSrc, edgeDst } = input;
    for (let e = 0; e < edgeCount; e++) {
      const a = edgeSrc[e] as number;
      const b = edgeDst[e] as number;
      if (this.region[a] !== this.region[b]) {
        this.isBoundary[a] = 1;
        this.isBoundary[b] = 1;
      }
    }
    const boundaryRegion: number[] = [];
    const boundaryOf: number[] = [];
    for (let n = 0; n < nodeCount; n++) {
      if (this.isBoundary[n] === 1) {
        boundaryRegion.push(this.region[n] as number);
        boundaryOf.push(n);
      }
    }
    const [boundaryStart, boundaryIndex] = groupEdges(regionCount, Int32Array.from(boundaryRegion));
    this.boundaryStart = boundaryStart;
    this.boundaryNodes = boundaryIndex.map((k) => boundaryOf[k] as number);
    this.shortcutsOut = new Array<Shortcuts | undefined>(nodeCount);
    this.shortcutsIn = new Array<Shortcuts | undefined>(nodeCount);
    this.quotient = new SearchScratch(nodeCount);
    this.inRegion = new SearchScratch(nodeCount);
    this.marked = new Int32Array(nodeCount);
    this.predHead = new Int32Array(nodeCount);
  }

  /** Edge numbers leaving node `node`, in insertion order. */
  outEdgeNumbers(node: number): Int32Array {
    return this.outList.subarray(this.outStart[node] as number, this.outStart[node + 1] as number);
  }

  /** Searches run so far, in corridors and in the whole graph (diagnostics). */
  get searches(): number {
    let total = this.whole?.searches ?? 0;
    for (const corridor of this.corridorByRegions.values()) total += corridor.router.searches;
    return total;
  }

  /** Searches run so far over the whole graph (diagnostics). */
  get wholeGraphSearches(): number {
    return this.whole?.searches ?? 0;
  }

  /** Corridors built so far (diagnostics). */
  get corridors(): number {
    return this.corridorByRegions.size;
  }

  /**
   * How many nodes the search for `src` -> `dst` runs over (the corridor of their regions; 0 for
   * `src === dst`); diagnostics and tests.
   */
  corridorNodes(src: number, dst: number): number {
    if (src === dst) return 0;
    return this.corridor(this.region[src] as number, this.region[dst] as number).nodes;
  }

  /** The best route from node `src` to node `dst`; throws `TOPOLOGY_NO_ROUTE` when there is none. */
  route(src: number, dst: number): Route {
    return this.routes.get(src, dst, this.find);
  }

  private readonly find = (src: number, dst: number): Route => this.findRoute(src, dst);

  /**
   * The best route from `src` to `dst`, not kept (a new object every call; corridors and search
   * trees are kept as for {@link route}): for callers that cache what they make of routes.
   */
  findRoute(src: number, dst: number): Route {
    let route: Route;
    if (src === dst) {
      route = selfRoute(this.input.ids[src] as string);
    } else {
      const from = this.region[src] as number;
      const to = this.region[dst] as number;
      const corridor = this.inWholeGraph(src, dst, from, to) ? null : this.corridor(from, to);
      try {
        if (corridor === null) {
          route = this.wholeRouter().findRoute(src, dst);
        } else {
          const local = (node: number) =>
            (corridor.base.get(this.region[node] as number) as number) + (this.indexInRegion[node] as number);
          route = corridor.router.findRoute(local(src), local(dst));
        }
      } catch (error) {
        // No path in the corridor means none in the graph; name the ends as the whole graph sees them.
        if ((error as { code?: unknown }).code !== "TOPOLOGY_NO_ROUTE") throw error;
        throw noRouteError(
          this.input.ids,
          src,
          dst,
          this.outStart[src] !== this.outStart[src + 1],
          this.inStart[dst] !== this.inStart[dst + 1],
        );
      }
    }
    return route;
  }

  /**
   * Whether `src` -> `dst` is searched in the whole graph: when a kept whole-graph tree serves it,
   * when its corridor is a large share of the graph, or when either end's corridors add up to more
   * than `wholeGraph.endShare` of the graph (routing all pairs of two kinds: one whole-graph
   * search per node of the smaller kind, as a Router does).
   */
  private inWholeGraph(src: number, dst: number, from: number, to: number): boolean {
    if (this.whole?.hasTree(src, dst) === true) return true;
    const corridor = this.corridor(from, to);
    const nodes = this.input.ids.length;
    if (corridor.nodes > this.wholeGraph.corridorShare * nodes) return true;
    const limit = this.wholeGraph.endShare * nodes;
    // Both ends are noted (no short cut): each end's count is what its own later routes see.
    const srcNodes = this.noteCorridor(src, corridor);
    const dstNodes = this.noteCorridor(dst, corridor);
    return srcNodes > limit || dstNodes > limit;
  }

  /** Records that a route of `node` used `corridor`; returns the nodes of its corridors in all. */
  private noteCorridor(node: number, corridor: Corridor): number {
    let used = this.endCorridors[node];
    if (used === undefined) {
      used = [];
      this.endCorridors[node] = used;
    }
    if (!used.includes(corridor)) {
      used.push(corridor);
      this.endNodes[node] = (this.endNodes[node] as number) + corridor.nodes;
    }
    return this.endNodes[node] as number;
  }

  private wholeRouter(): Router {
    if (this.whole === null) this.whole = new Router(this.input);
    return this.whole;
  }

  /** The corridor of routes from region `from` to region `to` (see the class comment). */
  private corridor(from: number, to: number): Corridor {
    const pairKey = from * (this.regionStart.length - 1) + to;
    const known = this.corridorByPair.get(pairKey);
    if (known !== undefined) return known;
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
        this.searchQuotient(this.boundaryNodes[k] as number, backward, targetRegion, targetEnd - targetStart);
        this.markTight(targetStart, targetEnd, regions);
      }
    }
    const sorted = [...regions].sort((a, b) => a - b);
    const regionsKey = sorted.join(",");
    let corridor = this.corridorByRegions.get(regionsKey);
    if (corridor === undefined) {
      corridor = this.buildCorridor(sorted);
      this.corridorByRegions.set(regionsKey, corridor);
    }
    this.corridorByPair.set(pairKey, corridor);
    return corridor;
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
  private searchQuotient(root: number, backward: boolean, targetRegion: number, targets: number): void {
    const { region, isBoundary, quotient } = this;
    const { settled, dist, hops: hopCount, heap } = quotient;
    const forwards = this.input.forwards;
    const [edgeStart, edgeList, far] = backward
      ? [this.inStart, this.inList, this.input.edgeSrc]
      : [this.outStart, this.outList, this.input.edgeDst];
    const shortcutLists = backward ? this.shortcutsIn : this.shortcutsOut;
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
      if (shortcutLists[node] === undefined) this.computeShortcuts(nodeRegion);
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

  /**
   * The shortcuts of every boundary node of region `r`: (latency, hops) of the best path to each
   * other boundary node of `r` that stays in `r` (the root always sends; other nodes pass
   * traffic on only when they forward), kept at both ends.
   */
  private computeShortcuts(r: number): void {
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
      this.shortcutsOut[root] = shortcutsOf(to, latencies, hopList);
    }
    for (const [node, into] of incoming)
      this.shortcutsIn[node] = shortcutsOf(into.nodes, into.latencies, into.hops);
  }

  /** A Router over the nodes of `regions` (ascending) and the edges between them, in edge order. */
  private buildCorridor(regions: readonly number[]): Corridor {
    const { ids, edges, edgeSrc, edgeDst, firstFlitNs, forwards, kindSize, direction } = this.input;
    const { region, regionStart, regionNodes, indexInRegion, outStart, outList } = this;
    const base = new Map<number, number>();
    let nodeCount = 0;
    for (const r of regions) {
      base.set(r, nodeCount);
      nodeCount += (regionStart[r + 1] as number) - (regionStart[r] as number);
    }
    const localIds = new Array<string>(nodeCount);
    const localFirstFlit = new Float64Array(nodeCount);
    const localForwards = new Uint8Array(nodeCount);
    const localKindSize = new Int32Array(nodeCount);
    const edgeNumbers: number[] = [];
    let local = 0;
    for (const r of regions) {
      const end = regionStart[r + 1] as number;
      for (let k = regionStart[r] as number; k < end; k++, local++) {
        const node = regionNodes[k] as number;
        localIds[local] = ids[node] as string;
        localFirstFlit[local] = firstFlitNs[node] as number;
        localForwards[local] = forwards[node] as number;
        localKindSize[local] = kindSize[node] as number;
        const last = outStart[node + 1] as number;
        for (let j = outStart[node] as number; j < last; j++) {
          const edge = outList[j] as number;
          const far = region[edgeDst[edge] as number] as number;
          if (far === r || base.has(far)) edgeNumbers.push(edge);
        }
      }
    }
    // Edge order decides between parallel edges of equal latency: keep the graph's.
    const sorted = Float64Array.from(edgeNumbers).sort();
    const edgeCount = sorted.length;
    const localEdges = new Array<TopologyEdge>(edgeCount);
    const localSrc = new Int32Array(edgeCount);
    const localDst = new Int32Array(edgeCount);
    for (let e = 0; e < edgeCount; e++) {
      const edge = sorted[e] as number;
      const src = edgeSrc[edge] as number;
      const dst = edgeDst[edge] as number;
      localEdges[e] = edges[edge] as TopologyEdge;
      localSrc[e] = (base.get(region[src] as number) as number) + (indexInRegion[src] as number);
      localDst[e] = (base.get(region[dst] as number) as number) + (indexInRegion[dst] as number);
    }
    const router = new Router({
      ids: localIds,
      edges: localEdges,
      edgeSrc: localSrc,
      edgeDst: localDst,
      firstFlitNs: localFirstFlit,
      forwards: localForwards,
      kindSize: localKindSize,
      ...(direction === undefined ? {} : { direction }),
    });
    return { router, base, nodes: nodeCount };
  }
}
