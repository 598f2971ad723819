import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { expandTopology } from "./expand.js";
import { FORWARDING_KINDS, routingRegions, type TopologyGraph } from "./graph.js";
import { parseTopology, resolveTopology } from "./load.js";
import { loadTopologyFile } from "./node.js";
import { RegionRouter } from "./region-router.js";
import { type Route, Router, type RoutingInput } from "./route.js";
import type { TopologyInput } from "./schema.js";

const topologyPath = (name: string) => new URL(`../../../topologies/${name}`, import.meta.url).pathname;
const expand = (input: TopologyInput) => expandTopology(resolveTopology(input));

/** The routing input of a graph, as TopologyGraph builds it. */
function inputOf(graph: TopologyGraph, direction: RoutingInput["direction"] = "auto"): RoutingInput {
  const numbers = new Map(graph.nodes.map((node, number) => [node.id, number]));
  return {
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
  };
}

/** A route as text (hops, latency, bandwidth), or the error it threw. */
function describeRoute(find: () => Route): string {
  try {
    const route = find();
    return `${route.hops.join(" ")} | ${route.latencyNs} ns | ${route.minBwGbs} GB/s | ${route.links
      .map((link) => `${link.src}>${link.dst}`)
      .join(" ")}`;
  } catch (error) {
    return `throws ${(error as Error).message}`;
  }
}

/** Routes every pair in a corridor, however many regions its ends see and however large it is. */
const CORRIDORS_ONLY = { endShare: Number.POSITIVE_INFINITY, corridorShare: Number.POSITIVE_INFINITY };

/**
 * Routes `pairs` with the whole graph's exhaustive Router (the reference), a RegionRouter that
 * uses corridors only, and `graph.route` (corridors, or the whole graph for ends routed with many
 * regions); returns the pairs where they differ (empty when all agree) and how many pairs had a
 * route.
 */
function compare(graph: TopologyGraph, pairs: readonly (readonly [number, number])[]) {
  const reference = new Router(inputOf(graph, "forward"));
  const regional = new RegionRouter({
    ...inputOf(graph),
    region: routingRegions(graph.nodes, graph.topology.sip.cubes),
    wholeGraph: CORRIDORS_ONLY,
  });
  const ids = graph.nodes.map((node) => node.id);
  const differences: string[] = [];
  let routed = 0;
  for (const [src, dst] of pairs) {
    const expected = describeRoute(() => reference.route(src, dst));
    if (!expected.startsWith("throws")) routed++;
    const fromRegions = describeRoute(() => regional.route(src, dst));
    const fromGraph = describeRoute(() => graph.route(ids[src] as string, ids[dst] as string));
    if (fromRegions !== expected || fromGraph !== expected) {
      differences.push(
        `${ids[src]} -> ${ids[dst]}:\n  reference ${expected}\n  regions   ${fromRegions}\n  graph     ${fromGraph}`,
      );
    }
  }
  return { differences: differences.slice(0, 5), count: differences.length, routed, regional };
}

function allPairs(graph: TopologyGraph): [number, number][] {
  const pairs: [number, number][] = [];
  for (let src = 0; src < graph.nodes.length; src++) {
    for (let dst = 0; dst < graph.nodes.length; dst++) pairs.push([src, dst]);
  }
  return pairs;
}

/** xorshift32: deterministic pseudo-random integers below `limit`. */
function pseudoRandom(seed: number): (limit: number) => number {
  let state = seed >>> 0 || 1;
  return (limit) => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state % limit;
  };
}

/**
 * The topology with `cube.noc.routing: shortest`: these tests compare searches, and `graph.route`
 * gives the search's route only with shortest routes (xy and yx reorder the mesh stretch after it).
 */
function shortestRoutes<T extends { readonly cube?: unknown }>(topology: T): T {
  const cube = (topology.cube ?? {}) as { readonly noc?: object };
  return { ...topology, cube: { ...cube, noc: { ...(cube.noc ?? {}), routing: "shortest" } } };
}

