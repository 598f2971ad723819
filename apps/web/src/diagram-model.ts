import type { RunResults } from "@kb/runtime";
import type { WebNode, WebTopology } from "./api.js";
import { leafLabelRoom } from "./diagram-labels.js";
import { formatPercent, formatSi } from "./format.js";

/** A node of the diagram: a drawn component, a PE (its components folded in) or a container. */
export interface DiagramNode {
  readonly id: string;
  /** Short label: `pe3`, `r0c1`, `ch2`, `sip0.cube1`. */
  readonly label: string;
  /** The label's forms, longest first (`sip0.cube1`, `cube1`): diagram-labels.ts draws the longest that fits. */
  readonly labels: readonly string[];
  /** Diagram px its label may take across: a leaf's room on the floorplan, a box's width. */
  readonly labelRoom: number;
  /** Diagram px its label may take up and down (the HBM stack's, between the XBARs and the stack; others unbounded). */
  readonly labelRoomY: number;
  readonly kind: string;
  /** The enclosing drawn node (SIP, cube, HBM stack), if any. */
  readonly parent: string | null;
  /** True for SIPs, cubes and HBM stacks: drawn as boxes around their parts, placed by them. */
  readonly compound: boolean;
  /** Where a leaf is drawn (px); null for compounds. */
  readonly position: { readonly x: number; readonly y: number } | null;
  /** Utilisation 0..1 in the chosen results; null without results. */
  readonly utilisation: number | null;
  /** Lines for the hover box: impl, the utilisation of every folded component. */
  readonly details: readonly string[];
}

/** A link between two drawn nodes: every edge between what they fold, merged. */
export interface DiagramEdge {
  readonly id: string;
  readonly source: string;
  readonly target: string;
  /** Links (a pair of directed edges) merged into this one. */
  readonly links: number;
  /** Bandwidth of one link, GB/s (the largest when they differ). */
  readonly bw: number;
  /** `64 GB/s`, `2 x 64 GB/s`, with the traffic when the results report links. */
  readonly label: string;
  /**
   * The busiest of its directed links (0..1, `results.links`); 0 for links that carried nothing,
   * null without results or in results written before links were reported.
   */
  readonly utilisation: number | null;
}

/** The diagram of a topology. */
export interface Diagram {
  readonly nodes: readonly DiagramNode[];
  readonly edges: readonly DiagramEdge[];
  /** PEs drawn (one node each). */
  readonly peCount: number;
}

// Floorplan of a cube (px, relative to its origin, the r0c0 router): the NOC grid with each PE
// beside its router, the cube manager and SRAM to the left, the XBAR halves below with the bridge
// between them,
// the HBM channels under the XBAR half that serves them, UCIe ports by their corner routers.
const CELL_W = 130;
const CELL_H = 100;
const PE_DX = 55;
const PE_DY = 40;
const LEFT_X = -210;
const PORT_OUT = 95;
const CUBE_GAP = 140;
const SIP_GAP = 260;
/**
 * The height of an HBM stack's label above its box: the gap between the XBARs' row and the stack
 * (110 px) less the XBARs' and the channels' half heights (12, 15) and the box's padding (18).
 */
const HBM_LABEL_ROOM_Y = 65;
/** What a box adds across to the span of its leaves' centres: their half widths and its padding. */
const BOX_MARGIN = 60;

/**
 * The diagram of `topology`: SIPs and cubes as boxes, inside a cube its NOC routers, PEs, XBAR
 * halves, bridge, cube manager, SRAM, UCIe ports and an HBM stack box holding its channels. A
 * PE's components are folded into one PE node and a channel's pseudo-channels into the channel;
 * edges between folded parts are merged into one link with its count.
 *
 * Places every leaf on a floorplan from the NOC grid coordinates of the topology (routers and
 * PEs where the grid puts them), so the same topology always draws the same picture.
 *
 * Colours come from `results`: a drawn node's utilisation is the highest of the components it
 * folds (a component absent from the results serviced nothing: 0). An HBM channel shows its
 * busiest pseudo-channel from `results.hbmPorts` (port p of a controller is the p-th
 * pseudo-channel under it in topology order: channel floor(p / Q), pseudo-channel p mod Q), or,
 * in results without per-port rows, its controller's utilisation. A link shows the busiest of
 * the directed links it merges (`results.links`).
 */
