import { isKbError, type KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { expandTopology, linkPatternPeers } from "./expand.js";
import type { TopologyGraph } from "./graph.js";
import { resolveTopology } from "./load.js";
import { loadTopologyFile } from "./node.js";
import type { TopologyInput } from "./schema.js";

const defaultYaml = new URL("../../../topologies/default.yaml", import.meta.url).pathname;
const loadDefault = () => expandTopology(loadTopologyFile(defaultYaml));

function thrown(action: () => unknown): KbError {
  try {
    action();
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}

function edge(graph: TopologyGraph, src: string, dst: string) {
  const found = graph.outEdges(src).filter((candidate) => candidate.dst === dst);
  expect(found).toHaveLength(1);
  return found[0];
}

function kindCounts(graph: TopologyGraph): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const node of graph.nodes) counts[node.kind] = (counts[node.kind] ?? 0) + 1;
  return counts;
}

/** Two SIPs of four cubes in a 2 x 2 UCIe mesh, NOC 2 x 2, HBM 4 x 2, SIPs in a ring. */
const twoSipMesh: TopologyInput = {
  name: "two-sip-mesh",
  system: { sips: 2, sip_link: { pattern: "ring", bw_gbs: 100, latency_ns: 500 } },
  sip: { cubes: 4, ucie: { pattern: "mesh", bw_gbs: 256, length_mm: 2 } },
  cube: { noc: { rows: 2, cols: 2 }, hbm: { channels: 4, pseudo_channels: 2 } },
};