describe("RegionRouter gives the exhaustive Router's routes", () => {
  it("on every pair of topologies/default.yaml", () => {
    const graph = expandTopology(shortestRoutes(loadTopologyFile(topologyPath("default.yaml"))));
    const result = compare(graph, allPairs(graph));
    expect(result.differences).toEqual([]);
    expect(result.routed).toBeGreaterThan(13_000);
  }, 60_000);

  it("on every pair of 2 SIPs x 2 cubes x 4 PEs (SIPs on a ring, cubes on UCIe)", () => {
    const graph = expand({
      name: "2x2x4",
      system: { sips: 2, sip_link: { pattern: "ring", bw_gbs: 100, latency_ns: 500 } },
      sip: { cubes: 2 },
      cube: { noc: { rows: 2, cols: 2, routing: "shortest" } },
    });
    expect(graph.byKind("pe")).toHaveLength(16);
    const result = compare(graph, allPairs(graph));
    expect(result.differences).toEqual([]);
    expect(result.routed).toBeGreaterThan(20_000);
  }, 60_000);

  it("on every pair of 4 cubes where cube 0's routers are slow, so routes inside cube 0 go round the UCIe ring through the other cubes, both ways at equal cost", () => {
    // Cube 0's NOC routers cost 1000 ns each; a route from r0c0 to r0c3 of cube 0 pays two of them
    // (its ends' neighbours aside) by leaving at ucie1 (on r0c0) and coming back at ucie3 (on
    // r0c3), against four inside the cube.
    const graph = expand({
      name: "detour",
      sip: { cubes: 4, ucie: { pattern: "ring", bw_gbs: 256, length_mm: 2 } },
      cube: { noc: { rows: 1, cols: 4, routing: "shortest" } },
      overrides: [{ match: "sip0.cube0.noc.*", params: { first_flit_ns: 1000 } }],
    });
    const result = compare(graph, allPairs(graph));
    expect(result.differences).toEqual([]);
    const detour = graph.route("sip0.cube0.pe0.pe_cpu", "sip0.cube0.pe3.pe_cpu");
    expect(detour.hops.some((id) => id.startsWith("sip0.cube2."))).toBe(true);
    // The search of that route spans all four cubes; a route inside cube 1 only cube 1.
    const number = (id: string) => graph.nodes.findIndex((node) => node.id === id);
    const cubeNodes = graph.nodes.filter((node) => node.sip === 0 && node.cube === 1).length;
    // Four cubes and the IO_CPU (cube 1's M_CPU.DMA -> IO_CPU -> cube 0's M_CPU beats cube 0's NOC).
    expect(
      result.regional.corridorNodes(number("sip0.cube0.pe0.pe_cpu"), number("sip0.cube0.pe3.pe_cpu")),
    ).toBe(4 * cubeNodes + 1);
    expect(
      result.regional.corridorNodes(number("sip0.cube1.pe0.pe_cpu"), number("sip0.cube1.pe3.pe_cpu")),
    ).toBe(cubeNodes);
  }, 60_000);

  it("on 3000 pseudo-random pairs of 8 SIPs x 4 cubes x 16 PEs (ref-4sip.yaml, SIPs on a ring)", () => {
    const file = topologyPath("ref-4sip.yaml");
    const base = shortestRoutes(parseTopology(readFileSync(file, "utf8"), file));
    const graph = expandTopology({
      ...base,
      system: { ...base.system, sips: 8, sip_link: { ...base.system.sip_link, pattern: "ring" } },
    });
    expect(graph.byKind("pe")).toHaveLength(512);
    const next = pseudoRandom(14);
    const pick = (nodes: readonly number[]) => nodes[next(nodes.length)] as number;
    const numbers = (kinds: readonly string[]) =>
      graph.nodes.flatMap((node, number) => (kinds.includes(node.kind) ? [number] : []));
    const all = graph.nodes.map((_, number) => number);
    // Where traffic starts and ends: DMA and control, host copies, IPCQ, memory.
    const senders = numbers(["pe_dma", "pe_cpu", "m_cpu", "m_cpu_dma", "io_cpu", "host", "hbm_pc"]);
    const receivers = numbers(["hbm_channel", "hbm_pc", "pe_cpu", "pe_tcm", "m_cpu", "sram", "host"]);
    // 150 sources (the reference runs one whole-graph search per source), 20 destinations each:
    // any node to any node, and senders to receivers.
    const pairs: [number, number][] = [];
    for (let s = 0; s < 150; s++) {
      const [from, to] = s % 2 === 0 ? [all, all] : [senders, receivers];
      const src = pick(from);
      for (let d = 0; d < 20; d++) pairs.push([src, pick(to)]);
    }
    const result = compare(graph, pairs);
    expect(result.differences).toEqual([]);
    expect(result.routed).toBeGreaterThan(1500);
  }, 60_000);
});