export function buildDiagram(topology: WebTopology, results: RunResults | null): Diagram {
  const byId = new Map(topology.nodes.map((node) => [node.id, node]));
  const usage = new Map((results?.components ?? []).map((row) => [row.id, row]));
  const drawnOf = (node: WebNode): string => {
    if (node.kind === "hbm_pc" && node.parent !== null) return node.parent;
    if (node.pe !== null && node.kind !== "pe" && node.parent !== null) return node.parent;
    return node.id;
  };
  const portsOf = hbmPortsByChannel(topology, results);
  const { positions, channelStep } = floorplan(topology);
  const folded = new Map<string, WebNode[]>();
  for (const node of topology.nodes) {
    const drawn = drawnOf(node);
    if (drawn !== node.id) folded.set(drawn, [...(folded.get(drawn) ?? []), node]);
  }
  const parentIds = new Set(
    topology.nodes.filter((node) => drawnOf(node) === node.id).map((node) => node.parent),
  );

  const nodes: DiagramNode[] = [];
  for (const node of topology.nodes) {
    if (drawnOf(node) !== node.id) continue;
    const compound = node.kind === "sip" || node.kind === "cube" || parentIds.has(node.id);
    const parts = folded.get(node.id) ?? [];
    let utilisation: number | null = null;
    const details: string[] = [];
    if (node.impl !== null) details.push(`${node.kind} (${node.impl})`);
    else if (node.kind !== "pe") details.push(node.kind);
    if (results !== null) {
      const ports = portsOf?.get(node.id);
      if (node.kind === "hbm_channel" && ports !== undefined) {
        utilisation = Math.max(0, ...ports.map((port) => port.utilisation));
        details.push(...channelDetails(ports));
      } else if (node.kind === "hbm_channel") {
        const controller = node.parent === null ? undefined : usage.get(node.parent);
        utilisation = controller?.utilisation ?? 0;
        details.push(
          `HBM controller: ${formatPercent(utilisation)} (these results do not split it by pseudo-channel)`,
        );
      } else if (node.impl !== null || parts.length > 0) {
        utilisation = usage.get(node.id)?.utilisation ?? 0;
        if (node.impl !== null) details.push(`utilisation ${formatPercent(utilisation)}`);
        for (const part of parts) {
          if (part.impl === null) continue;
          const value = usage.get(part.id)?.utilisation ?? 0;
          utilisation = Math.max(utilisation, value);
          details.push(`${part.kind} (${part.impl}): ${formatPercent(value)}`);
        }
      }
    } else if (parts.length > 0) {
      details.push(...parts.map((part) => `${part.kind}${part.impl === null ? "" : ` (${part.impl})`}`));
    }
    const labels = labelsOf(node);
    nodes.push({
      id: node.id,
      label: labels[0] as string,
      labels,
      labelRoom: compound ? 0 : leafLabelRoom(node.kind, channelStep),
      labelRoomY: node.kind === "hbm_ctrl" ? HBM_LABEL_ROOM_Y : Number.POSITIVE_INFINITY,
      kind: node.kind,
      parent: node.parent !== null && byId.has(node.parent) ? node.parent : null,
      compound,
      position: compound ? null : (positions.get(node.id) ?? { x: 0, y: 0 }),
      utilisation,
      details,
    });
  }

  boxLabelRooms(nodes);

  const linkUsage =
    results?.links === undefined
      ? null
      : new Map(results.links.map((link) => [`${link.src}\u0000${link.dst}`, link]));
  const merged = new Map<
    string,
    { source: string; target: string; ab: number; ba: number; bw: number; utilisation: number; bytes: number }
  >();
  for (const edge of topology.edges) {
    const src = byId.get(edge.src);
    const dst = byId.get(edge.dst);
    if (src === undefined || dst === undefined) continue;
    const a = drawnOf(src);
    const b = drawnOf(dst);
    if (a === b) continue;
    const [source, target] = a < b ? [a, b] : [b, a];
    const key = `${source}\u0000${target}`;
    let link = merged.get(key);
    if (link === undefined) {
      link = { source, target, ab: 0, ba: 0, bw: 0, utilisation: 0, bytes: 0 };
      merged.set(key, link);
    }
    if (a === source) link.ab++;
    else link.ba++;
    link.bw = Math.max(link.bw, edge.bw);
    const used = linkUsage?.get(`${edge.src}\u0000${edge.dst}`);
    if (used !== undefined) {
      link.utilisation = Math.max(link.utilisation, used.utilisation);
      link.bytes += used.bytes;
    }
  }
  const edges = [...merged.values()].map((link, index): DiagramEdge => {
    const links = Math.max(link.ab, link.ba);
    return {
      id: `e${index}`,
      source: link.source,
      target: link.target,
      links,
      bw: link.bw,
      label:
        `${links > 1 ? `${links} x ` : ""}${link.bw} GB/s` +
        (linkUsage === null
          ? ""
          : `: busiest direction ${formatPercent(link.utilisation)} busy, ${formatSi(link.bytes, "B")} carried`),
      utilisation: linkUsage === null ? null : link.utilisation,
    };
  });
  return { nodes, edges, peCount: nodes.filter((node) => node.kind === "pe").length };
}

