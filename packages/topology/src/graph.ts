import { closest, KbError } from "@kb/errors";
import { type HbmAddressMap, hbmAddressMap } from "./hbm-mapping.js";
import { dimensionOrder } from "./noc-routing.js";
import { RegionRouter } from "./region-router.js";
import type { Route } from "./route.js";
import { hbmOrganisationOf, type Topology } from "./schema.js";

/**
 * The kinds that carry traffic through them: a route may pass through these and starts or ends
 * anywhere. Routers, XBAR halves, the bridge and UCIe ports forward; an HBM channel leads to its
 * pseudo-channels; the IO_CPU and M_CPU.DMA forward host and inter-SIP DMA traffic (paying their
 * `forward_ns`); the PE scheduler and fetch/store unit pass work between the engines of their
 * PE. Nothing else forwards: not the host (SIPs talk over their own links), not a PE_DMA (a PE
 * is not a shortcut between the NOC and the XBAR), not M_CPU, SRAM or the engines.
 */
export const FORWARDING_KINDS: ReadonlySet<string> = new Set([
  "noc_router",
  "xbar",
  "bridge",
  "ucie_port",
  "hbm_channel",
  "io_cpu",
  "m_cpu_dma",
  "pe_scheduler",
  "pe_fetch_store",
]);

/** One node of the expanded topology graph: a component instance or a container (SIP, cube, PE). */
export interface TopologyNode {
  /** Hierarchical id, such as `sip0.cube1.pe3.pe_gemm` (see {@link expandTopology}). */
  readonly id: string;
  /** Component kind (`pe_gemm`, `noc_router`, ...) or container kind (`host`, `sip`, `cube`, `pe`, `hbm_channel`, `hbm_pc`). */
  readonly kind: string;
  /** The implementation that times it (`"pe_gemm_v1"`, `"@scope/pkg:impl"`); null for containers. */
  readonly impl: string | null;
  /** The implementation's parameters after overrides (checked later by the implementation's schema). */
  readonly params: Readonly<Record<string, unknown>>;
  /** Id of the enclosing node (`sip0.cube1` for `sip0.cube1.m_cpu`); null for `host` and `sip{s}`. */
  readonly parent: string | null;
  /** SIP index, null for `host`. */
  readonly sip: number | null;
  /** Cube index within the SIP, null above cube level. */
  readonly cube: number | null;
  /** PE index within the cube (`row * cols + col`) for a PE and its components, else null. */
  readonly pe: number | null;
  /** Grid position for NOC routers, PEs and PE components, else null. */
  readonly coords: { readonly row: number; readonly col: number } | null;
}

/** A directed edge; a bidirectional link is two edges. */
export interface TopologyEdge {
  /** Node id the edge leaves. */
  readonly src: string;
  /** Node id the edge enters. */
  readonly dst: string;
  /** Bandwidth in GB/s (bytes/ns). */
  readonly bwGbs: number;
  /** Latency in ns: `latency_ns` if the link gives one, else `length_mm x wire_delay_ns_per_mm`. */
  readonly latencyNs: number;
  /** Wire length in mm (0 when the link gives a latency or nothing). */
  readonly lengthMm: number;
}

export type LinkPattern = Topology["sip"]["ucie"]["pattern"];

export interface LinkLike {
  readonly bw_gbs: number;
  readonly length_mm?: number | undefined;
  readonly latency_ns?: number | undefined;
}

export interface EdgeShape {
  readonly bwGbs: number;
  readonly latencyNs: number;
  readonly lengthMm: number;
}

export type Coords = { readonly row: number; readonly col: number };
export type Params = Readonly<Record<string, unknown>>;

export interface BuildNode {
  id: string;
  kind: string;
  impl: string | null;
  params: Params;
  parent: string | null;
  sip: number | null;
  cube: number | null;
  pe: number | null;
  coords: Coords | null;
}

/** Node numbers of the parts of one cube that have lookups. */
export interface CubeParts {
  readonly pes: readonly number[];
  readonly channels: readonly number[];
  readonly pseudoChannels: readonly number[];
}

/** What {@link expandTopology} hands to the {@link TopologyGraph} constructor. @internal */
export interface GraphParts {
  readonly nodes: readonly TopologyNode[];
  readonly index: ReadonlyMap<string, number>;
  readonly edges: readonly TopologyEdge[];
  readonly edgeSrc: Int32Array;
  readonly edgeDst: Int32Array;
  readonly parents: Int32Array;
  readonly cubes: ReadonlyMap<string, CubeParts>;
}

/**
 * The expanded topology: nodes, directed edges, lookups and cached routes. Build it with
 * {@link expandTopology}. Immutable once built; safe to share between the runs of one process.
 */
export class TopologyGraph {
  /** The resolved spec the graph was expanded from. */
  readonly topology: Topology;
  /** Every node, in expansion order (see {@link expandTopology}). */
  readonly nodes: readonly TopologyNode[];
  /** Every directed edge, in expansion order; a bidirectional link is two edges. */
  readonly edges: readonly TopologyEdge[];
  private readonly index: ReadonlyMap<string, number>;
  private readonly parents: Int32Array;
  private readonly cubes: ReadonlyMap<string, CubeParts>;
  private readonly kinds = new Map<string, number[]>();
  private childLists: Map<number, number[]> | null = null;
  private readonly outEdgeLists: (readonly TopologyEdge[] | undefined)[];
  private readonly router: RegionRouter;