describe("expandTopology on topologies/default.yaml (1 SIP x 2 cubes, NOC 2 x 4, HBM 8 x 2)", () => {
  it("has 229 nodes and 532 edges", () => {
    // Nodes per cube: cube 1 + m_cpu, m_cpu_dma 2 + hbm 1 + channels 8 + PCs 8 x 2 = 16
    //   + xbar0, xbar1, bridge 3 + routers 2 x 4 = 8 + sram 1 + UCIe ports 1 (ring of 2: one peer)
    //   + PEs 8 x (1 + 8 components) = 72                                    = 113
    // Nodes: host 1 + sip0, io_cpu 2 + 2 cubes x 113                         = 229
    // Edges per cube (each <-> counts 2): io_cpu<->m_cpu, io_cpu<->m_cpu_dma, m_cpu<->m_cpu_dma 6
    //   + ch<->pc 16 x 2 = 32 + xbar0<->bridge<->xbar1 4 + xbar<->ch 8 x 2 = 16
    //   + m_cpu_dma<->xbar0 2 + mesh (2 x 3 right + 1 x 4 down = 10 links) 20
    //   + m_cpu<->r0c0 2 + sram<->r0c0 2 + r0c0<->xbar0 (noc_to_xbar, the only one) 2
    //   + ucie<->corner 2 (no UCIe <-> XBAR link any more)
    //   + per PE 22 (control 5 one-way, dma<->tcm 2, dma<->fs 2, fs->tcm 1, fs<->gemm 2,
    //     fs<->math 2, dma<->mmu 2, dma<->xbar 2, dma<->noc 2, cpu<->noc 2) x 8 = 176
    //   = 6 + 32 + 4 + 16 + 2 + 20 + 2 + 2 + 2 + 2 + 176                       = 264
    // Edges: host<->io_cpu 2 + 2 cubes x 264 + one UCIe pair 2 + no inter-SIP   = 532
    const graph = loadDefault();
    expect(graph.nodes).toHaveLength(229);
    expect(graph.edges).toHaveLength(532);
    expect(graph.topology.name).toBe("default");
  });

  it("lists nodes in expansion order", () => {
    const graph = loadDefault();
    expect(graph.nodes.slice(0, 16).map((node) => node.id)).toEqual([
      "host",
      "sip0",
      "sip0.io_cpu",
      "sip0.cube0",
      "sip0.cube0.m_cpu",
      "sip0.cube0.m_cpu_dma",
      "sip0.cube0.hbm",
      "sip0.cube0.hbm.ch0",
      "sip0.cube0.hbm.ch0.pc0",
      "sip0.cube0.hbm.ch0.pc1",
      "sip0.cube0.hbm.ch1",
      "sip0.cube0.hbm.ch1.pc0",
      "sip0.cube0.hbm.ch1.pc1",
      "sip0.cube0.hbm.ch2",
      "sip0.cube0.hbm.ch2.pc0",
      "sip0.cube0.hbm.ch2.pc1",
    ]);
    const ids = graph.nodes.map((node) => node.id);
    // After the 8 channels (24 nodes from .hbm.ch0): xbars, bridge, routers, sram, UCIe, PEs.
    const start = ids.indexOf("sip0.cube0.hbm.ch7.pc1") + 1;
    expect(ids.slice(start, start + 24)).toEqual([
      "sip0.cube0.xbar0",
      "sip0.cube0.xbar1",
      "sip0.cube0.bridge",
      "sip0.cube0.noc.r0c0",
      "sip0.cube0.noc.r0c1",
      "sip0.cube0.noc.r0c2",
      "sip0.cube0.noc.r0c3",
      "sip0.cube0.noc.r1c0",
      "sip0.cube0.noc.r1c1",
      "sip0.cube0.noc.r1c2",
      "sip0.cube0.noc.r1c3",
      "sip0.cube0.sram",
      "sip0.cube0.ucie1",
      "sip0.cube0.pe0",
      "sip0.cube0.pe0.pe_cpu",
      "sip0.cube0.pe0.pe_scheduler",
      "sip0.cube0.pe0.pe_dma",
      "sip0.cube0.pe0.pe_fetch_store",
      "sip0.cube0.pe0.pe_gemm",
      "sip0.cube0.pe0.pe_math",
      "sip0.cube0.pe0.pe_mmu",
      "sip0.cube0.pe0.pe_tcm",
      "sip0.cube0.pe1",
      "sip0.cube0.pe1.pe_cpu",
    ]);
    expect(ids[113 + 3]).toBe("sip0.cube1");
    expect(ids.at(-1)).toBe("sip0.cube1.pe7.pe_tcm");
  });

  it("counts every kind", () => {
    expect(kindCounts(loadDefault())).toEqual({
      host: 1,
      sip: 1,
      io_cpu: 1,
      cube: 2,
      m_cpu: 2,
      m_cpu_dma: 2,
      hbm_ctrl: 2,
      hbm_channel: 16,
      hbm_pc: 32,
      xbar: 4,
      bridge: 2,
      noc_router: 16,
      sram: 2,
      ucie_port: 2,
      pe: 16,
      pe_cpu: 16,
      pe_scheduler: 16,
      pe_dma: 16,
      pe_fetch_store: 16,
      pe_gemm: 16,
      pe_math: 16,
      pe_mmu: 16,
      pe_tcm: 16,
    });
  });

  it("gives edges the bandwidth and latency of their link (latency = length x 0.01 ns/mm)", () => {
    const graph = loadDefault();
    // sip.host_link default: 64 GB/s, 0 mm.
    expect(edge(graph, "host", "sip0.io_cpu")).toEqual({
      src: "host",
      dst: "sip0.io_cpu",
      bwGbs: 64,
      latencyNs: 0,
      lengthMm: 0,
    });
    // sip.io_link default: 128 GB/s, 5 mm -> 0.05 ns.
    const ioLink = edge(graph, "sip0.io_cpu", "sip0.cube1.m_cpu_dma");
    expect([ioLink?.bwGbs, ioLink?.latencyNs, ioLink?.lengthMm]).toEqual([128, 5 * 0.01, 5]);
    // m_cpu <-> m_cpu_dma: io_link bandwidth, latency 0.
    expect(edge(graph, "sip0.cube0.m_cpu_dma", "sip0.cube0.m_cpu")).toMatchObject({
      bwGbs: 128,
      latencyNs: 0,
      lengthMm: 0,
    });
    // ch <-> pc: pc_bw_gbs 25.6, latency 0.
    expect(edge(graph, "sip0.cube0.hbm.ch3.pc1", "sip0.cube0.hbm.ch3")).toMatchObject({
      bwGbs: 25.6,
      latencyNs: 0,
    });
    // pe_dma_to_xbar 128 GB/s, 2 mm; PE 3 is at column 3 >= ceil(4/2) -> xbar1.
    expect(edge(graph, "sip0.cube0.pe3.pe_dma", "sip0.cube0.xbar1")).toMatchObject({
      bwGbs: 128,
      latencyNs: 2 * 0.01,
      lengthMm: 2,
    });
    expect(graph.outEdges("sip0.cube0.pe3.pe_dma").some((e) => e.dst === "sip0.cube0.xbar0")).toBe(false);
    // Channel 4 is on half 1 (4 >= ceil(8/2)); xbar_to_hbm 64 GB/s, 1 mm.
    expect(edge(graph, "sip0.cube0.xbar1", "sip0.cube0.hbm.ch4")).toMatchObject({
      bwGbs: 64,
      latencyNs: 0.01,
    });
    expect(graph.outEdges("sip0.cube0.hbm.ch3").map((e) => e.dst)).toEqual([
      "sip0.cube0.hbm.ch3.pc0",
      "sip0.cube0.hbm.ch3.pc1",
      "sip0.cube0.xbar0",
    ]);
    // Bridge link 512 GB/s, 1 mm; NOC link 128 GB/s, 1 mm.
    expect(edge(graph, "sip0.cube0.bridge", "sip0.cube0.xbar1")).toMatchObject({
      bwGbs: 512,
      latencyNs: 0.01,
    });
    expect(edge(graph, "sip0.cube1.noc.r0c2", "sip0.cube1.noc.r1c2")).toMatchObject({ bwGbs: 128 });
    // UCIe: 256 GB/s, 2 mm between the cubes; port <-> corner r0c0 (ucie_to_noc) at 256 GB/s,
    // 1 mm -> 0.01 ns. The port has no link to an XBAR half.
    expect(edge(graph, "sip0.cube0.ucie1", "sip0.cube1.ucie0")).toMatchObject({
      bwGbs: 256,
      latencyNs: 0.02,
      lengthMm: 2,
    });
    expect(edge(graph, "sip0.cube1.ucie0", "sip0.cube1.noc.r0c0")).toEqual({
      src: "sip0.cube1.ucie0",
      dst: "sip0.cube1.noc.r0c0",
      bwGbs: 256,
      latencyNs: 0.01,
      lengthMm: 1,
    });
    // The port's edges in insertion order: its corner, then the peer port (the inter-cube pairs
    // are laid after all cubes of the SIP).
    expect(graph.outEdges("sip0.cube1.ucie0").map((e) => e.dst)).toEqual([
      "sip0.cube1.noc.r0c0",
      "sip0.cube0.ucie1",
    ]);
    for (const xbar of graph.byKind("xbar")) {
      expect(graph.outEdges(xbar.id).some((e) => e.dst.includes("ucie"))).toBe(false);
    }
    // noc_to_xbar (128 GB/s, 1 mm -> 0.01 ns): router r0c0 <-> xbar0, both ways; the only
    // router <-> XBAR link of the cube.
    expect(edge(graph, "sip0.cube1.noc.r0c0", "sip0.cube1.xbar0")).toEqual({
      src: "sip0.cube1.noc.r0c0",
      dst: "sip0.cube1.xbar0",
      bwGbs: 128,
      latencyNs: 0.01,
      lengthMm: 1,
    });
    expect(edge(graph, "sip0.cube1.xbar0", "sip0.cube1.noc.r0c0")).toMatchObject({
      bwGbs: 128,
      latencyNs: 0.01,
    });
    // No other router touches an XBAR half: r0c0 -> xbar1 does not exist, and the opposite
    // corner r1c3 (router 2 x 4 - 1 = 7) links only to its mesh neighbours r0c3, r1c2 and to
    // PE 7's DMA and CPU, both ways.
    expect(graph.outEdges("sip0.cube0.noc.r0c0").some((e) => e.dst === "sip0.cube0.xbar1")).toBe(false);
    expect(graph.outEdges("sip0.cube0.noc.r1c3").map((e) => e.dst.slice("sip0.cube0.".length))).toEqual([
      "noc.r0c3",
      "noc.r1c2",
      "pe7.pe_dma",
      "pe7.pe_cpu",
    ]);
    expect(graph.outEdges("sip0.cube0.xbar1").some((e) => e.dst.includes(".noc."))).toBe(false);
    for (const router of graph.byKind("noc_router")) {
      const toXbar = graph.outEdges(router.id).filter((e) => /\.xbar[01]$/.test(e.dst));
      expect(toXbar.map((e) => e.dst)).toEqual(
        router.id.endsWith(".noc.r0c0") ? [`${router.id.slice(0, -"noc.r0c0".length)}xbar0`] : [],
      );
    }
    // r0c0's edges in the order they were laid: mesh right r0c1 and down r1c0, M_CPU, SRAM,
    // xbar0 (noc_to_xbar, right after sram <-> r0c0), the UCIe port, then PE 0's DMA and CPU.
    expect(graph.outEdges("sip0.cube0.noc.r0c0").map((e) => e.dst.slice("sip0.cube0.".length))).toEqual([
      "noc.r0c1",
      "noc.r1c0",
      "m_cpu",
      "sram",
      "xbar0",
      "ucie1",
      "pe0.pe_dma",
      "pe0.pe_cpu",
    ]);
    // xbar0: bridge, its channels 0-3, M_CPU.DMA, router r0c0, then the DMAs of the PEs in
    // columns 0 and 1 (PEs 0, 1, 4, 5), in the order the edges were laid.
    expect(graph.outEdges("sip0.cube0.xbar0").map((e) => e.dst.slice("sip0.cube0.".length))).toEqual([
      "bridge",
      "hbm.ch0",
      "hbm.ch1",
      "hbm.ch2",
      "hbm.ch3",
      "m_cpu_dma",
      "noc.r0c0",
      "pe0.pe_dma",
      "pe1.pe_dma",
      "pe4.pe_dma",
      "pe5.pe_dma",
    ]);
    // xbar1: bridge, channels 4-7, then the DMAs of PEs 2, 3, 6, 7 (columns 2, 3); no router.
    expect(graph.outEdges("sip0.cube0.xbar1").map((e) => e.dst.slice("sip0.cube0.".length))).toEqual([
      "bridge",
      "hbm.ch4",
      "hbm.ch5",
      "hbm.ch6",
      "hbm.ch7",
      "pe2.pe_dma",
      "pe3.pe_dma",
      "pe6.pe_dma",
      "pe7.pe_dma",
    ]);
  });

  it("makes control and fetch_store -> tcm edges one-way, and lists out-edges in insertion order", () => {
    const graph = loadDefault();
    expect(graph.outEdges("sip0.cube0.pe0.pe_cpu").map((e) => e.dst)).toEqual([
      "sip0.cube0.pe0.pe_scheduler",
      "sip0.cube0.noc.r0c0",
    ]);
    expect(graph.outEdges("sip0.cube0.pe0.pe_scheduler").map((e) => e.dst.split(".").at(-1))).toEqual([
      "pe_dma",
      "pe_fetch_store",
      "pe_gemm",
      "pe_math",
    ]);
    expect(graph.outEdges("sip0.cube0.pe0.pe_dma").map((e) => e.dst)).toEqual([
      "sip0.cube0.pe0.pe_tcm",
      "sip0.cube0.pe0.pe_fetch_store",
      "sip0.cube0.pe0.pe_mmu",
      "sip0.cube0.xbar0",
      "sip0.cube0.noc.r0c0",
    ]);
    expect(graph.outEdges("sip0.cube0.pe0.pe_tcm").map((e) => e.dst)).toEqual(["sip0.cube0.pe0.pe_dma"]);
    expect(edge(graph, "sip0.cube0.pe0.pe_fetch_store", "sip0.cube0.pe0.pe_tcm")).toMatchObject({
      bwGbs: 512,
    });
    expect(graph.outEdges("sip0.cube0.hbm")).toEqual([]);
  });

  it("fills in node fields and params", () => {
    const graph = loadDefault();
    expect(graph.node("sip0.cube1.pe5.pe_gemm")).toEqual({
      id: "sip0.cube1.pe5.pe_gemm",
      kind: "pe_gemm",
      impl: "pe_gemm_v1",
      params: {},
      parent: "sip0.cube1.pe5",
      sip: 0,
      cube: 1,
      pe: 5,
      coords: { row: 1, col: 1 },
    });
    expect(graph.node("sip0.cube1.pe5")).toMatchObject({
      kind: "pe",
      impl: null,
      parent: "sip0.cube1",
      pe: 5,
    });
    expect(graph.node("host")).toMatchObject({
      kind: "host",
      impl: null,
      parent: null,
      sip: null,
      cube: null,
    });
    expect(graph.node("sip0")).toMatchObject({ kind: "sip", impl: null, parent: null, sip: 0, cube: null });
    expect(graph.node("sip0.io_cpu")).toMatchObject({
      impl: "io_cpu_v1",
      parent: "sip0",
      sip: 0,
      cube: null,
    });
    expect(graph.node("sip0.cube1")).toMatchObject({
      kind: "cube",
      parent: "sip0",
      sip: 0,
      cube: 1,
      pe: null,
    });
    expect(graph.node("sip0.cube0.hbm").params).toEqual({
      channels: 8,
      pseudo_channels: 2,
      pc_bw_gbs: 25.6,
      access_latency_ns: 40,
      interleave_bytes: 256,
      flit_bytes: 64,
      capacity_bytes: 16 * 2 ** 30,
      mapping: "interleave",
      sids: 1,
      bank_groups: 4,
      banks_per_group: 4,
      row_bytes: 1024,
      burst_bytes: 32,
    });
    expect(graph.node("sip0.cube0.hbm.ch2")).toMatchObject({
      kind: "hbm_channel",
      impl: null,
      parent: "sip0.cube0.hbm",
    });
    expect(graph.node("sip0.cube0.hbm.ch2.pc1")).toMatchObject({
      kind: "hbm_pc",
      impl: null,
      parent: "sip0.cube0.hbm.ch2",
      params: { bw_gbs: 25.6, access_latency_ns: 40 },
    });
    expect(graph.node("sip0.cube0.xbar1")).toMatchObject({
      impl: "transit_v1",
      params: { first_flit_ns: 1 },
    });
    expect(graph.node("sip0.cube0.bridge")).toMatchObject({ kind: "bridge", params: { first_flit_ns: 1 } });
    expect(graph.node("sip0.cube0.noc.r1c2")).toMatchObject({
      kind: "noc_router",
      coords: { row: 1, col: 2 },
      pe: null,
      params: { first_flit_ns: 1 },
    });
    expect(graph.node("sip0.cube0.sram").params).toEqual({
      capacity_bytes: 8 * 2 ** 20,
      bw_gbs: 256,
      latency_ns: 5,
    });
    expect(graph.node("sip0.cube0.ucie1")).toMatchObject({ kind: "ucie_port", params: { first_flit_ns: 1 } });
  });

  it("answers lookups: has, byKind, children, PEs and HBM of a cube", () => {
    const graph = loadDefault();
    expect(graph.has("sip0.cube1.pe7.pe_tcm")).toBe(true);
    expect(graph.has("sip0.cube2")).toBe(false);
    expect(graph.byKind("xbar").map((node) => node.id)).toEqual([
      "sip0.cube0.xbar0",
      "sip0.cube0.xbar1",
      "sip0.cube1.xbar0",
      "sip0.cube1.xbar1",
    ]);
    expect(graph.byKind("no_such_kind")).toEqual([]);
    // 2 CPUs + hbm + 3 transit + 8 routers + sram + 1 UCIe port + 8 PEs = 24
    const children = graph.children("sip0.cube0").map((node) => node.id.slice("sip0.cube0.".length));
    expect(children).toEqual([
      "m_cpu",
      "m_cpu_dma",
      "hbm",
      "xbar0",
      "xbar1",
      "bridge",
      ...["r0c0", "r0c1", "r0c2", "r0c3", "r1c0", "r1c1", "r1c2", "r1c3"].map((router) => `noc.${router}`),
      "sram",
      "ucie1",
      ...Array.from({ length: 8 }, (_, p) => `pe${p}`),
    ]);
    expect(graph.children("sip0").map((node) => node.id)).toEqual([
      "sip0.io_cpu",
      "sip0.cube0",
      "sip0.cube1",
    ]);
    expect(graph.children("sip0.cube0.hbm")).toHaveLength(8);
    expect(graph.children("sip0.cube0.pe0.pe_tcm")).toEqual([]);
    expect(graph.pesOfCube(0, 1).map((node) => node.id)).toEqual(
      Array.from({ length: 8 }, (_, p) => `sip0.cube1.pe${p}`),
    );
    expect(graph.hbmChannelsOfCube(0, 1).map((node) => node.id)).toEqual(
      Array.from({ length: 8 }, (_, h) => `sip0.cube1.hbm.ch${h}`),
    );
    const pcs = graph.hbmPseudoChannelsOfCube(0, 0).map((node) => node.id);
    expect(pcs).toHaveLength(16);
    expect(pcs.slice(0, 3)).toEqual([
      "sip0.cube0.hbm.ch0.pc0",
      "sip0.cube0.hbm.ch0.pc1",
      "sip0.cube0.hbm.ch1.pc0",
    ]);
    // Lookups return fresh arrays: changing one does not change the graph.
    graph.byKind("xbar").pop();
    expect(graph.byKind("xbar")).toHaveLength(4);
  });

  it("names an unknown node with a suggestion (TOPOLOGY_UNKNOWN_NODE)", () => {
    const graph = loadDefault();
    const error = thrown(() => graph.node("sip0.cube0.pe0.pe_dam"));
    expect(error.code).toBe("TOPOLOGY_UNKNOWN_NODE");
    expect(error.message).toBe(
      '[TOPOLOGY_UNKNOWN_NODE] no node "sip0.cube0.pe0.pe_dam" in topology "default" (229 nodes); did you mean "sip0.cube0.pe0.pe_dma"?',
    );
    expect(thrown(() => graph.children("nothing.like.this.at.all")).message).toContain(
      'node ids are dotted paths such as "sip0.cube0.pe0.pe_dma"',
    );
    expect(thrown(() => graph.pesOfCube(0, 2)).message).toContain(
      'no node "sip0.cube2" in topology "default" (229 nodes); did you mean "sip0.cube0"?',
    );
    expect(thrown(() => graph.hbmChannelsOfCube(1, 0)).code).toBe("TOPOLOGY_UNKNOWN_NODE");
    expect(thrown(() => graph.outEdges("sip0.cube0.pe0.pe_dmaa")).code).toBe("TOPOLOGY_UNKNOWN_NODE");
  });
});

