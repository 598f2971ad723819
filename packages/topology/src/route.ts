import { KbError } from "@kb/errors";
import type { TopologyEdge } from "./graph.js";
import type { RegionRouter } from "./region-router.js";
import { RouteCache } from "./route-cache.js";
import { LATENCY_UNITS_PER_NS, routingArrays } from "./routing-arrays.js";
import { NODE_LIMIT, SearchQueue } from "./search-queue.js";

/**
 * A path through the topology graph from `src` to `dst`, the best one by the order of
 * {@link TopologyGraph.route}.
 */
export interface Route {
  /** Node id the route starts at. */
  readonly src: string;
  /** Node id the route ends at. */
  readonly dst: string;
  /** Node ids along the route: `src` first, `dst` last (just `[src]` when `src === dst`). */
  readonly hops: readonly string[];
  /** The directed edges taken, in order: `links[i]` goes from `hops[i]` to `hops[i + 1]`. */
  readonly links: readonly TopologyEdge[];
  /**
   * Latency of the first byte in ns: the sum of the link latencies plus the overhead of every
   * intermediate hop (neither `src` nor `dst`; only forwarding kinds are intermediate hops): its
   * `first_flit_ns` (routers, XBAR halves, bridge, UCIe ports) or `forward_ns` (IO_CPU,
   * M_CPU.DMA), 0 for the other forwarding kinds. Each term is rounded to 1e-9 ns and the terms
   * are summed exactly (so 0.02 + 1 + 0.01 gives 1.03, not 1.0300000000000002). 0 when
   * `src === dst`.
   */
  readonly latencyNs: number;
  /** The smallest link bandwidth along the route in GB/s (bytes/ns); Infinity when `src === dst`. */
  readonly minBwGbs: number;
}

/**
 * Time in ns of an uncontended transfer of `bytes` along `route` (DESIGN §2, cut-through with
 * pipelined flits): `sum(link latency) + sum(overhead of intermediate hops) + bytes / min(bw)`,
 * where a hop's overhead is its `first_flit_ns` (routers, XBAR halves, bridge, UCIe ports) or
 * `forward_ns` (IO_CPU, M_CPU.DMA), and only forwarding kinds are intermediate hops; that is
 * `route.latencyNs + bytes / route.minBwGbs`. The simulation of the same transfer may be
 * slower (contention) but never faster.
 *
 * Throws `TOPOLOGY_INVALID` when `bytes` is negative, NaN or infinite.
 */
export function idealTransferNs(route: Route, bytes: number): number {
  if (typeof bytes !== "number" || !Number.isFinite(bytes) || bytes < 0) {
    throw new KbError(
      "TOPOLOGY_INVALID",
      `idealTransferNs(${route.src} -> ${route.dst}) needs a finite number of bytes >= 0, got ${String(bytes)}. Check the size computation.`,
    );
  }
  return route.latencyNs + bytes / route.minBwGbs;
}

/** The route of a node to itself: no links, latency 0, unlimited bandwidth. @internal */
export function selfRoute(id: string): Route {
  return { src: id, dst: id, hops: [id], links: [], latencyNs: 0, minBwGbs: Number.POSITIVE_INFINITY };
}

/**
 * The `TOPOLOGY_NO_ROUTE` error for `src` -> `dst` (node numbers into `ids`): it blames the end
 * without links (`hasOut`: `src` has outgoing edges, `hasIn`: `dst` has incoming edges), else the
 * link patterns. @internal
 */
export function noRouteError(
  ids: readonly string[],
  src: number,
  dst: number,
  hasOut: boolean,
  hasIn: boolean,
): KbError {
  let why = "Check the link patterns that join SIPs and cubes (system.sip_link.pattern, sip.ucie.pattern).";
  if (!hasOut) {
    why = `"${ids[src]}" has no outgoing links: containers (sip, cube, pe) and the HBM controller are not on any path; route from a component.`;
  } else if (!hasIn) {
    why = `"${ids[dst]}" has no incoming links: containers (sip, cube, pe) and the HBM controller are not on any path; route to a component (an HBM channel or pseudo-channel for HBM).`;
  }
  return new KbError(
    "TOPOLOGY_NO_ROUTE",
    `no path leads from "${ids[src]}" to "${ids[dst]}" over the directed links. ${why}`,
    { context: { nodeId: ids[src] as string } },
  );
}

