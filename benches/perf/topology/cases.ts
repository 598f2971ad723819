import type { TopologyGraph, TopologyInput } from "@kb/topology";

/** One design point of the topology suite. */
export interface TopologyCase {
  /** Short name for the table. */
  readonly name: string;
  /** A YAML file under `topologies/` to load instead of `input`, when it exists. */
  readonly file?: string;
  /** The topology as an object, for `resolveTopology`. */
  readonly input: TopologyInput;
  /** Node and edge counts of `input`, derived by hand (see cases.test.ts). */
  readonly expected: { readonly nodes: number; readonly edges: number; readonly routes: number };
}

/**
 * (a) 4 SIPs x 4 cubes x 16 PEs: NOC 4 x 4, HBM 16 x 2, UCIe ring, SIPs all-to-all. The same
 * shape as topologies/ref-4sip.yaml, which is loaded instead when present.
 *
 * Nodes per cube: cube 1 + CPUs 2 + hbm 1 + 16 channels + 32 PCs + xbars, bridge 3 + 16 routers
 * + sram 1 + 2 UCIe ports (ring of 4) + 16 PEs x 9 = 218; per SIP 2 + 4 x 218 = 874; in all
 * 1 + 4 x 874 = 3497.
 * Edges per cube: CPUs 6 + ch<->pc 64 + bridge 4 + xbar<->ch 32 + m_cpu_dma<->xbar0 2 + mesh
 * (12 + 12 links) 48 + m_cpu<->r0c0 2 + sram<->r0c0 2 + r0c0<->xbar0 (noc_to_xbar, the only
 * router <-> XBAR link) 2 + UCIe<->corner 2 ports x 2 = 4 + 16 PEs x 22 = 352: 6 + 64 + 4 + 32
 * + 2 + 48 + 2 + 2 + 2 + 4 + 352 = 518; per SIP 2 (host) + 4 x 518 + 4 ring links x 2 = 2082; in
 * all 4 x 2082 + 6 SIP pairs x 2 = 8340 (16 cubes x 2 edges fewer than the 8372 with a second
 * noc_to_xbar link r3c3<->xbar1).
 * Routes: 256 pe_dma x 256 channels = 65536.
 */
export const fourSipCase: TopologyCase = {
  name: "4sip x 4cube x 16pe",
  file: "ref-4sip.yaml",
  input: {
    name: "bench-4sip",
    system: { sips: 4, sip_link: { pattern: "all_to_all", bw_gbs: 128, latency_ns: 500 } },
    sip: { cubes: 4, ucie: { pattern: "ring", bw_gbs: 256, length_mm: 2 } },
    cube: { noc: { rows: 4, cols: 4 }, hbm: { channels: 16, pseudo_channels: 2, pc_bw_gbs: 25.6 } },
  },
  expected: { nodes: 3497, edges: 8340, routes: 256 * 256 },
};

/**
 * (b) 1 SIP x 64 cubes x 64 PEs: NOC 8 x 8, default HBM 8 x 2, UCIe mesh of 8 x 8 cubes.
 *
 * Nodes per cube without UCIe ports: 1 + 2 + 1 + 8 + 16 + 3 + 64 routers + 1 + 64 x 9 = 672;
 * UCIe ports: one per mesh neighbour, 2 x 112 mesh links = 224; in all 1 + 2 + 64 x 672 + 224 =
 * 43235.
 * Edges per cube without UCIe: 6 + 32 + 4 + 16 + 2 + mesh (56 + 56 links) 224 + 2 + 2
 * + noc_to_xbar (r0c0<->xbar0 only) 2 + 64 PEs x 22 = 1408: 6 + 32 + 4 + 16 + 2 + 224 + 2 + 2
 * + 2 + 1408 = 1698; in all 2 (host)
 * + 64 x 1698 + 224 ports x 2 (to the corner; no XBAR link) + 112 UCIe links x 2
 * = 2 + 108672 + 448 + 224 = 109346 (64 cubes x 2 edges fewer than the 109474 with a second
 * noc_to_xbar link r7c7<->xbar1).
 * Routes: 4096 pe_dma x 512 channels = 2097152.
 */
export const cubes64Case: TopologyCase = {
  name: "64cube x 64pe",
  input: {
    name: "bench-64cube",
    sip: { cubes: 64, ucie: { pattern: "mesh", bw_gbs: 256, length_mm: 2 } },
    cube: { noc: { rows: 8, cols: 8 } },
  },
  expected: { nodes: 43235, edges: 109346, routes: 4096 * 512 },
};

export const topologyCases: readonly TopologyCase[] = [fourSipCase, cubes64Case];

/**
 * Routes every PE's DMA to every HBM channel of every cube, PE by PE. Returns the number of
 * routes and the sum of their latencies in ns (a checksum: the same topology gives the same sum).
 */
export function routeAllDmaToHbm(graph: TopologyGraph): { routes: number; latencySumNs: number } {
  const channels = graph.byKind("hbm_channel").map((node) => node.id);
  let routes = 0;
  let latencySumNs = 0;
  for (const dma of graph.byKind("pe_dma")) {
    for (const channel of channels) {
      latencySumNs += graph.route(dma.id, channel).latencyNs;
      routes++;
    }
  }
  return { routes, latencySumNs };
}
