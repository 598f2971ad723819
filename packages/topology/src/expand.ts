import { closest, formatIssuePath, KbError } from "@kb/errors";
import { idGlobToRegExp, isIdGlob } from "./glob.js";
import {
  type BuildNode,
  type Coords,
  type CubeParts,
  type EdgeShape,
  type LinkLike,
  type LinkPattern,
  type Params,
  type TopologyEdge,
  TopologyGraph,
} from "./graph.js";
import { hbmGeometryOverrideError, hbmNodeParams } from "./hbm-geometry.js";
import { PE_COMPONENT_NAMES, type Topology } from "./schema.js";
import { assertTopologyLimits } from "./topology-limits.js";

const NO_PARAMS: Params = Object.freeze({});

/**
 * The peers of member `index` among `count` members joined by a link pattern, in increasing
 * order: `none` no peer; `ring` index ± 1 modulo count (one peer when count is 2, none when 1);
 * `mesh` the left, right, up and down neighbours on a grid of `meshCols` columns (default
 * ceil(sqrt(count))) filled row by row, the last row possibly short; `all_to_all` every other
 * member. Every pattern is symmetric: j is a peer of i exactly when i is a peer of j.
 */
export function linkPatternPeers(
  pattern: LinkPattern,
  count: number,
  meshCols: number | undefined,
  index: number,
): number[] {
  const peers = new Set<number>();
  if (pattern === "ring") {
    if (count > 1) {
      peers.add((index + count - 1) % count);
      peers.add((index + 1) % count);
    }
  } else if (pattern === "mesh") {
    const cols = meshCols ?? Math.ceil(Math.sqrt(count));
    const col = index % cols;
    if (col > 0) peers.add(index - 1);
    if (col < cols - 1 && index + 1 < count) peers.add(index + 1);
    if (index - cols >= 0) peers.add(index - cols);
    if (index + cols < count) peers.add(index + cols);
  } else if (pattern === "all_to_all") {
    for (let other = 0; other < count; other++) if (other !== index) peers.add(other);
  }
  peers.delete(index);
  return [...peers].sort((a, b) => a - b);
}

class GraphBuilder {
  readonly nodes: BuildNode[] = [];
  readonly index = new Map<string, number>();
  readonly parents: number[] = [];
  readonly edges: TopologyEdge[] = [];
  readonly edgeSrc: number[] = [];
  readonly edgeDst: number[] = [];

  add(node: BuildNode): number {
    const number = this.nodes.length;
    this.nodes.push(node);
    this.index.set(node.id, number);
    this.parents.push(node.parent === null ? -1 : (this.index.get(node.parent) as number));
    return number;
  }

  /** One directed edge a -> b. */
  oneWay(a: number, b: number, shape: EdgeShape): void {
    this.edges.push({
      src: (this.nodes[a] as BuildNode).id,
      dst: (this.nodes[b] as BuildNode).id,
      bwGbs: shape.bwGbs,
      latencyNs: shape.latencyNs,
      lengthMm: shape.lengthMm,
    });
    this.edgeSrc.push(a);
    this.edgeDst.push(b);
  }

  /** A bidirectional link: a -> b, then b -> a. */
  both(a: number, b: number, shape: EdgeShape): void {
    this.oneWay(a, b, shape);
    this.oneWay(b, a, shape);
  }
}

