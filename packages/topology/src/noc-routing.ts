import type { TopologyEdge, TopologyNode } from "./graph.js";
import type { Route } from "./route.js";
import { LATENCY_UNITS_PER_NS } from "./routing-arrays.js";

/** How a packet crosses a cube's NOC mesh (`cube.noc.routing`). */
export const NOC_ROUTINGS = ["xy", "yx", "shortest"] as const;

/** A name of {@link NOC_ROUTINGS}. */
export type NocRouting = (typeof NOC_ROUTINGS)[number];

/** What {@link dimensionOrder} reads of a graph. */
interface MeshGraph {
  node(id: string): TopologyNode;
  outEdges(id: string): readonly TopologyEdge[];
}

/**
 * `route` with each stretch across a NOC mesh taken in dimension order: `xy` moves along the row
 * (changing the column, BookSim's dimension 0) until the column is the destination's, then along
 * the column; `yx` the other way round. The stretch's ends stay (where the route enters and
 * leaves the mesh: the best route's choice), so only the routers between them change;
 * `latencyNs` and `minBwGbs` are those of the new links and routers. Returns `route` itself when
 * it is already in that order (or has no stretch of three routers or more). A step with no link
 * (a mesh an override cut) keeps the stretch as the best route had it.
 */
export function dimensionOrder(route: Route, graph: MeshGraph, routing: "xy" | "yx"): Route {
  const hops = route.hops;
  let changed: { hops: string[]; links: TopologyEdge[] } | null = null;
  let start = 0;
  while (start < hops.length) {
    if (graph.node(hops[start] as string).kind !== "noc_router") {
      start++;
      continue;
    }
    let end = start;
    while (end + 1 < hops.length && graph.node(hops[end + 1] as string).kind === "noc_router") end++;
    if (end - start >= 2) {
      const path = meshPath(graph, hops[start] as string, hops[end] as string, routing);
      if (path !== null && path.hops.some((id, index) => id !== hops[start + index])) {
        changed ??= { hops: [...hops], links: [...route.links] };
        const offset = changed.hops.length - hops.length;
        changed.hops.splice(start + offset, end - start + 1, ...path.hops);
        changed.links.splice(start + offset, end - start, ...path.links);
      }
    }
    start = end + 1;
  }
  if (changed === null) return route;
  return withTimes(route, changed.hops, changed.links, graph);
}

/** The router id's prefix, row and column (`sip0.cube0.noc.r2c3`). */
function place(id: string): { prefix: string; row: number; col: number } | null {
  const match = /^(.*\.noc\.)r(\d+)c(\d+)$/.exec(id);
  return match === null ? null : { prefix: match[1] as string, row: Number(match[2]), col: Number(match[3]) };
}

/** The dimension-order path between two routers of one mesh, or null when a step has no link. */
function meshPath(
  graph: MeshGraph,
  from: string,
  to: string,
  routing: "xy" | "yx",
): { hops: string[]; links: TopologyEdge[] } | null {
  const a = place(from);
  const b = place(to);
  if (a === null || b === null || a.prefix !== b.prefix) return null;
  const hops = [from];
  const links: TopologyEdge[] = [];
  let { row, col } = a;
  const step = (): boolean => {
    const id = `${a.prefix}r${row}c${col}`;
    const edge = graph.outEdges(hops[hops.length - 1] as string).find((candidate) => candidate.dst === id);
    if (edge === undefined) return false;
    hops.push(id);
    links.push(edge);
    return true;
  };
  for (const dimension of routing === "xy" ? ["col", "row"] : ["row", "col"]) {
    while (dimension === "col" ? col !== b.col : row !== b.row) {
      if (dimension === "col") col += Math.sign(b.col - col);
      else row += Math.sign(b.row - row);
      if (!step()) return null;
    }
  }
  return { hops, links };
}

/** A route over `hops` and `links` with its latency and bottleneck computed as the router does. */
function withTimes(route: Route, hops: string[], links: TopologyEdge[], graph: MeshGraph): Route {
  let units = 0;
  let minBwGbs = Number.POSITIVE_INFINITY;
  for (const link of links) {
    units += Math.round(link.latencyNs * LATENCY_UNITS_PER_NS);
    if (link.bwGbs < minBwGbs) minBwGbs = link.bwGbs;
  }
  for (let i = 1; i < hops.length - 1; i++) {
    const params = graph.node(hops[i] as string).params;
    const overhead = params.first_flit_ns ?? params.forward_ns ?? 0;
    units += Math.round(Number(overhead) * LATENCY_UNITS_PER_NS);
  }
  return { src: route.src, dst: route.dst, hops, links, latencyNs: units / LATENCY_UNITS_PER_NS, minBwGbs };
}
