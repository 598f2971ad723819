import { buildCorridor, type Corridor } from "./region-corridor.js";
import { type RegionPartition, regionPartition } from "./region-partition.js";
import { QuotientSearch } from "./region-quotient.js";
import { RegionShortcuts } from "./region-shortcuts.js";
import { noRouteError, type Route, Router, type RoutingInput, selfRoute } from "./route.js";
import { RouteCache } from "./route-cache.js";
import { type RoutingArrays, routingArrays } from "./routing-arrays.js";
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
 *
 * **Modules.** The regions and boundary nodes are a {@link RegionPartition} (region-partition.ts),
 * the shortcuts {@link RegionShortcuts} (region-shortcuts.ts), the quotient search and the walk
 * back {@link QuotientSearch} (region-quotient.ts), and a corridor's Router is built by
 * {@link buildCorridor} (region-corridor.ts); this class keeps the caches and chooses between
 * corridors and the whole graph.
 * @internal
 */
export class RegionRouter {
  private readonly input: RegionRoutingInput;
  private readonly region: Int32Array;
  private readonly indexInRegion: Int32Array;
  private readonly arrays: RoutingArrays;
  private readonly partition: RegionPartition;
  /** The quotient graph's searches, which choose the regions of each corridor. */
  private readonly quotient: QuotientSearch;
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
    if (nodeCount >= NODE_LIMIT)
      throw new Error(`RegionRouter: ${nodeCount} nodes is more than the ${NODE_LIMIT} it can order`);
    if (input.region.length !== nodeCount)
      throw new Error(`RegionRouter: ${input.region.length} regions for ${nodeCount} nodes`);
    this.routes = new RouteCache(nodeCount);
    this.endCorridors = new Array<Corridor[] | undefined>(nodeCount);
    this.endNodes = new Float64Array(nodeCount);
    this.wholeGraph = input.wholeGraph ?? WHOLE_GRAPH;
    this.arrays = routingArrays(input);
    this.partition = regionPartition(input);
    ({ region: this.region, indexInRegion: this.indexInRegion } = this.partition);
    const shortcuts = new RegionShortcuts(input, this.arrays, this.partition);
    this.quotient = new QuotientSearch(input, this.arrays, this.partition, shortcuts);
  }

  /** Edge numbers leaving node `node`, in insertion order. */
  outEdgeNumbers(node: number): Int32Array {
    const { outStart, outList } = this.arrays;
    return outList.subarray(outStart[node] as number, outStart[node + 1] as number);
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
        const { outStart, inStart } = this.arrays;
        throw noRouteError(
          this.input.ids,
          src,
          dst,
          outStart[src] !== outStart[src + 1],
          inStart[dst] !== inStart[dst + 1],
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
    const pairKey = from * this.partition.regionCount + to;
    const known = this.corridorByPair.get(pairKey);
    if (known !== undefined) return known;
    const sorted = this.quotient.corridorRegions(from, to);
    const regionsKey = sorted.join(",");
    let corridor = this.corridorByRegions.get(regionsKey);
    if (corridor === undefined) {
      corridor = buildCorridor(this.input, this.arrays, this.partition, sorted);
      this.corridorByRegions.set(regionsKey, corridor);
    }
    this.corridorByPair.set(pairKey, corridor);
    return corridor;
  }
}
