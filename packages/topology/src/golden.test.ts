import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadTopologyGraphFile } from "./node.js";

// Golden expansions of the three bundled topologies: the exact counts by kind (derivable from the
// expansion rules; default.yaml's are derived by hand in graph.test.ts) and a digest of every node
// (id, kind, impl, parent) and every edge (src, dst, bandwidth, latency) in expansion order. A
// change to expansion shows up here; if it is intended, update the digest in the same commit. (The
// digests moved when cube.noc defaulted to port_hop_v1: the routers' impl is hashed; and the
// reference topologies' when their HBM became hbm_ctrl_v2, issue 37.)
function summary(file: string) {
  const { graph } = loadTopologyGraphFile(new URL(`../../../topologies/${file}`, import.meta.url).pathname);
  const kinds: Record<string, number> = {};
  for (const node of graph.nodes) kinds[node.kind] = (kinds[node.kind] ?? 0) + 1;
  const hash = createHash("sha256");
  for (const node of graph.nodes) hash.update(`${node.id} ${node.kind} ${node.impl} ${node.parent}\n`);
  for (const edge of graph.edges) hash.update(`${edge.src} ${edge.dst} ${edge.bwGbs} ${edge.latencyNs}\n`);
  return {
    nodes: graph.nodes.length,
    edges: graph.edges.length,
    kinds,
    digest: hash.digest("hex").slice(0, 16),
  };
}

describe("golden expansions", () => {
  it.each([
    ["default.yaml", "DEFAULT"],
    ["ref-cube.yaml", "REFCUBE"],
    ["ref-4sip.yaml", "REF4SIP"],
  ])("%s", (file, key) => {
    expect(summary(file)).toEqual(GOLDEN[key]);
  });
});

// Node counts by hand: default.yaml in graph.test.ts. ref-cube: 1 SIP, 1 cube of 4 x 8 PEs, HBM
// 16 x 2, no UCIe port: host + sip + io_cpu + cube + m_cpu + m_cpu_dma + hbm + 16 channels + 32
// PCs + 2 xbar + bridge + 32 routers + sram + 32 PEs + 8 x 32 components = 379. ref-4sip: per cube
// 1 + 1 + 1 + 1 + 16 + 32 + 2 + 1 + 16 + 1 + 2 ports (ring of 4) + 16 + 128 = 218; per SIP
// 2 + 4 x 218 = 874; host + 4 x 874 = 3497. Edge counts: bench cases.ts and graph.test.ts.
const GOLDEN: Record<string, unknown> = {
  DEFAULT: {
    nodes: 229,
    edges: 532,
    kinds: {
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
    },
    digest: "4bae40451dfbfc7e",
  },
  REFCUBE: {
    nodes: 379,
    edges: 924,
    kinds: {
      host: 1,
      sip: 1,
      io_cpu: 1,
      cube: 1,
      m_cpu: 1,
      m_cpu_dma: 1,
      hbm_ctrl: 1,
      hbm_channel: 16,
      hbm_pc: 32,
      xbar: 2,
      bridge: 1,
      noc_router: 32,
      sram: 1,
      pe: 32,
      pe_cpu: 32,
      pe_scheduler: 32,
      pe_dma: 32,
      pe_fetch_store: 32,
      pe_gemm: 32,
      pe_math: 32,
      pe_mmu: 32,
      pe_tcm: 32,
    },
    digest: "0a3901f333239ca3",
  },
  REF4SIP: {
    nodes: 3497,
    edges: 8340,
    kinds: {
      host: 1,
      sip: 4,
      io_cpu: 4,
      cube: 16,
      m_cpu: 16,
      m_cpu_dma: 16,
      hbm_ctrl: 16,
      hbm_channel: 256,
      hbm_pc: 512,
      xbar: 32,
      bridge: 16,
      noc_router: 256,
      sram: 16,
      ucie_port: 32,
      pe: 256,
      pe_cpu: 256,
      pe_scheduler: 256,
      pe_dma: 256,
      pe_fetch_store: 256,
      pe_gemm: 256,
      pe_math: 256,
      pe_mmu: 256,
      pe_tcm: 256,
    },
    digest: "f9917c100c14c868",
  },
};