/**
 * Expands a resolved topology into its graph of nodes and directed edges, then applies the
 * overrides.
 *
 * Notation: S = `system.sips`, C = `sip.cubes`, R x K = `cube.noc.rows` x `cube.noc.cols`,
 * P = R x K PEs per cube, H = `cube.hbm.channels`, Q = `cube.hbm.pseudo_channels`. A link's
 * latency is its `latency_ns` if given, else `length_mm x wire_delay_ns_per_mm` (0 with
 * neither); its `lengthMm` is `length_mm` or 0. `a <-> b` is two directed edges, a -> b then
 * b -> a; `a -> b` is one. Nodes and edges are listed in the order below.
 *
 * - `host` (kind host, no impl).
 * - For each SIP s: `sip{s}` (kind sip); `sip{s}.io_cpu` (from `sip.io_cpu`, params with
 *   forward_ns); host <-> io_cpu (`sip.host_link`). Then, for each cube c, the nodes under
 *   `sip{s}.cube{c}` (kind cube), in this order:
 *   - `.m_cpu`, `.m_cpu_dma` (from `cube.m_cpu`, `cube.m_cpu_dma`; m_cpu_dma params with
 *     forward_ns); io_cpu <-> m_cpu and io_cpu <-> m_cpu_dma (`sip.io_link`); m_cpu <->
 *     m_cpu_dma (bandwidth of `sip.io_link`, latency 0, length 0).
 *   - `.hbm` (kind hbm_ctrl, from `cube.hbm`; params: `cube.hbm.params`, then channels,
 *     pseudo_channels, pc_bw_gbs, access_latency_ns, interleave_bytes, flit_bytes,
 *     capacity_bytes, mapping, preset when set, sids, bank_groups, banks_per_group, row_bytes,
 *     burst_bytes); for h < H `.hbm.ch{h}` (kind hbm_channel, no impl, parent `.hbm`), each
 *     followed by its `.hbm.ch{h}.pc{q}` for q < Q (kind hbm_pc, no impl, params
 *     `{ bw_gbs: pc_bw_gbs, access_latency_ns }`); ch <-> pc (bandwidth pc_bw_gbs, latency 0).
 *   - `.xbar0`, `.xbar1` (from `cube.xbar`), `.bridge` (from `cube.bridge`), params with
 *     first_flit_ns; xbar0 <-> bridge, bridge <-> xbar1 (`cube.bridge.link`); channel h is on
 *     half 0 when h < ceil(H/2), else half 1: xbar{half} <-> ch{h} (`cube.links.xbar_to_hbm`);
 *     m_cpu_dma <-> xbar0 (`cube.links.m_cpu_dma_to_xbar`).
 *   - `.noc.r{row}c{col}` (kind noc_router, from `cube.noc`, params with first_flit_ns, coords),
 *     row-major; each router <-> its right neighbour, then <-> its down neighbour
 *     (`cube.noc.link`); m_cpu <-> noc.r0c0 (`links.m_cpu_to_noc`); `.sram` (params with
 *     capacity_bytes, bw_gbs, latency_ns) <-> noc.r0c0 (`links.sram_to_noc`); noc.r0c0 <->
 *     xbar0 (`links.noc_to_xbar`), the NOC's only link to an XBAR half: no other router
 *     touches xbar0 or xbar1, so no simple path within a cube goes NOC -> XBAR -> NOC.
 *   - UCIe: the cube's peers under `sip.ucie.pattern` among the SIP's C cubes (see
 *     {@link linkPatternPeers}); for the i-th peer n in increasing order, `.ucie{n}` (kind
 *     ucie_port, from `cube.ucie_port`, params with first_flit_ns) <-> NOC corner i mod 4 of
 *     r0c0, r0c{K-1}, r{R-1}c{K-1}, r{R-1}c0 (`links.ucie_to_noc`). A port has no other link
 *     in its cube; its only other edges are to its peer port (below).
 *   - For each PE p = row x K + col: `.pe{p}` (kind pe, no impl, coords), then
 *     `.pe{p}.pe_cpu` ... `.pe{p}.pe_tcm` in `PE_COMPONENT_NAMES` order (from
 *     `pe_template.components`). Edges, from `pe_template.links`: control: pe_cpu ->
 *     pe_scheduler, pe_scheduler -> pe_dma, -> pe_fetch_store, -> pe_gemm, -> pe_math;
 *     dma_to_tcm: pe_dma <-> pe_tcm; dma_to_fetch_store: pe_dma <-> pe_fetch_store;
 *     fetch_store_to_tcm: pe_fetch_store -> pe_tcm; fetch_store_to_engines: pe_fetch_store
 *     <-> pe_gemm, pe_fetch_store <-> pe_math; dma_to_mmu: pe_dma <-> pe_mmu. Then pe_dma <->
 *     xbar0 when col < ceil(K/2), else xbar1 (`links.pe_dma_to_xbar`); pe_dma <->
 *     noc.r{row}c{col} and pe_cpu <-> noc.r{row}c{col} (`links.pe_to_noc`).
 *   - After all cubes of the SIP: for each pair of peer cubes c < n,
 *     `sip{s}.cube{c}.ucie{n}` <-> `sip{s}.cube{n}.ucie{c}` (`sip.ucie`).
 * - After all SIPs: for each pair of peer SIPs a < b under `system.sip_link.pattern`,
 *   `sip{a}.io_cpu` <-> `sip{b}.io_cpu` (`system.sip_link`).
 *
 * Every node below a SIP carries its `sip`, below a cube its `cube`, in a PE its `pe`. Nodes
 * with an impl get a copy of their component's params; transit components (xbar, bridge,
 * noc_router, ucie_port) add `first_flit_ns`, io_cpu and m_cpu_dma add `forward_ns`, written
 * after the params (the hbm controller and sram add the fields listed above).
 *
 * Overrides then apply in order to the nodes that have an impl: `match` is an id or a glob whose
 * `*` matches within one id segment (see `idGlobToRegExp`); matched nodes get `impl` if given
 * and `params` merged shallowly over theirs. An override may not set a key of
 * `HBM_GEOMETRY_KEYS` (channels, pseudo_channels, pc_bw_gbs, ...) on an HBM controller: the
 * nodes and links above, the fabric, the address map and the peaks all read the organisation
 * from `cube.hbm`, so it has that one source.
 *
 * Sizes: a default cube (NOC 2 x 4, HBM 8 x 2) is 112 nodes and 262 edges (2 of them
 * noc_to_xbar), plus one node and two edges per UCIe port; `topologies/default.yaml` (one SIP,
 * two cubes of one port each) expands to 1 + 2 + 2 x 113 = 229 nodes and 2 + 2 x 264 + 2 = 532
 * edges.
 *
 * Throws `TOPOLOGY_INVALID` when the topology breaks a structural limit (`topologyLimitIssues`;
 * checked first, so nothing is allocated for absurd sizes), when an override matches no node (with a "did you mean"),
 * sets an HBM geometry key on a controller (`overrides[i].params.<key>: ...`, saying to set
 * `cube.hbm.<key>` instead) or leaves a
 * `first_flit_ns` or `forward_ns` that is not a number of ns >= 0.
 */