/** One pseudo-channel of a channel, as the results report its port. */
export interface ChannelPort {
  /** `pc0`, `pc1`. */
  readonly name: string;
  readonly port: number;
  readonly utilisation: number;
  readonly bytes: number;
}

/**
 * The pseudo-channel ports of each HBM channel (by channel id) from `results.hbmPorts`; null when
 * the results have no per-port rows. Port p of a controller is its p-th `hbm_pc` in topology
 * order (expansion puts channel h's Q pseudo-channels at h x Q .. h x Q + Q - 1, as the fabric
 * numbers its lanes). A controller without a row moved nothing: its ports are 0.
 */
export function hbmPortsByChannel(
  topology: WebTopology,
  results: RunResults | null,
): Map<string, ChannelPort[]> | null {
  const rows = results?.hbmPorts;
  if (rows === undefined) return null;
  const byController = new Map(rows.map((row) => [row.id, row.ports]));
  const channelsOf = new Map<string, WebNode[]>();
  const pcsOf = new Map<string, WebNode[]>();
  for (const node of topology.nodes) {
    if (node.parent === null) continue;
    if (node.kind === "hbm_channel")
      channelsOf.set(node.parent, [...(channelsOf.get(node.parent) ?? []), node]);
    if (node.kind === "hbm_pc") pcsOf.set(node.parent, [...(pcsOf.get(node.parent) ?? []), node]);
  }
  const out = new Map<string, ChannelPort[]>();
  for (const [controller, channels] of channelsOf) {
    const ports = byController.get(controller) ?? [];
    let port = 0;
    for (const channel of channels) {
      out.set(
        channel.id,
        (pcsOf.get(channel.id) ?? []).map((pc) => {
          const row = ports[port];
          const entry = {
            name: pc.id.slice(pc.id.lastIndexOf(".") + 1),
            port,
            utilisation: row?.utilisation ?? 0,
            bytes: row?.bytes ?? 0,
          };
          port++;
          return entry;
        }),
      );
    }
  }
  return out;
}

/** Hover lines of a channel: each pseudo-channel's utilisation and bytes, and their spread. */
function channelDetails(ports: readonly ChannelPort[]): string[] {
  const lines = ports.map(
    (port) =>
      `${port.name} (port ${port.port}): ${formatPercent(port.utilisation)}, ${formatSi(port.bytes, "B")}`,
  );
  if (ports.length > 1) {
    const values = ports.map((port) => port.utilisation);
    lines.push(
      `pseudo-channels: max ${formatPercent(Math.max(...values))}, min ${formatPercent(Math.min(...values))}`,
    );
  }
  return lines;
}

/** A node's label forms, longest first: a cube also as `cube1`, an HBM stack also as `hbm (HBM)`. */
function labelsOf(node: WebNode): string[] {
  const last = node.id.slice(node.id.lastIndexOf(".") + 1);
  if (node.kind === "cube") return node.id === last ? [node.id] : [node.id, last];
  if (node.kind === "sip" || node.kind === "host") return [node.id];
  if (node.kind === "hbm_ctrl") return [`${node.id} (HBM)`, `${last} (HBM)`];
  return [last.replace(/^noc\./, "")];
}

/**
 * Sets each box's label room to its width: the span of the leaves inside it (their centres, a
 * node's width either side), as Cytoscape draws a compound around its children.
 */
function boxLabelRooms(nodes: DiagramNode[]): void {
  const parentOf = new Map(nodes.map((node) => [node.id, node.parent]));
  const spans = new Map<string, { min: number; max: number }>();
  for (const node of nodes) {
    if (node.position === null) continue;
    for (let box = node.parent; box !== null; box = parentOf.get(box) ?? null) {
      const span = spans.get(box) ?? { min: node.position.x, max: node.position.x };
      spans.set(box, { min: Math.min(span.min, node.position.x), max: Math.max(span.max, node.position.x) });
    }
  }
  nodes.forEach((node, index) => {
    const span = spans.get(node.id);
    if (node.compound && span !== undefined)
      nodes[index] = { ...node, labelRoom: span.max - span.min + BOX_MARGIN };
  });
}