/**
 * Trees of best paths kept at once, in Int32 entries (one per node per tree): 2^25 entries are
 * 128 MiB. The oldest trees are dropped first; a dropped tree is recomputed on demand, with the
 * same result.
 */
const MAX_TREE_ENTRIES = 2 ** 25;

/** What the router needs of a graph, as flat arrays indexed by node and edge number. @internal */
export interface RoutingInput {
  /** Node ids by node number. */
  readonly ids: readonly string[];
  /** Edges by edge number. */
  readonly edges: readonly TopologyEdge[];
  /** Source node number of each edge. */
  readonly edgeSrc: Int32Array;
  /** Destination node number of each edge. */
  readonly edgeDst: Int32Array;
  /** Overhead of each node as an intermediate hop: `first_flit_ns` or `forward_ns` (0 when none). */
  readonly firstFlitNs: Float64Array;
  /** 1 for nodes that may be intermediate hops (forwarding kinds), 0 for endpoints only. */
  readonly forwards: Uint8Array;
  /** For each node, how many nodes have its kind (chooses which end a search starts from). */
  readonly kindSize: Int32Array;
  /** Which searches to run on a cache miss (tests): by kind sizes (the default), or always one way. */
  readonly direction?: "auto" | "forward" | "backward";
}

const UNSEEN = 0;
const QUEUED = 1;
const SETTLED = 2;

/**
 * Best paths with caching, by Dijkstra's algorithm over the directed edges of the graph it is
 * given. TopologyGraph routes with a {@link RegionRouter}, which runs Routers over small parts of
 * the graph; a Router over the whole graph is the reference its tests compare with.
 *
 * **Order.** Paths from `src` to `dst` are ordered by (latency, number of hops, the sequence of
 * node ids compared element by element with JavaScript string order); the route is the least
 * path. Only forwarding nodes (`RoutingInput.forwards`) are intermediate nodes. Latency counts
 * every edge and the overhead (`first_flit_ns` or `forward_ns`) of every intermediate node, on
 * the 1e-9 ns grid of {@link LATENCY_UNITS_PER_NS}. The order is total and survives extension (two
 * paths to one node keep their order when both are extended by the same edge), so every prefix
 * and every suffix of a best path is itself best and Dijkstra's algorithm finds it.
 *
 * **Searches.** A search is either forward from a source (a tree of best paths to every node) or
 * backward to a destination (a tree of best paths from every node). Ties in (latency, hops) are
 * broken exactly: forward, two candidate predecessors of equal depth are compared by walking
 * their predecessor chains back to where they meet, the first difference from the source
 * deciding; backward, the first difference of two candidate paths is their next node, so the
 * next node ids decide. Because the order is total, both searches give the same path, so which
 * one runs (and what was cached before) never changes a result.
 *
 * **Which search.** A route found in a cached tree is taken from it. Otherwise one search runs
 * from the end whose kind has fewer nodes, forward on a tie, and its tree is kept: routing every
 * node of one kind to every node of another (4096 `pe_dma` to 512 `hbm_channel`, in either loop
 * order) runs one search per node of the smaller kind (512 backward searches).
 *
 * Each search is Dijkstra's algorithm with the {@link SearchQueue}.
 * @internal
 */