describe("RegionRouter on random directed graphs", () => {
  /**
   * A random graph of `nodeCount` nodes in `regionCount` regions: mostly edges inside a region,
   * some between regions, one-way and two-way, latencies of 0 to 2 ns (ties everywhere), first-flit
   * overheads of 0 or 1 ns, a fifth of the nodes not forwarding, ids in shuffled order.
   */
  function randomInput(seed: number, nodeCount: number, regionCount: number) {
    const next = pseudoRandom(seed);
    const region = Int32Array.from({ length: nodeCount }, () => next(regionCount));
    const ids = Array.from(
      { length: nodeCount },
      (_, n) => `n${String((n * 37) % nodeCount).padStart(3, "0")}`,
    );
    const edges: { src: string; dst: string; bwGbs: number; latencyNs: number; lengthMm: number }[] = [];
    const edgeSrc: number[] = [];
    const edgeDst: number[] = [];
    const add = (a: number, b: number, latencyNs: number) => {
      edges.push({
        src: ids[a] as string,
        dst: ids[b] as string,
        bwGbs: 1 + next(4),
        latencyNs,
        lengthMm: 0,
      });
      edgeSrc.push(a);
      edgeDst.push(b);
    };
    for (let e = 0; e < nodeCount * 3; e++) {
      const a = next(nodeCount);
      let b = next(nodeCount);
      // Four in five edges stay in their region.
      if (next(5) > 0) {
        const same = Array.from(region.keys()).filter((n) => region[n] === region[a] && n !== a);
        if (same.length === 0) continue;
        b = same[next(same.length)] as number;
      }
      if (a === b) continue;
      const latencyNs = next(3);
      add(a, b, latencyNs);
      if (next(2) === 0) add(b, a, latencyNs);
    }
    return {
      ids,
      edges,
      edgeSrc: Int32Array.from(edgeSrc),
      edgeDst: Int32Array.from(edgeDst),
      firstFlitNs: Float64Array.from({ length: nodeCount }, () => next(2)),
      forwards: Uint8Array.from({ length: nodeCount }, () => (next(5) === 0 ? 0 : 1)),
      kindSize: new Int32Array(nodeCount).fill(1),
      region,
    };
  }

  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    "gives the exhaustive Router's route for every pair (seed %i)",
    (seed) => {
      const input = randomInput(seed, 80, 8);
      const reference = new Router({ ...input, direction: "forward" });
      const regional = new RegionRouter({ ...input, wholeGraph: CORRIDORS_ONLY });
      const mixed = new RegionRouter({ ...input, wholeGraph: { endShare: 0.5, corridorShare: 0.3 } });
      const differences: string[] = [];
      let routed = 0;
      for (let src = 0; src < 80; src++) {
        for (let dst = 0; dst < 80; dst++) {
          const expected = describeRoute(() => reference.route(src, dst));
          const actual = describeRoute(() => regional.route(src, dst));
          const fromMixed = describeRoute(() => mixed.route(src, dst));
          if (!expected.startsWith("throws")) routed++;
          if (actual !== expected || fromMixed !== expected) {
            differences.push(`${src} -> ${dst}:\n  ${expected}\n  ${actual}\n  ${fromMixed}`);
          }
        }
      }
      expect(differences.slice(0, 3)).toEqual([]);
      expect(routed).toBeGreaterThan(1000);
    },
  );
});

describe("RegionRouter searches locally", () => {
  it("routes inside a cube, and from the host into a cube, over that cube's nodes whatever the size of the system", () => {
    const file = topologyPath("ref-4sip.yaml");
    const base = parseTopology(readFileSync(file, "utf8"), file);
    for (const sips of [1, 8]) {
      const graph = expandTopology({ ...base, system: { ...base.system, sips } });
      const router = new RegionRouter({ ...inputOf(graph), region: routingRegions(graph.nodes, 4) });
      const number = (id: string) => graph.nodes.findIndex((node) => node.id === id);
      const cube = `sip${sips - 1}.cube3`;
      const cubeNodes = graph.nodes.filter(
        (node) => node.id === cube || node.id.startsWith(`${cube}.`),
      ).length;
      expect(router.corridorNodes(number(`${cube}.pe15.pe_dma`), number(`${cube}.hbm.ch0.pc1`))).toBe(
        cubeNodes,
      );
      expect(router.corridorNodes(number(`${cube}.pe0.pe_cpu`), number(`${cube}.m_cpu`))).toBe(cubeNodes);
      // Host, the SIP's IO_CPU and the cube.
      expect(router.corridorNodes(number("host"), number(`${cube}.hbm.ch3.pc0`))).toBe(cubeNodes + 2);
      expect(router.corridorNodes(number(`${cube}.m_cpu`), number("host"))).toBe(cubeNodes + 2);
    }
  });

  it("searches the whole graph only for ends that meet many cubes: once from the host for all its routes, never for a PE's routes in its cube or an IO_CPU's to its SIP's cubes", () => {
    const file = topologyPath("ref-4sip.yaml");
    const base = parseTopology(readFileSync(file, "utf8"), file);
    const graph = expandTopology({ ...base, system: { ...base.system, sips: 8 } });
    const router = new RegionRouter({ ...inputOf(graph), region: routingRegions(graph.nodes, 4) });
    const number = new Map(graph.nodes.map((node, n) => [node.id, n]));
    const pcs = graph.byKind("hbm_pc");
    let routes = 0;
    for (const dma of graph.byKind("pe_dma")) {
      for (const pc of pcs) {
        if (pc.sip !== dma.sip || pc.cube !== dma.cube) continue;
        router.route(number.get(dma.id) as number, number.get(pc.id) as number);
        router.route(number.get(pc.id) as number, number.get(dma.id) as number);
        routes += 2;
      }
    }
    expect(routes).toBe(512 * 32 * 2);
    expect(router.wholeGraphSearches).toBe(0);
    // Two searches per PE_DMA (to its cube's PCs, and from them), in its cube's corridor.
    expect(router.searches).toBe(2 * 512);
    for (const cube of graph.byKind("cube")) {
      const ioCpu = number.get(`sip${cube.sip}.io_cpu`) as number;
      router.route(ioCpu, number.get(`${cube.id}.m_cpu`) as number);
      router.route(number.get(`${cube.id}.m_cpu`) as number, ioCpu);
    }
    expect(router.wholeGraphSearches).toBe(0);
    for (const pc of pcs) router.route(number.get("host") as number, number.get(pc.id) as number);
    expect(router.wholeGraphSearches).toBe(1);
  });
});
