/**
 * The formula side of `kb probe`: the routes the fabric takes, where each placement is, how a probe
 * block sits in HBM, and the uncontended time of a transfer (docs/latency-model.md §2-3).
 */

import type { Machine, MemoryBlock } from "@kb/components";
import { MemoryComponent } from "@kb/components";
import { KbError } from "@kb/errors";
import {
  encodeAddress,
  idealTransferNs,
  type Route,
  type TopologyGraph,
  type TopologyNode,
} from "@kb/topology";
import type { ProbeLayout, ProbePlacement } from "./probe-types.js";

/** The timing params of a cube's HBM controller (its node's params). */
export interface HbmTiming {
  readonly accessNs: number;
  readonly flitBytes: number;
  readonly pcBwGbs: number;
}

/** A placement: a pseudo-channel and its route from the requester. */
export interface Target {
  readonly pc: TopologyNode;
  readonly request: Route;
  readonly response: Route;
}

// ---------------------------------------------------------------------------------------------
// Routes and placements

/**
 * The route the fabric takes between `src` and `dst` (docs/latency-model.md §2): the topology's
 * best route, except that a PE_DMA reaches anything but its own cube's HBM through its own NOC
 * router (ADR-0014 D1), paying that router's `first_flit_ns`.
 */
export function fabricRoute(graph: TopologyGraph, src: string, dst: string): Route {
  const router = nocEgress(graph, src, dst) ?? nocEgress(graph, dst, src);
  if (router === null) return graph.route(src, dst);
  const a = graph.route(src, router);
  const b = graph.route(router, dst);
  return {
    src,
    dst,
    hops: [...a.hops, ...b.hops.slice(1)],
    links: [...a.links, ...b.links],
    latencyNs: a.latencyNs + Number(graph.node(router).params.first_flit_ns ?? 0) + b.latencyNs,
    minBwGbs: Math.min(a.minBwGbs, b.minBwGbs),
  };
}

function nocEgress(graph: TopologyGraph, dma: string, other: string): string | null {
  const node = graph.node(dma);
  if (node.kind !== "pe_dma" || node.coords === null) return null;
  const far = graph.node(other);
  if (far.kind === "hbm_pc" && far.sip === node.sip && far.cube === node.cube) return null;
  return `sip${node.sip}.cube${node.cube}.noc.r${node.coords.row}c${node.coords.col}`;
}

/**
 * A placement of `pc` seen from `requester`: the fabric routes both ways. Their `minBwGbs` leaves
 * out the channel <-> pseudo-channel link: that is the PC's own bus, which the fabric does not
 * charge and the formula times at the controller's rate ({@link hbmTiming}).
 */
export function target(graph: TopologyGraph, requester: string, pc: TopologyNode): Target {
  return {
    pc,
    request: withoutPcBus(fabricRoute(graph, requester, pc.id), pc.id),
    response: withoutPcBus(fabricRoute(graph, pc.id, requester), pc.id),
  };
}

function withoutPcBus(route: Route, pc: string): Route {
  let minBwGbs = Number.POSITIVE_INFINITY;
  for (const link of route.links) {
    if (link.src !== pc && link.dst !== pc) minBwGbs = Math.min(minBwGbs, link.bwGbs);
  }
  // Fields one by one: a route read off a search tree builds its hops and links in getters.
  const { src, dst, hops, links, latencyNs } = route;
  return { src, dst, hops, links, latencyNs, minBwGbs };
}

/** Least request latency, then fewest hops, then graph order. */
export function nearest(targets: readonly Target[]): Target | undefined {
  let best: Target | undefined;
  for (const candidate of targets) {
    if (
      best === undefined ||
      candidate.request.latencyNs < best.request.latencyNs ||
      (candidate.request.latencyNs === best.request.latencyNs &&
        candidate.request.links.length < best.request.links.length)
    ) {
      best = candidate;
    }
  }
  return best;
}