describe("expandTopology on a generated 2-SIP topology with a UCIe mesh", () => {
  it("has 501 nodes and 1158 edges", () => {
    // Nodes per cube: cube 1 + CPUs 2 + hbm 1 + channels 4 + PCs 8 + xbars, bridge 3
    //   + routers 2 x 2 = 4 + sram 1 + UCIe ports 2 (2 x 2 mesh: every cube has 2 peers)
    //   + PEs 4 x 9 = 36                                                       = 62
    // Nodes: host 1 + 2 SIPs x (sip, io_cpu 2 + 4 cubes x 62 = 250)             = 501
    // Edges per cube: CPUs 6 + ch<->pc 8 x 2 = 16 + bridge 4 + xbar<->ch 4 x 2 = 8 + m_cpu_dma<->xbar0 2
    //   + mesh (2 x 1 right + 1 x 2 down = 4 links) 8 + m_cpu<->r0c0 2 + sram<->r0c0 2
    //   + r0c0<->xbar0 (noc_to_xbar, the only one) 2 + ucie<->corner 2 x 2 = 4 + PEs 4 x 22 = 88
    //   = 6 + 16 + 4 + 8 + 2 + 8 + 2 + 2 + 2 + 4 + 88                          = 142
    // (2 fewer than the 144 with a second noc_to_xbar link r1c1<->xbar1.)
    // Edges per SIP: host<->io_cpu 2 + 4 x 142 + UCIe mesh links 0-1, 0-2, 1-3, 2-3: 4 x 2 = 8 = 578
    // Edges: 2 x 578 + inter-SIP ring of 2 (one pair) 2                         = 1158
    const graph = expandTopology(resolveTopology(twoSipMesh));
    expect(graph.nodes).toHaveLength(501);
    expect(graph.edges).toHaveLength(1158);
    expect(kindCounts(graph)).toMatchObject({ host: 1, sip: 2, io_cpu: 2, cube: 8, ucie_port: 16, pe: 32 });
    expect(graph.nodes[251]?.id).toBe("sip1");
  });

  it("places UCIe ports on NOC corners in peer order and links the pairs once", () => {
    const graph = expandTopology(resolveTopology(twoSipMesh));
    const ports = graph.byKind("ucie_port").filter((node) => node.sip === 1);
    // Mesh of 4 cubes, 2 columns: 0 1 / 2 3. Peers: 0 -> [1, 2], 1 -> [0, 3], 2 -> [0, 3], 3 -> [1, 2].
    // The i-th peer's port goes to corner i of r0c0, r0c1, r1c1, r1c0 (ucie_to_noc) and to nothing
    // else in its cube. Out-edges in insertion order: corner, then peer port.
    expect(
      ports.map(
        (port) =>
          `${port.id} ${graph
            .outEdges(port.id)
            .map((e) => e.dst)
            .join(" ")}`,
      ),
    ).toEqual([
      "sip1.cube0.ucie1 sip1.cube0.noc.r0c0 sip1.cube1.ucie0",
      "sip1.cube0.ucie2 sip1.cube0.noc.r0c1 sip1.cube2.ucie0",
      "sip1.cube1.ucie0 sip1.cube1.noc.r0c0 sip1.cube0.ucie1",
      "sip1.cube1.ucie3 sip1.cube1.noc.r0c1 sip1.cube3.ucie1",
      "sip1.cube2.ucie0 sip1.cube2.noc.r0c0 sip1.cube0.ucie2",
      "sip1.cube2.ucie3 sip1.cube2.noc.r0c1 sip1.cube3.ucie2",
      "sip1.cube3.ucie1 sip1.cube3.noc.r0c0 sip1.cube1.ucie3",
      "sip1.cube3.ucie2 sip1.cube3.noc.r0c1 sip1.cube2.ucie3",
    ]);
    // No port <-> XBAR edge remains. Instead every cube has cube.links.noc_to_xbar (default 128
    // GB/s, 1 mm -> 0.01 ns): r0c0 <-> xbar0 only; the opposite corner r{2-1}c{2-1} = r1c1
    // (router 2 x 2 - 1 = 3) has no XBAR link.
    const isPort = (id: string) => /\.ucie\d+$/.test(id);
    const isXbar = (id: string) => /\.xbar[01]$/.test(id);
    const isRouter = (id: string) => /\.noc\.r\d+c\d+$/.test(id);
    expect(
      graph.edges.filter((e) => (isPort(e.src) && isXbar(e.dst)) || (isXbar(e.src) && isPort(e.dst))),
    ).toEqual([]);
    expect(edge(graph, "sip1.cube3.noc.r0c0", "sip1.cube3.xbar0")).toEqual({
      src: "sip1.cube3.noc.r0c0",
      dst: "sip1.cube3.xbar0",
      bwGbs: 128,
      latencyNs: 0.01,
      lengthMm: 1,
    });
    expect(edge(graph, "sip1.cube3.xbar0", "sip1.cube3.noc.r0c0")).toMatchObject({
      bwGbs: 128,
      latencyNs: 0.01,
    });
    // 2 SIPs x 4 cubes x 1 router <-> XBAR link x 2 directed edges = 16, r0c0 <-> xbar0 only.
    const routerXbar = graph.edges.filter(
      (e) => (isRouter(e.src) && isXbar(e.dst)) || (isXbar(e.src) && isRouter(e.dst)),
    );
    expect(routerXbar).toHaveLength(2 * 4 * 1 * 2);
    expect(
      new Set(routerXbar.map((e) => [e.src, e.dst].map((id) => id.split(".").slice(2).join(".")).join("-"))),
    ).toEqual(new Set(["noc.r0c0-xbar0", "xbar0-noc.r0c0"]));
    // The inter-cube links of a SIP follow its cubes, pair by pair (c < n), a -> b then b -> a.
    const sip0Ucie = graph.edges.filter((e) => e.src.endsWith("ucie1") && e.dst.endsWith("ucie0"));
    expect(sip0Ucie.map((e) => e.src)).toEqual(["sip0.cube0.ucie1", "sip1.cube0.ucie1"]);
    // The inter-SIP link is last: io_cpu <-> io_cpu, 100 GB/s, 500 ns.
    expect(graph.edges.slice(-2)).toEqual([
      { src: "sip0.io_cpu", dst: "sip1.io_cpu", bwGbs: 100, latencyNs: 500, lengthMm: 0 },
      { src: "sip1.io_cpu", dst: "sip0.io_cpu", bwGbs: 100, latencyNs: 500, lengthMm: 0 },
    ]);
  });

  it("uses latency_ns when a link gives it and length x wire delay otherwise", () => {
    const graph = expandTopology(
      resolveTopology({
        ...twoSipMesh,
        wire_delay_ns_per_mm: 0.5,
        cube: { ...twoSipMesh.cube, noc: { rows: 2, cols: 2, link: { bw_gbs: 32, latency_ns: 3 } } },
      }),
    );
    expect(edge(graph, "sip0.cube0.noc.r0c0", "sip0.cube0.noc.r0c1")).toMatchObject({
      bwGbs: 32,
      latencyNs: 3,
      lengthMm: 0,
    });
    // pe_dma_to_xbar: 2 mm x 0.5 ns/mm.
    expect(edge(graph, "sip0.cube0.pe0.pe_dma", "sip0.cube0.xbar0")).toMatchObject({
      latencyNs: 1,
      lengthMm: 2,
    });
  });
});