export function expandTopology(topology: Topology): TopologyGraph {
  assertTopologyLimits(topology);
  const builder = new GraphBuilder();
  const wireDelay = topology.wire_delay_ns_per_mm;
  const shape = (link: LinkLike): EdgeShape => ({
    bwGbs: link.bw_gbs,
    latencyNs: link.latency_ns ?? (link.length_mm ?? 0) * wireDelay,
    lengthMm: link.length_mm ?? 0,
  });
  const { system, sip: sipSpec, cube: cubeSpec, pe_template: peSpec } = topology;
  const sipCount = system.sips;
  const cubeCount = sipSpec.cubes;
  const rows = cubeSpec.noc.rows;
  const cols = cubeSpec.noc.cols;
  const peCount = rows * cols;
  const { hbm } = cubeSpec;

  // One frozen params object per component spec, shared by all its nodes (overrides replace it).
  const frozen = (params: Record<string, unknown>, extra: Record<string, unknown> = {}): Params =>
    Object.freeze({ ...params, ...extra });
  const ioCpuParams = frozen(sipSpec.io_cpu.params, { forward_ns: sipSpec.io_cpu.forward_ns });
  const mCpuParams = frozen(cubeSpec.m_cpu.params);
  const mCpuDmaParams = frozen(cubeSpec.m_cpu_dma.params, { forward_ns: cubeSpec.m_cpu_dma.forward_ns });
  const hbmParams = frozen(hbmNodeParams(hbm));
  const pcParams = frozen({ bw_gbs: hbm.pc_bw_gbs, access_latency_ns: hbm.access_latency_ns });
  const xbarParams = frozen(cubeSpec.xbar.params, { first_flit_ns: cubeSpec.xbar.first_flit_ns });
  const bridgeParams = frozen(cubeSpec.bridge.params, { first_flit_ns: cubeSpec.bridge.first_flit_ns });
  const nocParams = frozen(cubeSpec.noc.params, { first_flit_ns: cubeSpec.noc.first_flit_ns });
  const sramParams = frozen(cubeSpec.sram.params, {
    capacity_bytes: cubeSpec.sram.capacity_bytes,
    bw_gbs: cubeSpec.sram.bw_gbs,
    latency_ns: cubeSpec.sram.latency_ns,
  });
  const ucieParams = frozen(cubeSpec.ucie_port.params, { first_flit_ns: cubeSpec.ucie_port.first_flit_ns });
  const peComponents = PE_COMPONENT_NAMES.map((name) => {
    const spec = peSpec.components[name];
    return { name, kind: spec.kind as string, impl: spec.impl, params: frozen(spec.params) };
  });

  const hostLink = shape(sipSpec.host_link);
  const ioLink = shape(sipSpec.io_link);
  const mCpuToDma: EdgeShape = { bwGbs: sipSpec.io_link.bw_gbs, latencyNs: 0, lengthMm: 0 };
  const pcLink: EdgeShape = { bwGbs: hbm.pc_bw_gbs, latencyNs: 0, lengthMm: 0 };
  const bridgeLink = shape(cubeSpec.bridge.link);
  const { links } = cubeSpec;
  const xbarToHbm = shape(links.xbar_to_hbm);
  const mCpuDmaToXbar = shape(links.m_cpu_dma_to_xbar);
  const nocLink = shape(cubeSpec.noc.link);
  const mCpuToNoc = shape(links.m_cpu_to_noc);
  const sramToNoc = shape(links.sram_to_noc);
  const ucieToNoc = shape(links.ucie_to_noc);
  const nocToXbar = shape(links.noc_to_xbar);
  const peDmaToXbar = shape(links.pe_dma_to_xbar);
  const peToNoc = shape(links.pe_to_noc);
  const ucieLink = shape(sipSpec.ucie);
  const sipLink = shape(system.sip_link);
  const peLinks = peSpec.links;
  const control = shape(peLinks.control);
  const dmaToTcm = shape(peLinks.dma_to_tcm);
  const dmaToFetchStore = shape(peLinks.dma_to_fetch_store);
  const fetchStoreToTcm = shape(peLinks.fetch_store_to_tcm);
  const fetchStoreToEngines = shape(peLinks.fetch_store_to_engines);
  const dmaToMmu = shape(peLinks.dma_to_mmu);

  const gridCoords: Coords[] = [];
  for (let p = 0; p < peCount; p++)
    gridCoords.push(Object.freeze({ row: Math.floor(p / cols), col: p % cols }));
  const corners = [0, cols - 1, (rows - 1) * cols + cols - 1, (rows - 1) * cols];
  const halfChannels = Math.ceil(hbm.channels / 2);
  const halfCols = Math.ceil(cols / 2);
  const cubePeers = Array.from({ length: cubeCount }, (_, c) =>
    linkPatternPeers(sipSpec.ucie.pattern, cubeCount, sipSpec.ucie.mesh_cols, c),
  );
  const cubes = new Map<string, CubeParts>();

  const host = builder.add(container("host", "host", null, null, null));
  const ioCpus: number[] = [];
  for (let s = 0; s < sipCount; s++) {
    const sipId = `sip${s}`;
    builder.add(container(sipId, "sip", null, s, null));
    const ioCpu = builder.add(
      component(`${sipId}.io_cpu`, sipSpec.io_cpu.kind, sipSpec.io_cpu.impl, ioCpuParams, sipId, s, null),
    );
    builder.both(host, ioCpu, hostLink);
    ioCpus.push(ioCpu);
    const ports: Map<number, number>[] = [];
    for (let c = 0; c < cubeCount; c++) {
      const cubeId = `${sipId}.cube${c}`;
      builder.add(container(cubeId, "cube", sipId, s, c));
      const add = (suffix: string, kind: string, impl: string, params: Params): number =>
        builder.add(component(`${cubeId}.${suffix}`, kind, impl, params, cubeId, s, c));

      const mCpu = add("m_cpu", cubeSpec.m_cpu.kind, cubeSpec.m_cpu.impl, mCpuParams);
      const mCpuDma = add("m_cpu_dma", cubeSpec.m_cpu_dma.kind, cubeSpec.m_cpu_dma.impl, mCpuDmaParams);
      builder.both(ioCpu, mCpu, ioLink);
      builder.both(ioCpu, mCpuDma, ioLink);
      builder.both(mCpu, mCpuDma, mCpuToDma);

      add("hbm", hbm.kind, hbm.impl, hbmParams);
      const hbmId = `${cubeId}.hbm`;
      const channels: number[] = [];
      const pseudoChannels: number[] = [];
      for (let h = 0; h < hbm.channels; h++) {
        const channelId = `${hbmId}.ch${h}`;
        const channel = builder.add(container(channelId, "hbm_channel", hbmId, s, c));
        channels.push(channel);
        for (let q = 0; q < hbm.pseudo_channels; q++) {
          const pc = builder.add({
            ...container(`${channelId}.pc${q}`, "hbm_pc", channelId, s, c),
            params: pcParams,
          });
          pseudoChannels.push(pc);
          builder.both(channel, pc, pcLink);
        }
      }

      const xbar0 = add("xbar0", cubeSpec.xbar.kind, cubeSpec.xbar.impl, xbarParams);
      const xbar1 = add("xbar1", cubeSpec.xbar.kind, cubeSpec.xbar.impl, xbarParams);
      const bridge = add("bridge", cubeSpec.bridge.kind, cubeSpec.bridge.impl, bridgeParams);
      builder.both(xbar0, bridge, bridgeLink);
      builder.both(bridge, xbar1, bridgeLink);
      channels.forEach((channel, h) => {
        builder.both(h < halfChannels ? xbar0 : xbar1, channel, xbarToHbm);
      });
      builder.both(mCpuDma, xbar0, mCpuDmaToXbar);

      const routers: number[] = [];
      for (let p = 0; p < peCount; p++) {
        const { row, col } = gridCoords[p] as Coords;
        routers.push(
          builder.add({
            ...component(
              `${cubeId}.noc.r${row}c${col}`,
              cubeSpec.noc.kind,
              cubeSpec.noc.impl,
              nocParams,
              cubeId,
              s,
              c,
            ),
            coords: gridCoords[p] as Coords,
          }),
        );
      }
      for (let p = 0; p < peCount; p++) {
        const router = routers[p] as number;
        if (p % cols < cols - 1) builder.both(router, routers[p + 1] as number, nocLink);
        if (p + cols < peCount) builder.both(router, routers[p + cols] as number, nocLink);
      }
      const origin = routers[0] as number;
      builder.both(mCpu, origin, mCpuToNoc);
      const sram = add("sram", cubeSpec.sram.kind, cubeSpec.sram.impl, sramParams);
      builder.both(sram, origin, sramToNoc);
      builder.both(origin, xbar0, nocToXbar);

      const cubePorts = new Map<number, number>();
      (cubePeers[c] as number[]).forEach((peer, i) => {
        const port = add(`ucie${peer}`, cubeSpec.ucie_port.kind, cubeSpec.ucie_port.impl, ucieParams);
        builder.both(port, routers[corners[i % 4] as number] as number, ucieToNoc);
        cubePorts.set(peer, port);
      });
      ports.push(cubePorts);

      const pes: number[] = [];
      for (let p = 0; p < peCount; p++) {
        const peId = `${cubeId}.pe${p}`;
        const coords = gridCoords[p] as Coords;
        const place = { pe: p, coords };
        pes.push(builder.add({ ...container(peId, "pe", cubeId, s, c), ...place }));
        const parts = peComponents.map(({ name, kind, impl, params }) =>
          builder.add({ ...component(`${peId}.${name}`, kind, impl, params, peId, s, c), ...place }),
        );
        const [cpu, scheduler, dma, fetchStore, gemm, math, mmu, tcm] = parts as [
          number,
          number,
          number,
          number,
          number,
          number,
          number,
          number,
        ];
        builder.oneWay(cpu, scheduler, control);
        builder.oneWay(scheduler, dma, control);
        builder.oneWay(scheduler, fetchStore, control);
        builder.oneWay(scheduler, gemm, control);
        builder.oneWay(scheduler, math, control);
        builder.both(dma, tcm, dmaToTcm);
        builder.both(dma, fetchStore, dmaToFetchStore);
        builder.oneWay(fetchStore, tcm, fetchStoreToTcm);
        builder.both(fetchStore, gemm, fetchStoreToEngines);
        builder.both(fetchStore, math, fetchStoreToEngines);
        builder.both(dma, mmu, dmaToMmu);
        builder.both(dma, coords.col < halfCols ? xbar0 : xbar1, peDmaToXbar);
        builder.both(dma, routers[p] as number, peToNoc);
        builder.both(cpu, routers[p] as number, peToNoc);
      }
      cubes.set(`${s}.${c}`, { pes, channels, pseudoChannels });
    }
    for (let c = 0; c < cubeCount; c++) {
      for (const peer of cubePeers[c] as number[]) {
        if (peer > c) {
          builder.both(
            (ports[c] as Map<number, number>).get(peer) as number,
            (ports[peer] as Map<number, number>).get(c) as number,
            ucieLink,
          );
        }
      }
    }
  }
  for (let a = 0; a < sipCount; a++) {
    for (const b of linkPatternPeers(system.sip_link.pattern, sipCount, system.sip_link.mesh_cols, a)) {
      if (b > a) builder.both(ioCpus[a] as number, ioCpus[b] as number, sipLink);
    }
  }

  applyOverrides(topology, builder);

  return new TopologyGraph(topology, {
    nodes: builder.nodes,
    index: builder.index,
    edges: builder.edges,
    edgeSrc: Int32Array.from(builder.edgeSrc),
    edgeDst: Int32Array.from(builder.edgeDst),
    parents: Int32Array.from(builder.parents),
    cubes,
  });
}