  /** @internal Use {@link expandTopology}. */
  constructor(topology: Topology, parts: GraphParts) {
    this.topology = topology;
    this.nodes = parts.nodes;
    this.edges = parts.edges;
    this.index = parts.index;
    this.parents = parts.parents;
    this.cubes = parts.cubes;
    const nodeCount = parts.nodes.length;
    this.outEdgeLists = new Array<readonly TopologyEdge[] | undefined>(nodeCount);
    const firstFlitNs = new Float64Array(nodeCount);
    const forwards = new Uint8Array(nodeCount);
    parts.nodes.forEach((node, number) => {
      let list = this.kinds.get(node.kind);
      if (list === undefined) {
        list = [];
        this.kinds.set(node.kind, list);
      }
      list.push(number);
      forwards[number] = FORWARDING_KINDS.has(node.kind) ? 1 : 0;
      const firstFlit = node.params.first_flit_ns ?? node.params.forward_ns;
      if (firstFlit !== undefined) {
        if (typeof firstFlit !== "number" || !Number.isFinite(firstFlit) || firstFlit < 0) {
          throw new KbError(
            "TOPOLOGY_INVALID",
            `params.first_flit_ns / forward_ns must be a number of ns >= 0, got ${JSON.stringify(firstFlit) ?? String(firstFlit)}. Fix the override that sets it.`,
            { context: { nodeId: node.id } },
          );
        }
        firstFlitNs[number] = firstFlit;
      }
    });
    const kindSize = new Int32Array(nodeCount);
    for (const list of this.kinds.values()) for (const number of list) kindSize[number] = list.length;
    this.router = new RegionRouter({
      ids: parts.nodes.map((node) => node.id),
      edges: parts.edges,
      edgeSrc: parts.edgeSrc,
      edgeDst: parts.edgeDst,
      firstFlitNs,
      forwards,
      kindSize,
      region: routingRegions(parts.nodes, topology.sip.cubes),
    });
  }

  /** The node with this id. Throws `TOPOLOGY_UNKNOWN_NODE` (with a "did you mean") if there is none. */
  node(id: string): TopologyNode {
    return this.nodes[this.numberOf(id)] as TopologyNode;
  }

  /** Whether a node has this id. */
  has(id: string): boolean {
    return this.index.has(id);
  }

  /** The nodes of a kind (`"pe_dma"`, `"hbm_channel"`, ...), in expansion order; empty for an unknown kind. */
  byKind(kind: string): TopologyNode[] {
    return this.toNodes(this.kinds.get(kind) ?? []);
  }

  /** The nodes whose parent is `id`, in expansion order. Throws `TOPOLOGY_UNKNOWN_NODE` for an unknown id. */
  children(id: string): TopologyNode[] {
    const number = this.numberOf(id);
    if (this.childLists === null) {
      const lists = new Map<number, number[]>();
      this.parents.forEach((parent, child) => {
        if (parent < 0) return;
        let list = lists.get(parent);
        if (list === undefined) {
          list = [];
          lists.set(parent, list);
        }
        list.push(child);
      });
      this.childLists = lists;
    }
    return this.toNodes(this.childLists.get(number) ?? []);
  }

  /** The PE container nodes (`sip{s}.cube{c}.pe{p}`) of a cube, by PE index. Throws `TOPOLOGY_UNKNOWN_NODE` for a cube that does not exist. */
  pesOfCube(sip: number, cube: number): TopologyNode[] {
    return this.toNodes(this.cubeParts(sip, cube).pes);
  }

  /** The HBM channel nodes (`.hbm.ch{h}`) of a cube, by channel index. Throws `TOPOLOGY_UNKNOWN_NODE` for a cube that does not exist. */
  hbmChannelsOfCube(sip: number, cube: number): TopologyNode[] {
    return this.toNodes(this.cubeParts(sip, cube).channels);
  }

  /**
   * The pseudo-channel nodes (`.hbm.ch{h}.pc{q}`) of a cube, channel by channel: index
   * `h * pseudo_channels + q`. Throws `TOPOLOGY_UNKNOWN_NODE` for a cube that does not exist.
   */
  hbmPseudoChannelsOfCube(sip: number, cube: number): TopologyNode[] {
    return this.toNodes(this.cubeParts(sip, cube).pseudoChannels);
  }

  private addressMap: HbmAddressMap | undefined;

  /**
   * The address mapping of the cubes' HBM stacks (`cube.hbm.mapping` over its organisation): the
   * one object the fabric splits blocks with and memory models locate banks and rows with.
   */
  hbmAddressMap(): HbmAddressMap {
    if (this.addressMap === undefined) {
      const hbm = this.topology.cube.hbm;
      this.addressMap = hbmAddressMap(hbmOrganisationOf(hbm), hbm.mapping);
    }
    return this.addressMap;
  }