describe("link patterns", () => {
  it("ring: i +- 1, deduplicated; none for one member", () => {
    expect(linkPatternPeers("ring", 1, undefined, 0)).toEqual([]);
    expect(linkPatternPeers("ring", 2, undefined, 0)).toEqual([1]);
    expect(linkPatternPeers("ring", 2, undefined, 1)).toEqual([0]);
    expect(linkPatternPeers("ring", 5, undefined, 0)).toEqual([1, 4]);
    expect(linkPatternPeers("ring", 5, undefined, 3)).toEqual([2, 4]);
  });

  it("mesh: 4-neighbourhood on a grid of ceil(sqrt(n)) columns, or mesh_cols, last row short", () => {
    // 5 members, 3 columns: 0 1 2 / 3 4
    expect([0, 1, 2, 3, 4].map((i) => linkPatternPeers("mesh", 5, undefined, i))).toEqual([
      [1, 3],
      [0, 2, 4],
      [1],
      [0, 4],
      [1, 3],
    ]);
    // 4 members, 4 columns: a line.
    expect(linkPatternPeers("mesh", 4, 4, 1)).toEqual([0, 2]);
    expect(linkPatternPeers("mesh", 1, undefined, 0)).toEqual([]);
  });

  it("all_to_all and none", () => {
    expect(linkPatternPeers("all_to_all", 4, undefined, 2)).toEqual([0, 1, 3]);
    expect(linkPatternPeers("none", 4, undefined, 2)).toEqual([]);
  });

  it("expands one cube and one SIP without UCIe or inter-SIP links", () => {
    const graph = expandTopology(resolveTopology({ name: "one", sip: { cubes: 1 } }));
    expect(graph.byKind("ucie_port")).toEqual([]);
    // Default cube (2 x 4, HBM 8 x 2) with no UCIe port: 113 - 1 nodes, 264 - 2 = 262 edges
    // (the port's corner link; the noc_to_xbar link r0c0 <-> xbar0 stays).
    expect(graph.nodes).toHaveLength(1 + 2 + 112);
    expect(graph.edges).toHaveLength(2 + 262);
  });
});