export class Router {
  private readonly input: RoutingInput;
  private readonly nodeCount: number;
  private readonly edgeLatency: Float64Array;
  private readonly nodeFirstFlit: Float64Array;
  private readonly outStart: Int32Array;
  private readonly outList: Int32Array;
  private readonly inStart: Int32Array;
  private readonly inList: Int32Array;
  /** Position of each node id in sorted order (string comparison), for the tie-break. */
  private rank: Int32Array | null = null;
  // Scratch of one search, allocated on the first search.
  private dist: Float64Array = new Float64Array(0);
  private hops: Int32Array = new Int32Array(0);
  private via: Int32Array = new Int32Array(0);
  private state: Uint8Array = new Uint8Array(0);
  private readonly queue = new SearchQueue();
  /** Trees by `root * 2 + (backward ? 1 : 0)`, oldest first. */
  private readonly trees = new Map<number, Int32Array>();
  private treeEntries = 0;
  private readonly routes: RouteCache;
  /** Number of searches run so far (diagnostics and benches). */
  searches = 0;

  constructor(input: RoutingInput) {
    this.input = input;
    const nodeCount = input.ids.length;
    if (nodeCount >= NODE_LIMIT)
      throw new Error(`Router: ${nodeCount} nodes is more than the ${NODE_LIMIT} it can order`);
    this.nodeCount = nodeCount;
    this.routes = new RouteCache(nodeCount);
    ({
      edgeLatency: this.edgeLatency,
      nodeFirstFlit: this.nodeFirstFlit,
      outStart: this.outStart,
      outList: this.outList,
      inStart: this.inStart,
      inList: this.inList,
    } = routingArrays(input));
  }

  /** Edge numbers leaving node `node`, in insertion order. */
  outEdgeNumbers(node: number): Int32Array {
    return this.outList.subarray(this.outStart[node] as number, this.outStart[node + 1] as number);
  }

  /** Whether a kept search tree serves `src` -> `dst` (a route then costs no search). @internal */
  hasTree(src: number, dst: number): boolean {
    return this.trees.has(src * 2) || this.trees.has(dst * 2 + 1);
  }

  /** The best route from node `src` to node `dst`; throws `TOPOLOGY_NO_ROUTE` when there is none. */
  route(src: number, dst: number): Route {
    return this.routes.get(src, dst, this.find);
  }

  private readonly find = (src: number, dst: number): Route => this.findRoute(src, dst);

  /**
   * The best route from node `src` to node `dst`, not kept (a new object every call; the search
   * trees are kept as for {@link route}): for callers that cache routes themselves. Throws as
   * {@link route}. @internal
   */
  findRoute(src: number, dst: number): Route {
    const ids = this.input.ids;
    if (src === dst) return selfRoute(ids[src] as string);
    let tree = this.trees.get(src * 2);
    let backward = false;
    if (tree === undefined) {
      tree = this.trees.get(dst * 2 + 1);
      backward = tree !== undefined;
    }
    if (tree === undefined) {
      const { kindSize, direction = "auto" } = this.input;
      backward =
        direction === "auto"
          ? (kindSize[dst] as number) < (kindSize[src] as number)
          : direction === "backward";
      tree = backward ? this.search(dst, true) : this.search(src, false);
    }
    // Walk the tree from the far end (backward trees lead from src to dst, forward ones from dst
    // back to src) for the latency and the narrowest link; the hop and link lists are built only
    // when read, so routing all pairs of a large topology does not allocate them all.
    const { edges, edgeSrc, edgeDst } = this.input;
    let linkCount = 0;
    let latency = 0;
    let minBwGbs = Number.POSITIVE_INFINITY;
    for (let node = backward ? src : dst; node !== (backward ? dst : src); linkCount++) {
      const edgeNumber = tree[node] as number;
      if (edgeNumber < 0) throw this.noRoute(src, dst);
      latency += this.edgeLatency[edgeNumber] as number;
      // Every node a link leaves, but src, is an intermediate hop.
      if (edgeSrc[edgeNumber] !== src) latency += this.nodeFirstFlit[edgeSrc[edgeNumber] as number] as number;
      const bwGbs = (edges[edgeNumber] as TopologyEdge).bwGbs;
      if (bwGbs < minBwGbs) minBwGbs = bwGbs;
      node = (backward ? edgeDst[edgeNumber] : edgeSrc[edgeNumber]) as number;
    }
    return new TreeRoute(
      this.input,
      tree,
      backward,
      src,
      dst,
      linkCount,
      latency / LATENCY_UNITS_PER_NS,
      minBwGbs,
    );
  }