/** Positions of the leaves: cubes side by side in their SIP, SIPs on a grid, the host above. */
function floorplan(topology: WebTopology): {
  positions: Map<string, { x: number; y: number }>;
  /** Diagram px between neighbouring HBM channels. */
  channelStep: number;
} {
  const positions = new Map<string, { x: number; y: number }>();
  const children = new Map<string, WebNode[]>();
  for (const node of topology.nodes) {
    if (node.parent !== null) children.set(node.parent, [...(children.get(node.parent) ?? []), node]);
  }
  const sips = topology.nodes.filter((node) => node.kind === "sip");
  const cubesOf = (sip: WebNode) => (children.get(sip.id) ?? []).filter((node) => node.kind === "cube");

  // Every cube of a topology has the same grid and stack: size the slots from the largest.
  let rows = 1;
  let cols = 1;
  let channels = 1;
  for (const node of topology.nodes) {
    if (node.kind === "noc_router" && node.row !== null && node.col !== null) {
      rows = Math.max(rows, node.row + 1);
      cols = Math.max(cols, node.col + 1);
    }
    if (node.kind === "hbm_channel") {
      channels = Math.max(channels, Number(/ch(\d+)$/.exec(node.id)?.[1] ?? 0) + 1);
    }
  }
  const gridW = Math.max(cols * CELL_W, channels * 60);
  const cubeW = gridW - LEFT_X + PORT_OUT + CUBE_GAP;
  const xbarY = rows * CELL_H + 30;
  const hbmY = xbarY + 110;
  const cubeH = hbmY + 200;
  const cubesPerSip = Math.max(1, ...sips.map((sip) => cubesOf(sip).length));
  const sipW = cubesPerSip * cubeW + SIP_GAP;
  const sipH = cubeH + 200;
  const sipCols = Math.ceil(Math.sqrt(Math.max(1, sips.length)));

  sips.forEach((sip, s) => {
    const sipX = (s % sipCols) * sipW;
    const sipY = Math.floor(s / sipCols) * sipH;
    const cubes = cubesOf(sip);
    for (const node of children.get(sip.id) ?? []) {
      if (node.kind !== "cube")
        positions.set(node.id, { x: sipX + (cubes.length * cubeW) / 2 - 150, y: sipY - 170 });
    }
    cubes.forEach((cube, c) => {
      placeCube(cube, sipX + c * cubeW, sipY, { rows, cols, gridW, xbarY, hbmY }, children, positions);
    });
  });
  const host = topology.nodes.find((node) => node.kind === "host");
  if (host !== undefined) {
    const width = Math.min(sipCols, sips.length) * sipW - SIP_GAP;
    positions.set(host.id, { x: width / 2 - 150, y: -300 });
  }
  return { positions, channelStep: gridW / channels };
}

interface CubeShape {
  readonly rows: number;
  readonly cols: number;
  readonly gridW: number;
  readonly xbarY: number;
  readonly hbmY: number;
}

function placeCube(
  cube: WebNode,
  x0: number,
  y0: number,
  shape: CubeShape,
  children: ReadonlyMap<string, readonly WebNode[]>,
  positions: Map<string, { x: number; y: number }>,
): void {
  const at = (id: string, x: number, y: number) => positions.set(id, { x: x0 + x, y: y0 + y });
  const { rows, cols, gridW, xbarY, hbmY } = shape;
  const gridX = (gridW - cols * CELL_W) / 2;
  const halfCols = Math.ceil(cols / 2);
  const centre = (from: number, to: number) => gridX + ((from + to - 1) / 2) * CELL_W + PE_DX / 2;
  const corners = [
    { x: gridX - 20, y: -75 },
    { x: gridX + (cols - 1) * CELL_W + 20, y: -75 },
    { x: gridX + (cols - 1) * CELL_W + PORT_OUT + PE_DX, y: (rows - 1) * CELL_H },
    { x: gridX - PORT_OUT + 10, y: (rows - 1) * CELL_H + PE_DY },
  ];
  let port = 0;
  for (const node of children.get(cube.id) ?? []) {
    const name = node.id.slice(cube.id.length + 1);
    if (node.kind === "pe" || node.kind === "noc_router") {
      const row = node.row ?? 0;
      const col = node.col ?? 0;
      const dx = node.kind === "pe" ? PE_DX : 0;
      const dy = node.kind === "pe" ? PE_DY : 0;
      at(node.id, gridX + col * CELL_W + dx, row * CELL_H + dy);
    } else if (name === "m_cpu") at(node.id, LEFT_X, 0);
    else if (name === "m_cpu_dma") at(node.id, LEFT_X, xbarY - 50);
    else if (name === "sram") at(node.id, LEFT_X, 80);
    else if (name === "xbar0") at(node.id, centre(0, halfCols), xbarY);
    else if (name === "xbar1") at(node.id, centre(halfCols, cols), xbarY);
    else if (name === "bridge") at(node.id, (centre(0, halfCols) + centre(halfCols, cols)) / 2, xbarY);
    else if (node.kind === "hbm_ctrl") {
      const channels = children.get(node.id) ?? [];
      const step = gridW / Math.max(1, channels.length);
      channels.forEach((channel, h) => {
        at(channel.id, h * step + step / 2, hbmY);
      });
    } else if (node.kind === "ucie_port") {
      const corner = corners[port % 4] as { x: number; y: number };
      at(node.id, corner.x + Math.floor(port / 4) * 30, corner.y);
      port++;
    } else {
      // A part this floorplan does not know: a row under the stack.
      at(node.id, LEFT_X + port * 70, hbmY + 120);
      port++;
    }
  }
}