/** Most hops, then the highest request latency, then graph order. */
function farthest(targets: readonly Target[]): Target | undefined {
  let best: Target | undefined;
  for (const candidate of targets) {
    const hops = candidate.request.links.length;
    if (
      best === undefined ||
      hops > best.request.links.length ||
      (hops === best.request.links.length && candidate.request.latencyNs > best.request.latencyNs)
    ) {
      best = candidate;
    }
  }
  return best;
}

/** The DMA placements the topology has, in catalog order. */
export function dmaPlacements(graph: TopologyGraph, dma: string): Map<ProbePlacement, Target> {
  const node = graph.node(dma);
  const sip = node.sip as number;
  const cube = node.cube as number;
  const placements = new Map<ProbePlacement, Target>();
  const own = graph.hbmPseudoChannelsOfCube(sip, cube);
  const xbar = graph.outEdges(dma).find((edge) => graph.node(edge.dst).kind === "xbar")?.dst;
  if (xbar !== undefined) {
    const half = new Set(
      graph
        .outEdges(xbar)
        .map((edge) => edge.dst)
        .filter((id) => graph.node(id).kind === "hbm_channel"),
    );
    const local = nearest(
      own.filter((pc) => half.has(pc.parent as string)).map((pc) => target(graph, dma, pc)),
    );
    const other = nearest(
      own.filter((pc) => !half.has(pc.parent as string)).map((pc) => target(graph, dma, pc)),
    );
    if (local !== undefined) placements.set("local", local);
    if (other !== undefined) placements.set("bridge", other);
  }
  const peers = graph
    .children(`sip${sip}.cube${cube}`)
    .filter((child) => child.kind === "ucie_port")
    .flatMap((port) => graph.outEdges(port.id).map((edge) => graph.node(edge.dst)))
    .filter((peer) => peer.kind === "ucie_port" && (peer.sip !== sip || peer.cube !== cube))
    .sort((a, b) => (a.sip as number) - (b.sip as number) || (a.cube as number) - (b.cube as number));
  const peer = peers[0];
  if (peer !== undefined) {
    const ucie = nearest(
      graph
        .hbmPseudoChannelsOfCube(peer.sip as number, peer.cube as number)
        .map((pc) => target(graph, dma, pc)),
    );
    if (ucie !== undefined) placements.set("ucie", ucie);
  }
  const everything: Target[] = [];
  for (const pc of graph.byKind("hbm_pc")) everything.push(target(graph, dma, pc));
  const far = farthest(everything);
  if (far !== undefined) placements.set("far", far);
  return placements;
}

// ---------------------------------------------------------------------------------------------
// Blocks and formulas

/**
 * The timing of `pc`'s HBM controller in `machine`: its node's `access_latency_ns` and
 * `flit_bytes` (else the topology's `cube.hbm`), and the rate of one pseudo-channel from its
 * model's own `peak()` (peak / ports: `pc_bw_gbs` for hbm_ctrl_v1, `burst_bytes / tBL` for
 * hbm_ctrl_v2), else `pc_bw_gbs` when the model states no peak.
 */
export function hbmTiming(machine: Machine, pc: TopologyNode): HbmTiming {
  const spec = machine.graph.topology.cube.hbm;
  const controller = machine.component(`sip${pc.sip}.cube${pc.cube}.hbm`);
  const params = machine.graph.node(controller.id).params;
  const number = (value: unknown, fallback: number): number => (typeof value === "number" ? value : fallback);
  const peak = controller.peak().bytesPerNs;
  const ports =
    controller instanceof MemoryComponent ? controller.ports : spec.channels * spec.pseudo_channels;
  return {
    accessNs: number(params.access_latency_ns, spec.access_latency_ns),
    flitBytes: number(params.flit_bytes, spec.flit_bytes),
    pcBwGbs: peak === undefined ? spec.pc_bw_gbs : peak / ports,
  };
}

/** Channel and pseudo-channel indices of a PC node (`....hbm.ch{h}.pc{q}`). */
function pcIndices(pc: TopologyNode): { channel: number; pseudoChannel: number } {
  const match = /\.ch(\d+)\.pc(\d+)$/.exec(pc.id);
  if (match === null)
    throw new KbError("MACHINE_INVARIANT", `probe: ${pc.id} is not named like an HBM pseudo-channel.`);
  return { channel: Number(match[1]), pseudoChannel: Number(match[2]) };
}

