import { isKbError, type KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { expandTopology } from "./expand.js";
import type { TopologyGraph } from "./graph.js";
import { resolveTopology } from "./load.js";
import { loadTopologyFile } from "./node.js";
import { idealTransferNs, Router } from "./route.js";
import type { TopologyInput } from "./schema.js";

const defaultYaml = new URL("../../../topologies/default.yaml", import.meta.url).pathname;
const loadDefault = () => expandTopology(loadTopologyFile(defaultYaml));
const expand = (input: TopologyInput) => expandTopology(resolveTopology(input));

function thrown(action: () => unknown): KbError {
  try {
    action();
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}

/** Drops the common `sip0.` prefix so expected paths read shorter. */
const short = (hops: readonly string[]) => hops.map((id) => id.replace(/^sip0\./, ""));

// Defaults in play (wire delay 0.01 ns/mm; per intermediate hop: first_flit_ns 1 on xbar, bridge,
// routers, UCIe ports, forward_ns 50 on io_cpu and 20 on m_cpu_dma, 0 on the other forwarding
// kinds; host, m_cpu, sram, pe_cpu, pe_dma and the other engines do not forward at all):
// pe_dma_to_xbar 2 mm = 0.02 ns / 128 GB/s; xbar_to_hbm 1 mm = 0.01 ns / 64 GB/s; bridge link
// 0.01 ns / 512 GB/s; pe_to_noc 0.005 ns / 64 GB/s; NOC link 0.01 ns; m_cpu_to_noc 0.01 ns /
// 64 GB/s; io_link 5 mm = 0.05 ns / 128 GB/s; m_cpu_dma_to_xbar 0.02 ns / 128 GB/s; sram_to_noc
// 0.01 ns / 256 GB/s; noc_to_xbar 0.01 ns / 128 GB/s (r0c0 <-> xbar0 only: the NOC's one link to
// an XBAR half); ucie_to_noc 0.01 ns / 256 GB/s; UCIe 2 mm = 0.02 ns / 256 GB/s; host_link 0 ns /
// 64 GB/s. In default.yaml each cube has one UCIe port, linked only to corner r0c0 and to its peer
// port.
describe("route on topologies/default.yaml", () => {
  it("PE 0's DMA reaches channel 0 through its own XBAR half", () => {
    // 0.02 (dma->xbar0) + 1 (xbar0) + 0.01 (xbar0->ch0) = 1.03 ns; min(128, 64) = 64 GB/s.
    // Any path over the NOC pays a router and the XBAR: >= 2 ns.
    const route = loadDefault().route("sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm.ch0");
    expect(short(route.hops)).toEqual(["cube0.pe0.pe_dma", "cube0.xbar0", "cube0.hbm.ch0"]);
    expect(route.latencyNs).toBe(1.03);
    expect(route.minBwGbs).toBe(64);
    expect(route.links.map((link) => [link.src, link.dst])).toEqual([
      ["sip0.cube0.pe0.pe_dma", "sip0.cube0.xbar0"],
      ["sip0.cube0.xbar0", "sip0.cube0.hbm.ch0"],
    ]);
  });

  it("PE 7 (column 3, XBAR half 1) reaches channel 0 (half 0) across the bridge", () => {
    // Bridge: 0.02 + 1 (xbar1) + 0.01 + 1 (bridge) + 0.01 + 1 (xbar0) + 0.01 = 3.05 ns.
    // Over the NOC to PE 5's DMA (column 1, half 0) would be 0.005 + 3 routers r1c3, r1c2, r1c1
    // (3 ns) + 2 x 0.01 + 0.005 + 0.02 + 1 (xbar0) + 0.01 = 4.06 ns, but a PE_DMA does not
    // forward. Over the NOC to r0c0 and noc_to_xbar: 0.005 + 5 routers r1c3 .. r0c0 (5 ns)
    // + 4 x 0.01 + 0.01 (->xbar0) + 1 (xbar0) + 0.01 = 6.065 ns. The bridge wins.
    const route = loadDefault().route("sip0.cube0.pe7.pe_dma", "sip0.cube0.hbm.ch0");
    expect(short(route.hops)).toEqual([
      "cube0.pe7.pe_dma",
      "cube0.xbar1",
      "cube0.bridge",
      "cube0.xbar0",
      "cube0.hbm.ch0",
    ]);
    expect(route.latencyNs).toBe(3.05);
    expect(route.minBwGbs).toBe(64);
  });

  it("a cube 0 PE reaches a cube 1 channel over UCIe and cube 1's corner router into its XBAR half, not through M_CPU or IO_CPU", () => {
    // A UCIe port links only to its NOC corner and its peer port, so the route enters cube 1 at
    // its corner r0c0 and reaches xbar0 over noc_to_xbar.
    // From the PE's router, 6 links: 0.005 (dma->r0c0) + 1 (r0c0) + 0.01 (->ucie1) + 1 (ucie1)
    //   + 0.02 (->cube1.ucie0) + 1 (ucie0) + 0.01 (->cube1.r0c0) + 1 (r0c0) + 0.01 (->xbar0)
    //   + 1 (xbar0) + 0.01 (->ch0) = 0.065 + 5 = 5.065 ns.
    // From the PE's XBAR half, 7 links: 0.02 (dma->xbar0) + 1 (xbar0) + 0.01 (->r0c0) + 1 (r0c0)
    //   + 0.01 + 1 + 0.02 + 1 + 0.01 + 1 + 0.01 + 1 + 0.01 = 0.09 + 6 = 6.09 ns.
    // Inside cube 1, r0c0 <-> xbar0 is the only way from the NOC to an XBAR half.
    // Through the IO_CPU: M_CPU does not forward, so only M_CPU.DMA leads there: 0.02 + 1 (xbar0)
    //   + 0.02 (->m_cpu_dma) + 20 + 0.05 (->io_cpu) + 50 + 0.05 (->cube1.m_cpu_dma) + 20 + 0.02
    //   (->xbar0) + 1 + 0.01 = 92.17 ns.
    // Nor does cube 1's NOC reach its XBAR through a PE_DMA (not a forwarding kind).
    const route = loadDefault().route("sip0.cube0.pe0.pe_dma", "sip0.cube1.hbm.ch0");
    expect(short(route.hops)).toEqual([
      "cube0.pe0.pe_dma",
      "cube0.noc.r0c0",
      "cube0.ucie1",
      "cube1.ucie0",
      "cube1.noc.r0c0",
      "cube1.xbar0",
      "cube1.hbm.ch0",
    ]);
    expect(route.latencyNs).toBe(5.065);
    // min(64 pe_to_noc, 256 ucie_to_noc, 256 UCIe, 256 ucie_to_noc, 128 noc_to_xbar, 64
    // xbar_to_hbm) = 64 GB/s.
    expect(route.minBwGbs).toBe(64);
  });

  it("a cube 0 PE reaches a cube 1 channel of XBAR half 1 through cube 1's r0c0, xbar0 and the bridge", () => {
    // Cube 1's NOC meets the XBAR only at r0c0 <-> xbar0, so channel 4 (half 1: 4 >= ceil(8/2))
    // is reached over xbar0, the bridge and xbar1: the 5.065 ns route to channel 0 up to cube 1's
    // xbar0 (5.065 - 0.01 (->ch0) = 5.055), then + 0.01 (->bridge) + 1 (bridge) + 0.01 (->xbar1)
    // + 1 (xbar1) + 0.01 (->ch4) = 7.085 ns. There is no router <-> xbar1 link to take instead.
    const graph = loadDefault();
    const route = graph.route("sip0.cube0.pe0.pe_dma", "sip0.cube1.hbm.ch4");
    expect(short(route.hops)).toEqual([
      "cube0.pe0.pe_dma",
      "cube0.noc.r0c0",
      "cube0.ucie1",
      "cube1.ucie0",
      "cube1.noc.r0c0",
      "cube1.xbar0",
      "cube1.bridge",
      "cube1.xbar1",
      "cube1.hbm.ch4",
    ]);
    expect(route.latencyNs).toBe(7.085);
    // min(64 pe_to_noc, 256, 256, 256, 128 noc_to_xbar, 512, 512, 64 xbar_to_hbm) = 64 GB/s.
    expect(route.minBwGbs).toBe(64);
    // From cube 1's port itself: 0.01 (->r0c0) + 1 (r0c0) + 0.01 (->xbar0) + 1 (xbar0) + 0.01
    // (->bridge) + 1 (bridge) + 0.01 (->xbar1) + 1 (xbar1) + 0.01 (->ch4) = 4.05 ns.
    const fromPort = graph.route("sip0.cube1.ucie0", "sip0.cube1.hbm.ch4");
    expect(short(fromPort.hops)).toEqual([
      "cube1.ucie0",
      "cube1.noc.r0c0",
      "cube1.xbar0",
      "cube1.bridge",
      "cube1.xbar1",
      "cube1.hbm.ch4",
    ]);
    expect(fromPort.latencyNs).toBe(4.05);
  });

  it("a slow UCIe link keeps the route on UCIe (M_CPU does not forward) until the M_CPU.DMA path is faster", () => {
    // The default.yaml shape with the UCIe link given a latency L instead of 2 mm. The UCIe route
    // above costs 5.065 - 0.02 + L = 5.045 + L ns; the IO path through M_CPU.DMA 92.17 ns (it
    // does not depend on L). Crossover at L = 92.17 - 5.045 = 87.125 ns.
    const withUcie = (latencyNs: number) =>
      expand({
        name: "slow-ucie",
        sip: { cubes: 2, ucie: { pattern: "ring", bw_gbs: 256, latency_ns: latencyNs } },
        cube: { hbm: { channels: 8, pc_bw_gbs: 25.6 } },
      }).route("sip0.cube0.pe0.pe_dma", "sip0.cube1.hbm.ch0");

    // L = 80: UCIe 5.045 + 80 = 85.045 ns < 92.17. If M_CPU forwarded (at 0 ns), r0c0 -> m_cpu ->
    // io_cpu -> cube1.m_cpu -> cube1.r0c0 -> xbar0 would cost 0.005 + 1 (r0c0) + 0.01 + 0 + 0.05
    // + 50 (io_cpu) + 0.05 + 0 + 0.01 + 1 (r0c0) + 0.01 + 1 (xbar0) + 0.01 = 53.145 ns and win;
    // it does not, so the route stays on UCIe.
    const slow = withUcie(80);
    expect(short(slow.hops)).toEqual([
      "cube0.pe0.pe_dma",
      "cube0.noc.r0c0",
      "cube0.ucie1",
      "cube1.ucie0",
      "cube1.noc.r0c0",
      "cube1.xbar0",
      "cube1.hbm.ch0",
    ]);
    expect(slow.latencyNs).toBe(85.045);
    expect(slow.hops).not.toContain("sip0.cube0.m_cpu");
    expect(slow.hops).not.toContain("sip0.cube1.m_cpu");

    // Either side of the crossover: L = 87 gives 5.045 + 87 = 92.045 ns < 92.17 (UCIe); L = 87.25
    // gives 92.295 ns > 92.17 (IO path, 92.17 ns).
    expect(withUcie(87).latencyNs).toBe(92.045);
    expect(withUcie(87).hops).toContain("sip0.cube1.ucie0");
    expect(withUcie(87.25).latencyNs).toBe(92.17);
    expect(withUcie(87.25).hops).toContain("sip0.io_cpu");

    // L = 100: UCIe 105.045 ns > 92.17: the IO path through both M_CPU.DMAs (never M_CPU).
    const slower = withUcie(100);
    expect(short(slower.hops)).toEqual([
      "cube0.pe0.pe_dma",
      "cube0.xbar0",
      "cube0.m_cpu_dma",
      "io_cpu",
      "cube1.m_cpu_dma",
      "cube1.xbar0",
      "cube1.hbm.ch0",
    ]);
    expect(slower.latencyNs).toBe(92.17);
    // min(128 pe_dma_to_xbar, 128 m_cpu_dma_to_xbar, 128 io_link x 2, 128, 64 xbar_to_hbm) = 64.
    expect(slower.minBwGbs).toBe(64);
  });

  it("the host reaches a pseudo-channel through IO_CPU, M_CPU.DMA and the XBAR halves, paying their forward_ns", () => {
    // 0 (host link) + 50 (io_cpu forward_ns) + 0.05 (io_link) + 20 (m_cpu_dma forward_ns) + 0.02
    // (->xbar0) + 1 + 0.01 (->bridge) + 1 + 0.01 (->xbar1) + 1 + 0.01 (->ch5) + 0 (ch5) + 0 (->pc1)
    // = 73.1 ns; min(64, 128, 128, 512, 512, 64, 25.6) = 25.6 GB/s.
    // M_CPU does not forward, so io_cpu -> m_cpu -> m_cpu_dma and io_cpu -> m_cpu -> r0c0 are no
    // paths; through cube 0 and UCIe adds the cube 0 XBAR half, routers and both ports (>= 5 ns
    // more); no route leaves the NOC for the XBAR through a PE.
    const route = loadDefault().route("host", "sip0.cube1.hbm.ch5.pc1");
    expect(short(route.hops)).toEqual([
      "host",
      "io_cpu",
      "cube1.m_cpu_dma",
      "cube1.xbar0",
      "cube1.bridge",
      "cube1.xbar1",
      "cube1.hbm.ch5",
      "cube1.hbm.ch5.pc1",
    ]);
    expect(route.latencyNs).toBe(73.1);
    expect(route.minBwGbs).toBe(25.6);
  });

  it("prefers fewer hops at equal latency", () => {
    // Inside a PE every link is 0 ns and pe_fetch_store forwards at 0 ns: pe_dma -> pe_tcm (0 ns,
    // 1 link) ties with pe_dma -> pe_fetch_store -> pe_tcm (0 + 0 + 0 ns, 2 links).
    const route = loadDefault().route("sip0.cube0.pe0.pe_dma", "sip0.cube0.pe0.pe_tcm");
    expect(short(route.hops)).toEqual(["cube0.pe0.pe_dma", "cube0.pe0.pe_tcm"]);
    expect(route.latencyNs).toBe(0);
  });

  it("passes only through forwarding kinds: not a PE_DMA, M_CPU or the host", () => {
    const graph = loadDefault();
    // pe_scheduler -> pe_dma -> pe_tcm would tie with -> pe_fetch_store -> pe_tcm (0 ns, 2 links)
    // and come first ("pe_dma" < "pe_fetch_store"), but a PE_DMA is an endpoint only.
    expect(short(graph.route("sip0.cube0.pe0.pe_scheduler", "sip0.cube0.pe0.pe_tcm").hops)).toEqual([
      "cube0.pe0.pe_scheduler",
      "cube0.pe0.pe_fetch_store",
      "cube0.pe0.pe_tcm",
    ]);
    // One cube (no UCIe port), router r0c1 to channel 0: through pe1.pe_dma (column 1 < ceil(4/2),
    // XBAR half 0) it would be 0.005 + 0.02 + 1 (xbar0) + 0.01 = 1.035 ns, but a PE_DMA does not
    // forward: the route goes over the mesh to r0c0 and noc_to_xbar, 0.01 (->r0c0) + 1 (r0c0)
    // + 0.01 (->xbar0) + 1 (xbar0) + 0.01 (->ch0) = 2.03 ns.
    const oneCube = expand({ name: "one-cube", cube: { hbm: { channels: 8, pc_bw_gbs: 25.6 } } });
    const fromRouter = oneCube.route("sip0.cube0.noc.r0c1", "sip0.cube0.hbm.ch0");
    expect(short(fromRouter.hops)).toEqual([
      "cube0.noc.r0c1",
      "cube0.noc.r0c0",
      "cube0.xbar0",
      "cube0.hbm.ch0",
    ]);
    expect(fromRouter.latencyNs).toBe(2.03);
    // From r0c0 itself: 0.01 (->xbar0) + 1 (xbar0) + 0.01 (->ch0) = 1.02 ns; min(128, 64) = 64.
    const fromCorner = oneCube.route("sip0.cube0.noc.r0c0", "sip0.cube0.hbm.ch0");
    expect(short(fromCorner.hops)).toEqual(["cube0.noc.r0c0", "cube0.xbar0", "cube0.hbm.ch0"]);
    expect(fromCorner.latencyNs).toBe(1.02);
    expect(fromCorner.minBwGbs).toBe(64);
    // M_CPU is an end: it reaches the HBM over the NOC, 0.01 (m_cpu->r0c0) + 1 (r0c0) + 0.01
    // (->xbar0) + 1 (xbar0) + 0.01 (->ch0) = 2.03 ns, before its M_CPU.DMA: 0 (m_cpu->m_cpu_dma)
    // + 20 (forward_ns) + 0.02 (->xbar0) + 1 (xbar0) + 0.01 (->ch0) = 21.03 ns.
    const mCpu = oneCube.route("sip0.cube0.m_cpu", "sip0.cube0.hbm.ch0");
    expect(short(mCpu.hops)).toEqual(["cube0.m_cpu", "cube0.noc.r0c0", "cube0.xbar0", "cube0.hbm.ch0"]);
    expect(mCpu.latencyNs).toBe(2.03);
    // The host reaches router r0c0 through io_cpu, M_CPU.DMA and xbar0: 0 + 50 (io_cpu) + 0.05
    // (->m_cpu_dma) + 20 (forward_ns) + 0.02 (->xbar0) + 1 (xbar0) + 0.01 (->r0c0) = 71.08 ns.
    // Through M_CPU it would be 0 + 50 + 0.05 (->m_cpu) + 0.01 (->r0c0) = 50.06 ns, but M_CPU
    // does not forward.
    const hostToNoc = graph.route("host", "sip0.cube0.noc.r0c0");
    expect(short(hostToNoc.hops)).toEqual([
      "host",
      "io_cpu",
      "cube0.m_cpu_dma",
      "cube0.xbar0",
      "cube0.noc.r0c0",
    ]);
    expect(hostToNoc.latencyNs).toBe(71.08);
    // io_cpu -> m_cpu_dma directly (0.05 ns); io_cpu -> m_cpu -> m_cpu_dma is no path.
    expect(short(graph.route("sip0.io_cpu", "sip0.cube0.m_cpu_dma").hops)).toEqual([
      "io_cpu",
      "cube0.m_cpu_dma",
    ]);
  });

  // A UCIe port links only to its NOC corner and to its peer port, so a path through it leaves
  // the cube and comes back through the same port and corner: never a best path inside a cube.
  // Routes inside cube 0 are the same as in a one-cube topology of the same shape (no UCIe port).
  it("a route between two nodes of one cube never passes through a UCIe port (same routes as with no UCIe peer)", () => {
    const graph = loadDefault();
    const oneCube = expand({ name: "one-cube", cube: { hbm: { channels: 8, pc_bw_gbs: 25.6 } } });
    // M_CPU and SRAM reach the HBM over r0c0 and noc_to_xbar: 0.01 (m_cpu_to_noc or sram_to_noc,
    // 1 mm) + 1 (r0c0) + 0.01 (->xbar0) + 1 (xbar0) + 0.01 (->ch0) = 2.03 ns; PE 0's CPU: 0.005
    // (pe_to_noc) + 1 + 0.01 + 1 + 0.01 = 2.025 ns. PE 7's CPU to channel 4 (half 1): the NOC
    // meets the XBAR only at r0c0, so from r1c3 over the mesh (4 links, routers r1c3, r1c2, r1c1,
    // r1c0, r0c0: xy routes, along the row first), then xbar0, the bridge and xbar1: 0.005
    // (pe_to_noc) + 5 x 1 (routers) + 4 x 0.01 (mesh) + 0.01 (->xbar0) + 1 (xbar0) + 0.01
    // (->bridge) + 1 (bridge) + 0.01 (->xbar1) + 1 (xbar1) + 0.01 (->ch4) = 8.085 ns. PE 7's DMA
    // (an endpoint only) is no shortcut to xbar1.
    for (const g of [graph, oneCube]) {
      const mCpu = g.route("sip0.cube0.m_cpu", "sip0.cube0.hbm.ch0");
      expect(short(mCpu.hops)).toEqual(["cube0.m_cpu", "cube0.noc.r0c0", "cube0.xbar0", "cube0.hbm.ch0"]);
      expect(mCpu.latencyNs).toBe(2.03);
      const sram = g.route("sip0.cube0.sram", "sip0.cube0.hbm.ch0");
      expect(short(sram.hops)).toEqual(["cube0.sram", "cube0.noc.r0c0", "cube0.xbar0", "cube0.hbm.ch0"]);
      expect(sram.latencyNs).toBe(2.03);
      expect(g.route("sip0.cube0.pe0.pe_cpu", "sip0.cube0.hbm.ch0").latencyNs).toBe(2.025);
      const pe7 = g.route("sip0.cube0.pe7.pe_cpu", "sip0.cube0.hbm.ch4");
      expect(short(pe7.hops)).toEqual([
        "cube0.pe7.pe_cpu",
        "cube0.noc.r1c3",
        "cube0.noc.r1c2",
        "cube0.noc.r1c1",
        "cube0.noc.r1c0",
        "cube0.noc.r0c0",
        "cube0.xbar0",
        "cube0.bridge",
        "cube0.xbar1",
        "cube0.hbm.ch4",
      ]);
      expect(pe7.latencyNs).toBe(8.085);
    }
    // Every pair of cube 0's nodes but its port (112 of them, containers included): the same
    // route, or no route in both.
    const ids = oneCube.nodes.filter((node) => node.id.startsWith("sip0.cube0")).map((node) => node.id);
    expect(ids).toHaveLength(112);
    const outcome = (g: TopologyGraph, src: string, dst: string) => {
      try {
        const route = g.route(src, dst);
        return { hops: route.hops, latencyNs: route.latencyNs, minBwGbs: route.minBwGbs };
      } catch (error) {
        if (isKbError(error) && error.code === "TOPOLOGY_NO_ROUTE") return "no route";
        throw error;
      }
    };
    let routed = 0;
    for (const src of ids) {
      for (const dst of ids) {
        const inDefault = outcome(graph, src, dst);
        expect(inDefault).toEqual(outcome(oneCube, src, dst));
        if (inDefault !== "no route") {
          expect(inDefault.hops).not.toContain("sip0.cube0.ucie1");
          routed++;
        }
      }
    }
    expect(routed).toBeGreaterThan(0);
  });

  // QUESTION FOR THE LEAD (expected behaviour written as it.fails, not a change to the code): the
  // package README gives a PE the dual egress of ADR-0014 D1, "PE_DMA <-> the XBAR half of its
  // column (HBM path) and PE_DMA, PE_CPU <-> the NOC router at its grid position (everything
  // else)". The router takes the shortest path instead, so a PE_DMA's non-HBM traffic leaves
  // through its XBAR half when that is shorter: PE 0's DMA -> PE 1's DMA over xbar0 (0.02 + 1
  // + 0.02 = 1.04 ns), PE 7's DMA -> SRAM over xbar1, the bridge, xbar0 and noc_to_xbar into
  // r0c0 (0.02 + 1 + 0.01 + 1 + 0.01 + 1 + 0.01 + 1 (r0c0) + 0.01 = 4.06 ns). The XBAR halves
  // then carry DMA-to-DMA and DMA-to-NOC traffic, which an HBM crossbar does not.
  it.fails("a PE_DMA's non-HBM traffic (SRAM, M_CPU, other PEs) leaves through its NOC router, never an XBAR half", () => {
    const graph = loadDefault();
    // PE 7's DMA -> SRAM over the NOC: 0.005 (pe_to_noc) + 5 routers r1c3, r0c3, r0c2, r0c1,
    // r0c0 + 4 x 0.01 (mesh) + 0.01 (sram_to_noc) = 5.055 ns.
    const toSram = graph.route("sip0.cube0.pe7.pe_dma", "sip0.cube0.sram");
    expect(short(toSram.hops)).toEqual([
      "cube0.pe7.pe_dma",
      "cube0.noc.r1c3",
      "cube0.noc.r0c3",
      "cube0.noc.r0c2",
      "cube0.noc.r0c1",
      "cube0.noc.r0c0",
      "cube0.sram",
    ]);
    expect(toSram.latencyNs).toBe(5.055);
    // PE 0's DMA -> PE 1's DMA: 0.005 + 1 (r0c0) + 0.01 + 1 (r0c1) + 0.005 = 2.02 ns.
    const toPe1 = graph.route("sip0.cube0.pe0.pe_dma", "sip0.cube0.pe1.pe_dma");
    expect(short(toPe1.hops)).toEqual([
      "cube0.pe0.pe_dma",
      "cube0.noc.r0c0",
      "cube0.noc.r0c1",
      "cube0.pe1.pe_dma",
    ]);
    expect(toPe1.latencyNs).toBe(2.02);
    // Every DMA of cube 0 to the SRAM, M_CPU and the other PEs' DMA and CPU: no XBAR half, no
    // bridge.
    for (let p = 0; p < 8; p++) {
      const ends = ["sram", "m_cpu"];
      for (let q = 0; q < 8; q++) if (q !== p) ends.push(`pe${q}.pe_dma`, `pe${q}.pe_cpu`);
      for (const end of ends) {
        const route = graph.route(`sip0.cube0.pe${p}.pe_dma`, `sip0.cube0.${end}`);
        expect(route.hops.filter((id) => /\.(xbar[01]|bridge)$/.test(id))).toEqual([]);
      }
    }
  });

  it("caches routes: the same pair gives the same object", () => {
    const graph = loadDefault();
    const first = graph.route("sip0.cube0.pe3.pe_dma", "sip0.cube1.hbm.ch6");
    graph.route("host", "sip0.cube1.hbm.ch6");
    graph.route("sip0.cube0.pe2.pe_dma", "sip0.cube1.hbm.ch6");
    expect(graph.route("sip0.cube0.pe3.pe_dma", "sip0.cube1.hbm.ch6")).toBe(first);
  });

  it("with { keep: false } gives the same route as a new object, and does not cache it", () => {
    const graph = loadDefault();
    const unkept = graph.route("sip0.cube0.pe3.pe_dma", "sip0.cube1.hbm.ch6", { keep: false });
    const again = graph.route("sip0.cube0.pe3.pe_dma", "sip0.cube1.hbm.ch6", { keep: false });
    const kept = graph.route("sip0.cube0.pe3.pe_dma", "sip0.cube1.hbm.ch6");
    expect(again).not.toBe(unkept);
    expect(kept).not.toBe(unkept);
    expect(JSON.parse(JSON.stringify(unkept))).toEqual(JSON.parse(JSON.stringify(kept)));
    expect(graph.route("sip0.cube0.pe3.pe_dma", "sip0.cube1.hbm.ch6")).toBe(kept);
  });

  it("routes a node to itself with no links", () => {
    const route = loadDefault().route("sip0.cube0.sram", "sip0.cube0.sram");
    expect(route).toEqual({
      src: "sip0.cube0.sram",
      dst: "sip0.cube0.sram",
      hops: ["sip0.cube0.sram"],
      links: [],
      latencyNs: 0,
      minBwGbs: Number.POSITIVE_INFINITY,
    });
    expect(idealTransferNs(route, 4096)).toBe(0);
  });

  it("names unknown nodes (TOPOLOGY_UNKNOWN_NODE) and unreachable ones (TOPOLOGY_NO_ROUTE)", () => {
    const graph = loadDefault();
    const unknown = thrown(() => graph.route("sip0.cube0.pe0.pe_dma", "sip0.cube1.hbm.ch9"));
    expect(unknown.code).toBe("TOPOLOGY_UNKNOWN_NODE");
    expect(unknown.detail).toBe(
      'no node "sip0.cube1.hbm.ch9" in topology "default" (229 nodes); did you mean "sip0.cube1.hbm.ch0"?',
    );
    // Containers and the HBM controller have no edges.
    const noRoute = thrown(() => graph.route("sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm"));
    expect(noRoute.code).toBe("TOPOLOGY_NO_ROUTE");
    expect(noRoute.message).toBe(
      '[TOPOLOGY_NO_ROUTE] node sip0.cube0.pe0.pe_dma: no path leads from "sip0.cube0.pe0.pe_dma" to "sip0.cube0.hbm" over the directed links. "sip0.cube0.hbm" has no incoming links: containers (sip, cube, pe) and the HBM controller are not on any path; route to a component (an HBM channel or pseudo-channel for HBM).',
    );
    expect(thrown(() => graph.route("sip0.cube0", "host")).detail).toBe(
      'no path leads from "sip0.cube0" to "host" over the directed links. "sip0.cube0" has no outgoing links: containers (sip, cube, pe) and the HBM controller are not on any path; route from a component.',
    );
  });

  it("blames the link patterns when both ends have links", () => {
    // a -> b and c -> d: no path from a to d, though a has a way out and d a way in.
    const edge = (src: string, dst: string) => ({ src, dst, bwGbs: 1, latencyNs: 0, lengthMm: 0 });
    const router = new Router({
      ids: ["a", "b", "c", "d"],
      edges: [edge("a", "b"), edge("c", "d")],
      edgeSrc: Int32Array.of(0, 2),
      edgeDst: Int32Array.of(1, 3),
      firstFlitNs: new Float64Array(4),
      forwards: new Uint8Array(4).fill(1),
      kindSize: new Int32Array(4).fill(1),
    });
    expect(router.route(0, 1).hops).toEqual(["a", "b"]);
    expect(thrown(() => router.route(0, 3)).detail).toBe(
      'no path leads from "a" to "d" over the directed links. Check the link patterns that join SIPs and cubes (system.sip_link.pattern, sip.ucie.pattern).',
    );
  });

  it("joins SIPs only over system.sip_link between their IO_CPUs, never through the host", () => {
    // Two SIPs of one default cube each (no UCIe; HBM pc_bw 32), sip_link 100 GB/s, 500 ns.
    const twoSips = (pattern: "none" | "ring" | "all_to_all") =>
      expand({ name: "two-sips", system: { sips: 2, sip_link: { pattern, bw_gbs: 100, latency_ns: 500 } } });
    // Links: 0.02 (dma->xbar0) + 0.02 (->m_cpu_dma) + 0.05 (->io_cpu) + 500 (sip link) + 0.05
    //   (->sip1.m_cpu_dma) + 0.02 (->xbar0) + 0.01 (->ch0) = 500.17 ns; hops: 1 (sip0 xbar0) + 20
    //   (m_cpu_dma) + 50 (io_cpu) + 50 (sip1.io_cpu) + 20 (m_cpu_dma) + 1 (xbar0) = 142 ns; in all
    //   642.17 ns. A ring of 2 SIPs is the same single pair as all_to_all.
    for (const pattern of ["all_to_all", "ring"] as const) {
      const route = twoSips(pattern).route("sip0.cube0.pe0.pe_dma", "sip1.cube0.hbm.ch0");
      expect(route.hops).toEqual([
        "sip0.cube0.pe0.pe_dma",
        "sip0.cube0.xbar0",
        "sip0.cube0.m_cpu_dma",
        "sip0.io_cpu",
        "sip1.io_cpu",
        "sip1.cube0.m_cpu_dma",
        "sip1.cube0.xbar0",
        "sip1.cube0.hbm.ch0",
      ]);
      expect(route.latencyNs).toBe(642.17);
      // min(128, 128, 128, 100 sip_link, 128, 128, 64 xbar_to_hbm) = 64 GB/s.
      expect(route.minBwGbs).toBe(64);
    }
    // Pattern none: the host (0 ns links to both IO_CPUs) is an endpoint only, so no path.
    const none = twoSips("none");
    const noRoute = thrown(() => none.route("sip0.cube0.pe0.pe_dma", "sip1.cube0.hbm.ch0"));
    expect(noRoute.code).toBe("TOPOLOGY_NO_ROUTE");
    expect(noRoute.message).toBe(
      '[TOPOLOGY_NO_ROUTE] node sip0.cube0.pe0.pe_dma: no path leads from "sip0.cube0.pe0.pe_dma" to "sip1.cube0.hbm.ch0" over the directed links. Check the link patterns that join SIPs and cubes (system.sip_link.pattern, sip.ucie.pattern).',
    );
    // The host itself still reaches each SIP: 0 (host link) + 50 (io_cpu) + 0.05 + 20 (m_cpu_dma)
    // + 0.02 + 1 (xbar0) + 0.01 = 71.08 ns.
    const fromHost = none.route("host", "sip1.cube0.hbm.ch0");
    expect(fromHost.hops).toEqual([
      "host",
      "sip1.io_cpu",
      "sip1.cube0.m_cpu_dma",
      "sip1.cube0.xbar0",
      "sip1.cube0.hbm.ch0",
    ]);
    expect(fromHost.latencyNs).toBe(71.08);
  });
});

describe("route tie-breaks", () => {
  // One cube (no UCIe port), default links: a PE_DMA, PE_CPU, M_CPU or SRAM does not forward,
  // so routers reach each other over the mesh only (r0c0 -> pe0.pe_dma -> xbar0 -> pe7.pe_dma ->
  // r2c1 -> r2c2, 2.06 ns, is no path), and the XBAR is no way round: r0c0 <-> xbar0 is the
  // NOC's only link to it.
  // The least-latency search's own tie-break (routing: shortest; the
  // default xy reorders the mesh stretch after the search, see noc-routing.test.ts).
  const mesh3x3 = () => expand({ name: "mesh", cube: { noc: { rows: 3, cols: 3, routing: "shortest" } } });

  it("picks the smallest node-id sequence among equal-latency, equal-hop paths", () => {
    // r0c0 -> r2c2: six mesh paths of 4 links and 3 routers, 4 x 0.01 + 3 x 1 = 3.04 ns each
    // (no XBAR path: r2c2 has no noc_to_xbar link). Position 1: noc.r0c1 < noc.r1c0; position 2:
    // r0c2 < r1c1; then r1c2 is forced.
    const graph = mesh3x3();
    const route = (from: string, to: string) =>
      graph.route(`sip0.cube0.noc.${from}`, `sip0.cube0.noc.${to}`).hops.map((id) => id.split(".").at(-1));
    expect(route("r0c0", "r2c2")).toEqual(["r0c0", "r0c1", "r0c2", "r1c2", "r2c2"]);
    expect(graph.route("sip0.cube0.noc.r0c0", "sip0.cube0.noc.r2c2").latencyNs).toBe(3.04);
    // Backwards: noc.r1c2 < noc.r2c1, then r0c2 < r1c1. r2c0 -> r0c2: r1c0 < r2c1, then
    // r0c0 < r1c1, then r0c1 is forced.
    expect(route("r2c2", "r0c0")).toEqual(["r2c2", "r1c2", "r0c2", "r0c1", "r0c0"]);
    expect(route("r2c0", "r0c2")).toEqual(["r2c0", "r1c0", "r0c0", "r0c1", "r0c2"]);
  });

  it("compares latencies on a 1e-9 ns grid: 0.1 + 0.2 ties with 0.05 + 0.25", () => {
    // NOC 2 x 3 with 0 ns router links; first-flit overheads set per router. r0c0 -> r1c2 over
    //   A: r0c1, r0c2: 0.1 + 0.2 (0.30000000000000004 in floating point)
    //   B: r0c1, r1c1: 0.1 + 0.25 = 0.35
    //   C: r1c0, r1c1: 0.05 + 0.25 (0.3 in floating point)
    // A and C tie at 0.3 ns with 3 links each; A comes first (r0c1 < r1c0). In plain floating
    // point C would win by 5.6e-17 ns. No path leaves the mesh: r0c0 <-> xbar0 is its only
    // XBAR link, and r1c2 has none.
    expect(0.1 + 0.2 > 0.05 + 0.25).toBe(true);
    const graph = expand({
      name: "grid",
      cube: { noc: { rows: 2, cols: 3, link: { bw_gbs: 128, latency_ns: 0 } } },
      overrides: [
        { match: "sip0.cube0.noc.r0c1", params: { first_flit_ns: 0.1 } },
        { match: "sip0.cube0.noc.r0c2", params: { first_flit_ns: 0.2 } },
        { match: "sip0.cube0.noc.r1c0", params: { first_flit_ns: 0.05 } },
        { match: "sip0.cube0.noc.r1c1", params: { first_flit_ns: 0.25 } },
      ],
    });
    const route = graph.route("sip0.cube0.noc.r0c0", "sip0.cube0.noc.r1c2");
    expect(route.hops.map((id) => id.split(".").at(-1))).toEqual(["r0c0", "r0c1", "r0c2", "r1c2"]);
    expect(route.latencyNs).toBe(0.3);
  });
});

describe("idealTransferNs", () => {
  it("is latency + bytes / min bandwidth", () => {
    const graph = loadDefault();
    // 1.03 ns + 32768 B / 64 GB/s = 1.03 + 512 = 513.03 ns
    expect(
      idealTransferNs(graph.route("sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm.ch0"), 32 * 1024),
    ).toBeCloseTo(513.03, 9);
    // 73.1 ns (forward_ns 50 + 20 included) + 32768 B / 25.6 GB/s = 73.1 + 1280 = 1353.1 ns
    expect(idealTransferNs(graph.route("host", "sip0.cube1.hbm.ch5.pc1"), 32 * 1024)).toBeCloseTo(1353.1, 9);
    expect(idealTransferNs(graph.route("host", "sip0.cube1.hbm.ch5.pc1"), 0)).toBe(73.1);
    // Across cubes over UCIe and cube 1's r0c0: 5.065 ns + 32768 B / 64 GB/s = 5.065 + 512
    // = 517.065 ns
    expect(
      idealTransferNs(graph.route("sip0.cube0.pe0.pe_dma", "sip0.cube1.hbm.ch0"), 32 * 1024),
    ).toBeCloseTo(517.065, 9);
  });

  it("refuses a negative, NaN or infinite size", () => {
    const route = loadDefault().route("sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm.ch0");
    for (const bytes of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = thrown(() => idealTransferNs(route, bytes));
      expect(error.code).toBe("TOPOLOGY_INVALID");
      expect(error.detail).toBe(
        `idealTransferNs(sip0.cube0.pe0.pe_dma -> sip0.cube0.hbm.ch0) needs a finite number of bytes >= 0, got ${bytes}. Check the size computation.`,
      );
    }
  });
});
