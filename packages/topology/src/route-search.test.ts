import { describe, expect, it } from "vitest";
import { expandTopology } from "./expand.js";
import { FORWARDING_KINDS, type TopologyGraph } from "./graph.js";
import { resolveTopology } from "./load.js";
import { loadTopologyFile } from "./node.js";
import { Router } from "./route.js";
import type { TopologyInput } from "./schema.js";

// Routes on larger grids, and every route of small systems against an exhaustive search (split
// from route.test.ts).

const defaultYaml = new URL("../../../topologies/default.yaml", import.meta.url).pathname;
const loadDefault = () => expandTopology(loadTopologyFile(defaultYaml));
const expand = (input: TopologyInput) => expandTopology(resolveTopology(input));
const short = (hops: readonly string[]) => hops.map((id) => id.replace(/^sip0\./, ""));

describe("route between NOC routers of a larger grid", () => {
  // noc_to_xbar attaches the NOC to the XBAR at r0c0 <-> xbar0 only, so a path from one router
  // to another that entered xbar0 would have to come back through r0c0: no simple path goes
  // NOC -> XBAR -> NOC, and router-to-router traffic stays on the mesh whatever the grid size.
  it("never passes an XBAR half between NOC routers, and takes the mesh between the far corners of a 4 x 8 grid", () => {
    // The least-latency search and its tie-break (shortest routes; xy is the default).
    const graph = expand({ name: "grid-4x8", cube: { noc: { rows: 4, cols: 8, routing: "shortest" } } });
    const routers = graph.byKind("noc_router").map((node) => node.id);
    expect(routers).toHaveLength(4 * 8);
    // Every ordered pair of the 32 routers (32 x 31 = 992 routes): mesh only, at the Manhattan
    // distance d = |row - row'| + |col - col'| links: d x 0.01 (NOC links) + (d - 1) x 1 (the
    // routers between the ends) ns.
    let routed = 0;
    for (const src of routers) {
      for (const dst of routers) {
        if (src === dst) continue;
        const route = graph.route(src, dst);
        expect(route.hops.filter((id) => graph.node(id).kind !== "noc_router")).toEqual([]);
        const a = graph.node(src).coords as { row: number; col: number };
        const b = graph.node(dst).coords as { row: number; col: number };
        const d = Math.abs(a.row - b.row) + Math.abs(a.col - b.col);
        expect(route.links).toHaveLength(d);
        expect(route.latencyNs).toBeCloseTo(d * 0.01 + (d - 1), 9);
        routed++;
      }
    }
    expect(routed).toBe(32 * 31);

    // r0c0 -> r3c7 (router 4 x 8 - 1 = 31): 3 + 7 = 10 links, 9 intermediate routers:
    // 10 x 0.01 + 9 x 1 = 9.1 ns (through the XBAR it was 3.04 ns with a second noc_to_xbar link
    // r3c7 <-> xbar1; now r3c7 has none). Ties between the C(10, 3) = 120 shortest paths go to the
    // smallest ids: noc.r0c{n+1} < noc.r1c{n} at every step, so along row 0, then down column 7.
    // min(128 NOC links) = 128 GB/s.
    const corners = graph.route("sip0.cube0.noc.r0c0", "sip0.cube0.noc.r3c7");
    expect(short(corners.hops)).toEqual([
      ...[0, 1, 2, 3, 4, 5, 6, 7].map((col) => `cube0.noc.r0c${col}`),
      "cube0.noc.r1c7",
      "cube0.noc.r2c7",
      "cube0.noc.r3c7",
    ]);
    expect(corners.latencyNs).toBe(9.1);
    expect(corners.minBwGbs).toBe(128);
    // Backwards, r3c7 -> r0c0: noc.r2c7 < noc.r3c6 at the first step, so up column 7, then along
    // row 0; the same 9.1 ns.
    const back = graph.route("sip0.cube0.noc.r3c7", "sip0.cube0.noc.r0c0");
    expect(short(back.hops)).toEqual([
      "cube0.noc.r3c7",
      "cube0.noc.r2c7",
      "cube0.noc.r1c7",
      ...[7, 6, 5, 4, 3, 2, 1, 0].map((col) => `cube0.noc.r0c${col}`),
    ]);
    expect(back.latencyNs).toBe(9.1);
    // PE 0's CPU to PE 31's CPU: 0.005 (pe_to_noc) + 11 routers r0c0 .. r3c7 + 10 x 0.01 + 0.005
    // = 11.11 ns, over the mesh.
    const cpus = graph.route("sip0.cube0.pe0.pe_cpu", "sip0.cube0.pe31.pe_cpu");
    expect(cpus.latencyNs).toBe(11.11);
    expect(cpus.hops.some((id) => /xbar|bridge/.test(id))).toBe(false);
    // r0c1 -> r3c7: 3 + 6 = 9 links, 8 routers = 8.09 ns; r0c0 -> r0c7: 7 links, 6 routers
    // = 6.07 ns, along row 0.
    expect(graph.route("sip0.cube0.noc.r0c1", "sip0.cube0.noc.r3c7").latencyNs).toBe(8.09);
    const row = graph.route("sip0.cube0.noc.r0c0", "sip0.cube0.noc.r0c7");
    expect(row.latencyNs).toBe(6.07);
    expect(short(row.hops)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((col) => `cube0.noc.r0c${col}`));
  });

  it("PE 31's CPU (far corner r3c7) reaches the HBM over the whole mesh to r0c0 and xbar0", () => {
    const graph = expand({ name: "grid-4x8", cube: { noc: { rows: 4, cols: 8 } } });
    // The default routes are xy: along row 3 to r3c0, then up column 0 to r0c0 (the same links and
    // routers in number as any shortest path, so the same latency). Default HBM 8 x 2: channels 0-3 on xbar0, 4-7 on xbar1 (ceil(8/2) = 4). From PE 31's CPU:
    // 0.005 (pe_to_noc) + 10 mesh links r3c7 .. r0c0 (10 x 0.01) + 11 routers (11 x 1) + 0.01
    // (->xbar0) + 1 (xbar0) = 12.115 ns to leave xbar0; + 0.01 (->ch0) = 12.125 ns to channel 0;
    // + 0.01 (->bridge) + 1 (bridge) + 0.01 (->xbar1) + 1 (xbar1) + 0.01 (->ch4) = 14.145 ns to
    // channel 4. (With r3c7 <-> xbar1 it was 0.005 + 1 + 0.01 + 1 + 0.01 = 2.025 ns.)
    const toCh0 = graph.route("sip0.cube0.pe31.pe_cpu", "sip0.cube0.hbm.ch0");
    expect(toCh0.latencyNs).toBe(12.125);
    expect(short(toCh0.hops).slice(-3)).toEqual(["cube0.noc.r0c0", "cube0.xbar0", "cube0.hbm.ch0"]);
    const toCh4 = graph.route("sip0.cube0.pe31.pe_cpu", "sip0.cube0.hbm.ch4");
    expect(toCh4.latencyNs).toBe(14.145);
    expect(short(toCh4.hops)).toEqual([
      "cube0.pe31.pe_cpu",
      ...[7, 6, 5, 4, 3, 2, 1, 0].map((col) => `cube0.noc.r3c${col}`),
      "cube0.noc.r2c0",
      "cube0.noc.r1c0",
      "cube0.noc.r0c0",
      "cube0.xbar0",
      "cube0.bridge",
      "cube0.xbar1",
      "cube0.hbm.ch4",
    ]);
    // min(64 pe_to_noc, 128 NOC, 128 noc_to_xbar, 512 bridge links, 64 xbar_to_hbm) = 64 GB/s.
    expect(toCh4.minBwGbs).toBe(64);
  });
});