  private noRoute(src: number, dst: number): KbError {
    return noRouteError(
      this.input.ids,
      src,
      dst,
      this.outStart[src] !== this.outStart[src + 1],
      this.inStart[dst] !== this.inStart[dst + 1],
    );
  }

  /**
   * Runs one search from `root` (forward) or to `root` (backward) and caches its tree: for each
   * node the edge number towards the root (forward: the edge into the node on its best path
   * from the root; backward: the edge out of the node on its best path to the root), -1 for
   * the root and for nodes with no path.
   */
  private search(root: number, backward: boolean): Int32Array {
    this.searches++;
    const nodeCount = this.nodeCount;
    if (this.dist.length !== nodeCount) {
      this.dist = new Float64Array(nodeCount);
      this.hops = new Int32Array(nodeCount);
      this.via = new Int32Array(nodeCount);
      this.state = new Uint8Array(nodeCount);
    }
    if (this.rank === null) this.rank = rankIds(this.input.ids);
    const { dist, hops, via, state } = this;
    const rank = this.rank;
    const latency = this.edgeLatency;
    const firstFlit = this.nodeFirstFlit;
    const { edgeSrc, edgeDst, forwards } = this.input;
    const start = backward ? this.inStart : this.outStart;
    const list = backward ? this.inList : this.outList;
    // The far end of an edge as seen from the settled node.
    const far = backward ? edgeSrc : edgeDst;
    const queue = this.queue;
    state.fill(UNSEEN);
    via.fill(-1);
    dist[root] = 0;
    hops[root] = 0;
    state[root] = QUEUED;
    queue.push(root, 0, 0);
    for (;;) {
      const entry = queue.pop();
      if (entry < 0) break;
      const node = entry % NODE_LIMIT;
      // Entries left behind by a later improvement of their node are skipped.
      if (
        state[node] === SETTLED ||
        dist[node] !== queue.latency ||
        hops[node] !== (entry - node) / NODE_LIMIT
      ) {
        continue;
      }
      state[node] = SETTLED;
      // Only forwarding nodes carry traffic through; any other node is an endpoint only.
      if (node !== root && forwards[node] === 0) continue;
      const base = (dist[node] as number) + (node === root ? 0 : (firstFlit[node] as number));
      const nextHops = (hops[node] as number) + 1;
      const end = start[node + 1] as number;
      for (let k = start[node] as number; k < end; k++) {
        const edge = list[k] as number;
        const other = far[edge] as number;
        const otherState = state[other] as number;
        if (otherState === SETTLED) continue;
        const candidate = base + (latency[edge] as number);
        if (otherState === UNSEEN) {
          dist[other] = candidate;
          hops[other] = nextHops;
          via[other] = edge;
          state[other] = QUEUED;
          queue.push(other, candidate, nextHops);
          continue;
        }
        const known = dist[other] as number;
        if (candidate < known || (candidate === known && nextHops < (hops[other] as number))) {
          dist[other] = candidate;
          hops[other] = nextHops;
          via[other] = edge;
          queue.push(other, candidate, nextHops);
        } else if (candidate === known && nextHops === hops[other]) {
          // Equal latency and hops: the lexicographically smaller node sequence wins.
          const current = via[other] as number;
          if (backward) {
            const currentNext = edgeDst[current] as number;
            if (currentNext !== node && (rank[node] as number) < (rank[currentNext] as number)) {
              via[other] = edge;
            }
          } else if (this.forwardPathBefore(node, edgeSrc[current] as number, rank)) {
            via[other] = edge;
          }
        }
      }
    }
    const tree = via.slice();
    const key = root * 2 + (backward ? 1 : 0);
    this.trees.set(key, tree);
    this.treeEntries += nodeCount;
    for (const [oldKey, oldTree] of this.trees) {
      if (this.treeEntries <= MAX_TREE_ENTRIES || oldKey === key) break;
      this.trees.delete(oldKey);
      this.treeEntries -= oldTree.length;
    }
    return tree;
  }