describe("a 1 x 1 NOC", () => {
  it("links its one router r0c0 to xbar0 only (noc_to_xbar), so XBAR half 1 is reached over the bridge", () => {
    const graph = expandTopology(resolveTopology({ name: "tiny", cube: { noc: { rows: 1, cols: 1 } } }));
    // Nodes: host 1 + sip0, io_cpu 2 + cube 1 + CPUs 2 + hbm 1 + 8 channels + 16 PCs + xbars,
    //   bridge 3 + 1 router + sram 1 + no UCIe port + 1 PE x 9 = 42                 = 45
    // Edges: host 2 + CPUs 6 + ch<->pc 32 + bridge 4 + xbar<->ch 16 + m_cpu_dma<->xbar0 2 + no
    //   mesh link + m_cpu<->r0c0 2 + sram<->r0c0 2 + r0c0<->xbar0 2 + 1 PE x 22 (its DMA on xbar0:
    //   column 0 < ceil(1/2) = 1) = 2 + 6 + 32 + 4 + 16 + 2 + 2 + 2 + 2 + 22      = 90
    expect(graph.nodes).toHaveLength(45);
    expect(graph.edges).toHaveLength(90);
    expect(
      graph
        .outEdges("sip0.cube0.noc.r0c0")
        .map((e) => e.dst.slice("sip0.cube0.".length))
        .filter((dst) => dst.startsWith("xbar")),
    ).toEqual(["xbar0"]);
    // r0c0 -> channel 4 (half 1: 4 >= ceil(8/2)): 0.01 (->xbar0) + 1 (xbar0) + 0.01 (->bridge)
    // + 1 (bridge) + 0.01 (->xbar1) + 1 (xbar1) + 0.01 (->ch4) = 3.04 ns.
    const route = graph.route("sip0.cube0.noc.r0c0", "sip0.cube0.hbm.ch4");
    expect(route.hops.map((id) => id.slice("sip0.cube0.".length))).toEqual([
      "noc.r0c0",
      "xbar0",
      "bridge",
      "xbar1",
      "hbm.ch4",
    ]);
    expect(route.latencyNs).toBe(3.04);
  });
});