describe("route against an exhaustive search", () => {
  interface Best {
    latency: number;
    path: string[];
  }

  /** The least (latency, hops, ids) path from `src` to every node, over every simple path. */
  function exhaustive(graph: TopologyGraph, src: string): Map<string, Best> {
    const firstFlit = (id: string) => {
      const params = graph.node(id).params;
      return Math.round(Number(params.first_flit_ns ?? params.forward_ns ?? 0) * 1e9);
    };
    const best = new Map<string, Best>();
    const path = [src];
    const onPath = new Set([src]);
    const visit = (node: string, latency: number) => {
      const current = best.get(node);
      if (current === undefined || comesBefore(latency, path, current)) {
        best.set(node, { latency, path: [...path] });
      }
      // Only forwarding kinds carry traffic through (the source always sends).
      if (node !== src && !FORWARDING_KINDS.has(graph.node(node).kind)) return;
      for (const edge of graph.outEdges(node)) {
        if (onPath.has(edge.dst)) continue;
        const next = latency + Math.round(edge.latencyNs * 1e9) + (node === src ? 0 : firstFlit(node));
        path.push(edge.dst);
        onPath.add(edge.dst);
        visit(edge.dst, next);
        path.pop();
        onPath.delete(edge.dst);
      }
    };
    visit(src, 0);
    return best;
  }

  function comesBefore(latency: number, path: readonly string[], other: Best): boolean {
    if (latency !== other.latency) return latency < other.latency;
    if (path.length !== other.path.length) return path.length < other.path.length;
    for (let i = 0; i < path.length; i++) {
      const a = path[i] as string;
      const b = other.path[i] as string;
      if (a !== b) return a < b;
    }
    return false;
  }

  function routerFor(graph: TopologyGraph, direction: "auto" | "forward" | "backward"): Router {
    const numbers = new Map(graph.nodes.map((node, number) => [node.id, number]));
    return new Router({
      ids: graph.nodes.map((node) => node.id),
      edges: graph.edges,
      edgeSrc: Int32Array.from(graph.edges, (edge) => numbers.get(edge.src) as number),
      edgeDst: Int32Array.from(graph.edges, (edge) => numbers.get(edge.dst) as number),
      firstFlitNs: Float64Array.from(graph.nodes, (node) =>
        Number(node.params.first_flit_ns ?? node.params.forward_ns ?? 0),
      ),
      forwards: Uint8Array.from(graph.nodes, (node) => (FORWARDING_KINDS.has(node.kind) ? 1 : 0)),
      kindSize: Int32Array.from(graph.nodes, (node) => graph.byKind(node.kind).length),
      direction,
    });
  }

  // One cube, NOC 1 x 3 (PE ids pe0..pe2), HBM 3 x 1, XBAR halves of 2 and 1 PEs; uneven
  // first-flit overheads and link latencies so that both latency and id order decide somewhere.
  const small = expand({
    name: "small",
    wire_delay_ns_per_mm: 0.1,
    cube: {
      noc: { rows: 1, cols: 3, link: { bw_gbs: 128, latency_ns: 0.2 } },
      hbm: { channels: 3, pseudo_channels: 1 },
      links: { m_cpu_to_noc: { bw_gbs: 64, latency_ns: 0.1 } },
    },
    overrides: [
      { match: "sip0.cube0.noc.r0c1", params: { first_flit_ns: 0.3 } },
      { match: "sip0.cube0.xbar1", params: { first_flit_ns: 0.5 } },
    ],
  });

  it.each(["auto", "forward", "backward"] as const)(
    "gives the exhaustive optimum for every pair (%s searches)",
    (direction) => {
      const router = routerFor(small, direction);
      const ids = small.nodes.map((node) => node.id);
      let compared = 0;
      ids.forEach((src, srcNumber) => {
        const best = exhaustive(small, src);
        ids.forEach((dst, dstNumber) => {
          const expected = best.get(dst);
          if (expected === undefined) {
            expect(() => router.route(srcNumber, dstNumber)).toThrow(/TOPOLOGY_NO_ROUTE/);
            return;
          }
          const route = router.route(srcNumber, dstNumber);
          expect(route.hops).toEqual(expected.path);
          expect(route.latencyNs).toBe(expected.latency / 1e9);
          compared++;
        });
      });
      // Only forwarding kinds carry traffic through, so many pairs have no path (checked above).
      expect(compared).toBeGreaterThan(400);
    },
  );

  it("runs one search per node of the smaller kind when routing all pairs of two kinds", () => {
    const graph = loadDefault();
    const number = (id: string) => graph.nodes.findIndex((node) => node.id === id);
    const numbers = (kind: string) => graph.byKind(kind).map((node) => number(node.id));
    const searches = (sources: number[], destinations: number[], sourceOuter: boolean) => {
      const router = routerFor(graph, "auto");
      if (sourceOuter) for (const src of sources) for (const dst of destinations) router.route(src, dst);
      else for (const dst of destinations) for (const src of sources) router.route(src, dst);
      return router.searches;
    };
    for (const sourceOuter of [true, false]) {
      // 16 pe_dma -> 32 hbm_pc: one forward search per DMA.
      expect(searches(numbers("pe_dma"), numbers("hbm_pc"), sourceOuter)).toBe(16);
      // 32 hbm_pc -> 16 pe_dma: one backward search per DMA.
      expect(searches(numbers("hbm_pc"), numbers("pe_dma"), sourceOuter)).toBe(16);
      // host -> 32 hbm_pc: one search.
      expect(searches(numbers("host"), numbers("hbm_pc"), sourceOuter)).toBe(1);
    }
  });
});