  /** The edges leaving a node, in expansion order. Throws `TOPOLOGY_UNKNOWN_NODE` for an unknown id. */
  outEdges(id: string): readonly TopologyEdge[] {
    const number = this.numberOf(id);
    let list = this.outEdgeLists[number];
    if (list === undefined) {
      list = Array.from(this.router.outEdgeNumbers(number), (edge) => this.edges[edge] as TopologyEdge);
      this.outEdgeLists[number] = list;
    }
    return list;
  }

  /**
   * The best route from `src` to `dst` over the directed edges. Only nodes of
   * {@link FORWARDING_KINDS} are intermediate hops; any node can be `src` or `dst`. Order: least
   * latency (links plus the overhead of each intermediate hop, its `first_flit_ns` (routers, XBAR
   * halves, bridge, UCIe ports) or `forward_ns` (IO_CPU, M_CPU.DMA), else 0; compared on a 1e-9
   * ns grid so 0.1 + 0.2 ties with 0.3), then fewest hops, then the smallest sequence of node ids
   * (compared element by element, in JavaScript string order). The result is cached: the same pair returns the same object,
   * shared by every caller, so treat it (and its arrays) as read-only.
   *
   * The search is local: it runs over the cubes (and the nodes outside cubes) that some best
   * path between the two ends' cubes passes, found once per pair of cubes on a small graph of
   * the cubes' border nodes (M_CPU, M_CPU.DMA, UCIe ports) and the IO_CPUs; inside that, one
   * search serves every route from its source (or to its destination). So a route within a cube
   * costs the same in a 16-PE and an 8192-PE system.
   *
   * With `{ keep: false }` the route is not cached (a new object each call, the search work is
   * still shared): for callers that keep what they derive from routes themselves, such as a
   * machine's fabric, so a system of thousands of PEs does not hold every route twice.
   *
   * **NOC routing** (`cube.noc.routing`, default `xy`): a stretch of the route across a cube's
   * NOC mesh then goes in dimension order between the routers where the best route enters and
   * leaves the mesh (`xy`: along the row first; `yx`: along the column first; `shortest`: as
   * found). Decided here, once per route: the fabric compiles routes once, so it costs nothing
   * per packet.
   *
   * Throws `TOPOLOGY_UNKNOWN_NODE` for an unknown id and `TOPOLOGY_NO_ROUTE` when no path exists.
   */
  route(src: string, dst: string, options: { readonly keep?: boolean } = {}): Route {
    const from = this.numberOf(src);
    const to = this.numberOf(dst);
    const found = options.keep === false ? this.router.findRoute(from, to) : this.router.route(from, to);
    const routing = this.topology.cube.noc.routing;
    if (routing === "shortest") return found;
    if (options.keep === false) return dimensionOrder(found, this, routing);
    let ordered = this.ordered.get(found);
    if (ordered === undefined) {
      ordered = dimensionOrder(found, this, routing);
      this.ordered.set(found, ordered);
    }
    return ordered;
  }

  /** Kept routes in the NOC's dimension order, by the best route they replace (same object per pair). */
  private readonly ordered = new WeakMap<Route, Route>();

  private numberOf(id: string): number {
    const number = this.index.get(id);
    if (number !== undefined) return number;
    const suggestion = closest(
      id,
      this.nodes.map((node) => node.id),
    );
    throw new KbError(
      "TOPOLOGY_UNKNOWN_NODE",
      `no node "${id}" in topology "${this.topology.name}" (${this.nodes.length} nodes)${
        suggestion === undefined
          ? '; node ids are dotted paths such as "sip0.cube0.pe0.pe_dma".'
          : `; did you mean "${suggestion}"?`
      }`,
    );
  }

  private cubeParts(sip: number, cube: number): CubeParts {
    const parts = this.cubes.get(`${sip}.${cube}`);
    if (parts === undefined) this.numberOf(`sip${sip}.cube${cube}`);
    return parts as CubeParts;
  }

  private toNodes(numbers: readonly number[]): TopologyNode[] {
    return numbers.map((number) => this.nodes[number] as TopologyNode);
  }
}

/**
 * The routing regions: one per cube (every node of `sip{s}.cube{c}`, the cube itself included,
 * is region `s * cubesPerSip + c`), and one of its own for every node outside a cube (host,
 * SIPs, IO_CPUs), numbered after the cubes in node order. @internal
 */
export function routingRegions(nodes: readonly TopologyNode[], cubesPerSip: number): Int32Array {
  const region = new Int32Array(nodes.length);
  let cubeRegions = 0;
  for (const node of nodes) {
    if (node.sip !== null && node.cube !== null) {
      cubeRegions = Math.max(cubeRegions, node.sip * cubesPerSip + node.cube + 1);
    }
  }
  let next = cubeRegions;
  nodes.forEach((node, number) => {
    region[number] = node.sip !== null && node.cube !== null ? node.sip * cubesPerSip + node.cube : next++;
  });
  return region;
}