describe("overrides", () => {
  const base: TopologyInput = { name: "overrides", sip: { cubes: 2 }, cube: { noc: { rows: 1, cols: 2 } } };
  const expandWith = (overrides: TopologyInput["overrides"]) =>
    expandTopology(resolveTopology({ ...base, overrides }));

  it("an exact id changes one node's impl and merges params", () => {
    const graph = expandWith([
      { match: "sip0.cube1.pe1.pe_gemm", impl: "@acme/kb-gemm:gemm_fast", params: { mac_rows: 256 } },
    ]);
    expect(graph.node("sip0.cube1.pe1.pe_gemm")).toMatchObject({
      impl: "@acme/kb-gemm:gemm_fast",
      params: { mac_rows: 256 },
    });
    expect(graph.node("sip0.cube1.pe0.pe_gemm")).toMatchObject({ impl: "pe_gemm_v1", params: {} });
  });

  it("a glob changes every matching node; later overrides merge over earlier ones, shallowly", () => {
    const graph = expandWith([
      { match: "sip0.cube*.pe*.pe_dma", params: { queue_depth: 4, shape: { a: 1 } } },
      { match: "sip0.cube1.pe*.pe_dma", params: { shape: { b: 2 } } },
      { match: "sip0.cube0.noc.r0c*", params: { first_flit_ns: 2.5, extra: true } },
    ]);
    expect(graph.byKind("pe_dma").map((node) => node.params)).toEqual([
      { queue_depth: 4, shape: { a: 1 } },
      { queue_depth: 4, shape: { a: 1 } },
      { queue_depth: 4, shape: { b: 2 } },
      { queue_depth: 4, shape: { b: 2 } },
    ]);
    expect(graph.byKind("pe_dma").every((node) => node.impl === "pe_dma_v1")).toBe(true);
    expect(graph.node("sip0.cube0.noc.r0c1").params).toEqual({ first_flit_ns: 2.5, extra: true });
    expect(graph.node("sip0.cube1.noc.r0c1").params).toEqual({ first_flit_ns: 1 });
  });

  it("an override that matches no node is an error with a suggestion", () => {
    const error = thrown(() => expandWith([{ match: "sip0.cube0.pe1.pe_gem", impl: "x" }]));
    expect(error.code).toBe("TOPOLOGY_INVALID");
    expect(error.detail).toBe(
      'overrides[0].match: "sip0.cube0.pe1.pe_gem" matches no node; did you mean "sip0.cube0.pe1.pe_gemm"?',
    );
    const glob = thrown(() =>
      expandWith([
        { match: "sip0.cube0.pe*.pe_dma", params: {} },
        { match: "sip*.cube9.pe0.pe_dma", params: {} },
      ]),
    );
    expect(glob.detail).toBe(
      'overrides[1].match: "sip*.cube9.pe0.pe_dma" matches no node; did you mean "sip0.cube0.pe0.pe_dma"?',
    );
  });

  it("says so when a match names only nodes without an impl, or looks like no id at all", () => {
    expect(thrown(() => expandWith([{ match: "sip*.cube0.pe*", impl: "x" }])).detail).toBe(
      'overrides[0].match: "sip*.cube0.pe*" matches no node with an implementation: it names 2 container node(s) such as "sip0.cube0.pe0" (kind pe), which overrides cannot change; match their components instead, such as "sip0.cube0.pe0.pe_cpu".',
    );
    expect(thrown(() => expandWith([{ match: "completely-different", impl: "x" }])).detail).toBe(
      'overrides[0].match: "completely-different" matches no node. Node ids are dotted paths such as "sip0.cube0.pe0.pe_gemm"; "*" matches any characters within one segment.',
    );
  });

  it("refuses a first_flit_ns that is not a number of ns >= 0", () => {
    const error = thrown(() => expandWith([{ match: "sip0.cube0.xbar0", params: { first_flit_ns: -1 } }]));
    expect(error.code).toBe("TOPOLOGY_INVALID");
    expect(error.message).toBe(
      "[TOPOLOGY_INVALID] node sip0.cube0.xbar0: params.first_flit_ns / forward_ns must be a number of ns >= 0, got -1. Fix the override that sets it.",
    );
  });

  it("refuses a forward_ns that is not a number of ns >= 0, and writes the defaults into params", () => {
    // sip.io_cpu.forward_ns defaults to 50, cube.m_cpu_dma.forward_ns to 20.
    const graph = expandWith([]);
    expect(graph.node("sip0.io_cpu").params).toEqual({ forward_ns: 50 });
    expect(graph.node("sip0.cube1.m_cpu_dma").params).toEqual({ forward_ns: 20 });
    expect(graph.node("sip0.cube1.m_cpu").params).toEqual({});
    const error = thrown(() =>
      expandWith([{ match: "sip0.cube1.m_cpu_dma", params: { forward_ns: "fast" } }]),
    );
    expect(error.code).toBe("TOPOLOGY_INVALID");
    expect(error.message).toBe(
      '[TOPOLOGY_INVALID] node sip0.cube1.m_cpu_dma: params.first_flit_ns / forward_ns must be a number of ns >= 0, got "fast". Fix the override that sets it.',
    );
  });
});