/**
 * `bytes` in one pseudo-channel: rows of the largest divisor of `bytes` that fits in an
 * interleave unit, one stripe apart, starting at the PC's first unit.
 */
export function singlePcLayout(graph: TopologyGraph, pc: TopologyNode, bytes: number): ProbeLayout {
  const {
    channels,
    pseudo_channels: pseudoChannels,
    interleave_bytes: interleave,
    capacity_bytes: capacity,
  } = graph.topology.cube.hbm;
  const { channel, pseudoChannel } = pcIndices(pc);
  const offset = (channel + pseudoChannel * channels) * interleave;
  let rowBytes = Math.min(bytes, interleave);
  while (bytes % rowBytes !== 0) rowBytes--;
  const rows = bytes / rowBytes;
  const stride = rows === 1 ? rowBytes : channels * pseudoChannels * interleave;
  const span = (rows - 1) * stride + rowBytes;
  if (offset + span > capacity) {
    throw new KbError(
      "MACHINE_INVALID_COMMAND",
      `probe: ${bytes} B in one pseudo-channel span ${span} B of HBM from offset ${offset}, past cube.hbm.capacity_bytes ${capacity}; probe a smaller size.`,
    );
  }
  const address = encodeAddress({ sip: pc.sip as number, cube: pc.cube as number, space: "hbm", offset });
  return { address, rows, rowBytes, stride };
}

function busNs(timing: HbmTiming, bytes: number): number {
  return (Math.ceil(bytes / timing.flitBytes) * timing.flitBytes) / timing.pcBwGbs;
}

/** Uncontended write of `bytes` to one PC: complete when committed. */
export function writeFormula(route: Route, bytes: number, timing: HbmTiming): number {
  return Math.max(idealTransferNs(route, bytes), route.latencyNs + busNs(timing, bytes)) + timing.accessNs;
}

/** Uncontended read of `bytes` from one PC: request, access, response. */
export function readFormula(request: Route, response: Route, bytes: number, timing: HbmTiming): number {
  return (
    idealTransferNs(request, 0) +
    timing.accessNs +
    Math.max(idealTransferNs(response, bytes), response.latencyNs + busNs(timing, bytes))
  );
}

/** The fabric's view of a probe layout. */
export function blockOf(layout: ProbeLayout): MemoryBlock {
  return { address: layout.address, rows: layout.rows, rowBytes: layout.rowBytes, stride: layout.stride };
}

/**
 * The PE-side time before a DMA's packets leave: PE_CPU dispatch, PE_MMU misses (a fresh TLB: one
 * per page the block touches), PE_DMA setup; from the built components' params (defaults filled
 * in), 0 for a param an impl does not have.
 */
export function peFixedNs(machine: Machine, pe: string, layout: ProbeLayout): number {
  const param = (component: string, name: string): number => {
    const value = (machine.component(`${pe}.${component}`).params as Record<string, unknown>)[name];
    return typeof value === "number" ? value : 0;
  };
  const pageBytes = param("pe_mmu", "page_bytes");
  const span = (layout.rows - 1) * layout.stride + layout.rowBytes;
  const pages =
    pageBytes > 0
      ? Math.floor((layout.address + span - 1) / pageBytes) - Math.floor(layout.address / pageBytes) + 1
      : 1;
  // The TCM side of the copy: one PE_TCM request of the block's bytes (docs/latency-model.md, pe_dma_v1).
  const tcmBw = param("pe_tcm", "bw_gbs");
  const tcmNs = param("pe_tcm", "latency_ns") + (tcmBw > 0 ? (layout.rows * layout.rowBytes) / tcmBw : 0);
  return (
    param("pe_cpu", "dispatch_ns") + pages * param("pe_mmu", "miss_ns") + param("pe_dma", "setup_ns") + tcmNs
  );
}