function container(
  id: string,
  kind: string,
  parent: string | null,
  sip: number | null,
  cube: number | null,
): BuildNode {
  return { id, kind, impl: null, params: NO_PARAMS, parent, sip, cube, pe: null, coords: null };
}

function component(
  id: string,
  kind: string,
  impl: string,
  params: Params,
  parent: string,
  sip: number,
  cube: number | null,
): BuildNode {
  return { id, kind, impl, params, parent, sip, cube, pe: null, coords: null };
}

function applyOverrides(topology: Topology, builder: GraphBuilder): void {
  if (topology.overrides.length === 0) return;
  const nodes = builder.nodes;
  const withImpl = nodes.filter((node) => node.impl !== null);
  topology.overrides.forEach((override, i) => {
    const { match } = override;
    let matched: BuildNode[];
    if (isIdGlob(match)) {
      const pattern = idGlobToRegExp(match);
      matched = withImpl.filter((node) => pattern.test(node.id));
    } else {
      const number = builder.index.get(match);
      const node = number === undefined ? undefined : nodes[number];
      matched = node === undefined || node.impl === null ? [] : [node];
    }
    if (matched.length === 0) throw noMatch(i, match, nodes, withImpl);
    if (override.params !== undefined) {
      const controllers = matched.filter((node) => node.kind === "hbm_ctrl");
      const geometry = hbmGeometryOverrideError(i, override.params, controllers, topology.cube.hbm);
      if (geometry !== undefined) throw geometry;
    }
    // Nodes that shared a params object share the merged one.
    const merged = new Map<Params, Params>();
    for (const node of matched) {
      if (override.impl !== undefined) node.impl = override.impl;
      if (override.params !== undefined) {
        let params = merged.get(node.params);
        if (params === undefined) {
          params = Object.freeze({ ...node.params, ...override.params });
          merged.set(node.params, params);
        }
        node.params = params;
      }
    }
  });
}

function noMatch(
  i: number,
  match: string,
  nodes: readonly BuildNode[],
  withImpl: readonly BuildNode[],
): KbError {
  const path = ["overrides", i, "match"];
  const prefix = `${formatIssuePath(path)}: "${match}" matches no node`;
  const pattern = idGlobToRegExp(match);
  const containers = nodes.filter((node) => pattern.test(node.id));
  const first = containers[0];
  if (first !== undefined) {
    const child = withImpl.find((node) => node.id.startsWith(`${first.id}.`));
    return new KbError(
      "TOPOLOGY_INVALID",
      `${prefix} with an implementation: it names ${containers.length} container node(s) such as "${first.id}" (kind ${first.kind}), which overrides cannot change` +
        (child === undefined ? "." : `; match their components instead, such as "${child.id}".`),
      { context: { path } },
    );
  }
  const suggestion = closest(
    match,
    withImpl.map((node) => node.id),
  );
  return new KbError(
    "TOPOLOGY_INVALID",
    suggestion === undefined
      ? `${prefix}. Node ids are dotted paths such as "sip0.cube0.pe0.pe_gemm"; "*" matches any characters within one segment.`
      : `${prefix}; did you mean "${suggestion}"?`,
    { context: { path } },
  );
}