  /**
   * Whether the best path from the root to settled node `a` comes before the one to settled
   * node `b` (same number of hops) in node-id order: walk both predecessor chains back in step
   * until they meet; the last pair that differed is the first difference from the root.
   */
  private forwardPathBefore(a: number, b: number, rank: Int32Array): boolean {
    if (a === b) return false;
    const { via } = this;
    const edgeSrc = this.input.edgeSrc;
    let x = a;
    let y = b;
    let lastX = a;
    let lastY = b;
    while (x !== y) {
      lastX = x;
      lastY = y;
      x = edgeSrc[via[x] as number] as number;
      y = edgeSrc[via[y] as number] as number;
    }
    return (rank[lastX] as number) < (rank[lastY] as number);
  }
}

/** The position of each id in string order. */
function rankIds(ids: readonly string[]): Int32Array {
  const order = Array.from(ids.keys()).sort((a, b) => {
    const idA = ids[a] as string;
    const idB = ids[b] as string;
    return idA < idB ? -1 : idA > idB ? 1 : 0;
  });
  const rank = new Int32Array(ids.length);
  order.forEach((node, position) => {
    rank[node] = position;
  });
  return rank;
}

/**
 * A route read off a search tree: `latencyNs` and `minBwGbs` at once, `hops` and `links` built on
 * each read (not kept: a large machine holds a route per PE and memory port, and reads each
 * route's lists once, to compile it).
 * @internal
 */
class TreeRoute implements Route {
  readonly src: string;
  readonly dst: string;
  readonly latencyNs: number;
  readonly minBwGbs: number;

  constructor(
    private readonly input: RoutingInput,
    private readonly tree: Int32Array,
    private readonly backward: boolean,
    private readonly srcNumber: number,
    private readonly dstNumber: number,
    private readonly linkCount: number,
    latencyNs: number,
    minBwGbs: number,
  ) {
    this.src = input.ids[srcNumber] as string;
    this.dst = input.ids[dstNumber] as string;
    this.latencyNs = latencyNs;
    this.minBwGbs = minBwGbs;
  }

  get hops(): readonly string[] {
    const { ids, edgeDst } = this.input;
    const path = this.edgePath();
    const hops = new Array<string>(path.length + 1);
    hops[0] = this.src;
    for (let i = 0; i < path.length; i++) hops[i + 1] = ids[edgeDst[path[i] as number] as number] as string;
    return hops;
  }

  get links(): readonly TopologyEdge[] {
    const edges = this.input.edges;
    return Array.from(this.edgePath(), (edge) => edges[edge] as TopologyEdge);
  }

  /** A plain object with every field (what `JSON.stringify` and test equality see). */
  toJSON(): Route {
    return {
      src: this.src,
      dst: this.dst,
      hops: this.hops,
      links: this.links,
      latencyNs: this.latencyNs,
      minBwGbs: this.minBwGbs,
    };
  }

  /** The edge numbers of the route, from src to dst. */
  private edgePath(): Int32Array {
    const { edgeSrc, edgeDst } = this.input;
    const { tree, backward, linkCount } = this;
    const path = new Int32Array(linkCount);
    let node = backward ? this.srcNumber : this.dstNumber;
    for (let step = 0; step < linkCount; step++) {
      const edge = tree[node] as number;
      path[backward ? step : linkCount - 1 - step] = edge;
      node = (backward ? edgeDst[edge] : edgeSrc[edge]) as number;
    }
    return path;
  }
}
