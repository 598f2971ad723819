import type { Environment } from "@kb/des";
import { KbError } from "@kb/errors";
import { decodeAddress, type HbmAddressMap, type TopologyEdge, type TopologyGraph } from "@kb/topology";
import { BlockRanges, splitByPseudoChannel } from "./block-split.js";
import type { Component } from "./component.js";
import { ForwardingComponent } from "./forwarding-component.js";
import type { MemoryBlock, Message } from "./message.js";
import {
  type BatchTarget,
  CompiledPath,
  Link,
  Packet,
  type PathEnd,
  type PortRanges,
  type Stop,
} from "./packet.js";
import type { Transfer } from "./transfer.js";

/** Checks a block and returns its byte span (first byte to one past the last). @internal */
export function blockSpan(block: MemoryBlock): number {
  return block.rows <= 1 ? block.rowBytes : (block.rows - 1) * block.stride + block.rowBytes;
}

/**
 * The fabric of a machine: one {@link Link} per directed topology edge, routes compiled into
 * stops, and the transfers that move data between requesters (PE_DMA, M_CPU.DMA, the host) and
 * memories (HBM pseudo-channels, shared SRAM).
 *
 * **Timing (cut-through).** A packet's head leaves a stop when the component there has serviced
 * it (a transit component's first-flit overhead); on each link it starts when the link is free
 * and its head is there, the link is charged `bytes / bw`, and the head reaches the next stop
 * after the link's latency; its tail reaches the next stop no earlier than the link finished and
 * no earlier than the tail came in plus the stop's overhead. Uncontended, a packet of B bytes
 * takes exactly `sum(link latency) + sum(overheads) + B / min(bw)`: the topology's
 * `idealTransferNs`.
 */
export class Fabric {
  private readonly links = new Map<TopologyEdge, Link>();
  private readonly paths = new Map<string, Map<string, CompiledPath>>();
  private readonly portPathsByRequester = new Map<string, Map<number, PortPaths>>();
  private readonly splits = new Map<string, Split>();
  /**
   * Every distinct stop of the compiled paths, by value: the paths from one requester to the 32
   * pseudo-channels of a stack differ only in their last stop, and paths from many requesters
   * share the stops near a memory (8192 PEs compile ~560 k paths).
   */
  private readonly stops = new Map<string, Stop>();
  private readonly linkNumbers = new Map<Link, number>();
  private readonly map: HbmAddressMap;
  private readonly hbmCapacity: number;

  constructor(
    private readonly graph: TopologyGraph,
    private readonly lookup: (id: string) => Component | undefined,
    private readonly env: Environment,
  ) {
    this.map = graph.hbmAddressMap();
    this.hbmCapacity = graph.topology.cube.hbm.capacity_bytes;
  }

  /** Every link used so far (links no packet crossed are not listed). */
  usedLinks(): Link[] {
    return [...this.links.values()];
  }

  /** The link object of a topology edge. */
  link(edge: TopologyEdge): Link {
    let link = this.links.get(edge);
    if (link === undefined) {
      link = new Link(edge);
      this.links.set(edge, link);
      this.linkNumbers.set(link, this.linkNumbers.size);
    }
    return link;
  }

  /** The stop of these values, shared by every path that has it (stops are never changed). */
  private stop(
    component: Component | null,
    lane: number,
    overheadNs: number,
    links: Link[],
    passOverheadNs: number,
  ): Stop {
    let key = `${component?.id ?? ""}|${lane}|${overheadNs}|${passOverheadNs}`;
    for (const link of links) key += `|${this.linkNumbers.get(link)}`;
    let stop = this.stops.get(key);
    if (stop === undefined) {
      const gate = component instanceof ForwardingComponent ? component.gate : null;
      stop = { component, lane, overheadNs, links, passOverheadNs, gate };
      this.stops.set(key, stop);
    }
    return stop;
  }

  /**
   * The compiled path from node `src` to node `dst`, cached. Throws `TOPOLOGY_NO_ROUTE` /
   * `TOPOLOGY_UNKNOWN_NODE` from the topology.
   */
  path(src: string, dst: string, end: PathEnd): CompiledPath {
    let bySource = this.paths.get(src);
    if (bySource === undefined) {
      bySource = new Map();
      this.paths.set(src, bySource);
    }
    const key = end === "memory" ? dst : end === "sink" ? `${dst}>sink` : `${dst}>deliver`;
    let path = bySource.get(key);
    if (path === undefined) {
      path = this.compile(src, dst, end);
      bySource.set(key, path);
    }
    return path;
  }

  /**
   * The route of a path, with PE_DMA's dual egress (ADR-0014 D1): a PE_DMA reaches its own cube's
   * HBM over the XBAR and everything else (shared SRAM, other cubes, the host) over the NOC, so
   * such traffic leaves (or enters) through the PE's NOC router even where the XBAR and the
   * bridge would be a shorter way round.
   */
  private routeOf(
    src: string,
    dst: string,
  ): { hops: readonly string[]; links: readonly TopologyEdge[]; latencyNs: number; minBwGbs: number } {
    const graph = this.graph;
    const viaNoc = (dma: string, other: string): string | null => {
      const node = graph.node(dma);
      if (node.kind !== "pe_dma") return null;
      const far = graph.node(other);
      if (far.kind === "hbm_pc" && far.sip === node.sip && far.cube === node.cube) return null;
      const coords = node.coords as { row: number; col: number };
      return `sip${node.sip}.cube${node.cube}.noc.r${coords.row}c${coords.col}`;
    };
    const first = viaNoc(src, dst);
    const last = first === null ? viaNoc(dst, src) : null;
    if (first === null && last === null) return graph.route(src, dst, UNKEPT);
    const a = first !== null ? graph.route(src, first, UNKEPT) : graph.route(src, last as string, UNKEPT);
    const b = first !== null ? graph.route(first, dst, UNKEPT) : graph.route(last as string, dst, UNKEPT);
    const middle = graph.node(first ?? (last as string));
    const overhead = Number(middle.params.first_flit_ns ?? 0);
    return {
      hops: [...a.hops, ...b.hops.slice(1)],
      links: [...a.links, ...b.links],
      latencyNs: a.latencyNs + overhead + b.latencyNs,
      minBwGbs: Math.min(a.minBwGbs, b.minBwGbs),
    };
  }

  private compile(src: string, dst: string, end: PathEnd): CompiledPath {
    const route = this.routeOf(src, dst);
    const hops = route.hops;
    const routeLinks = route.links;
    const stops: Stop[] = [this.stop(this.lookup(src) ?? null, 0, 0, [], 0)];
    let links: Link[] = [];
    let pass = 0;
    for (let i = 1; i < hops.length; i++) {
      const edge = routeLinks[i - 1] as TopologyEdge;
      const id = hops[i] as string;
      const node = this.graph.node(id);
      // The link between an HBM channel and a pseudo-channel is the PC's own bus, timed by the
      // HBM controller's per-PC state, not charged as a link.
      const srcKind = this.graph.node(edge.src).kind;
      if (node.kind !== "hbm_pc" && srcKind !== "hbm_pc") links.push(this.link(edge));
      const last = i === hops.length - 1;
      let component: Component | null;
      let lane = 0;
      if (node.kind === "hbm_pc") {
        if (!last) throw new Error(`route ${src} -> ${dst} passes through ${id}`);
        const channelId = node.parent as string;
        const h = Number(channelId.slice(channelId.lastIndexOf(".ch") + 3));
        const q = Number(id.slice(id.lastIndexOf(".pc") + 3));
        lane = h * this.graph.topology.cube.hbm.pseudo_channels + q;
        component = this.lookup(`sip${node.sip}.cube${node.cube}.hbm`) ?? null;
      } else {
        component = this.lookup(id) ?? null;
      }
      if (component === null && !(last && end === "sink")) {
        if (!last) {
          // A forwarding node with no implementation (an HBM channel): a pass-through.
          pass += Number(node.params.first_flit_ns ?? 0);
          continue;
        }
        throw new KbError(
          "MACHINE_INVALID_COMMAND",
          `the path ${src} -> ${dst} ends at "${id}" (kind ${node.kind}), which no component services.`,
        );
      }
      const overhead = last ? 0 : Number(node.params.first_flit_ns ?? node.params.forward_ns ?? 0);
      stops.push(this.stop(component, lane, overhead, links, pass));
      links = [];
      pass = 0;
    }
    return new CompiledPath(src, dst, stops, end, route.latencyNs, route.minBwGbs);
  }

  /**
   * Where a block lives and how its bytes split over the memory's ports, checked. Throws
   * `MACHINE_INVALID_COMMAND` for a TCM address (TCM is local to its PE), an address outside the
   * topology or a block past the memory's end.
   */
  private locate(block: MemoryBlock, what: string): Located {
    const address = decodeAddress(block.address);
    const topology = this.graph.topology;
    if (address.sip >= topology.system.sips || address.cube >= topology.sip.cubes) {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `${what}: address 0x${block.address.toString(16)} names sip ${address.sip} cube ${address.cube}, but topology "${topology.name}" has ${topology.system.sips} SIP(s) x ${topology.sip.cubes} cube(s).`,
      );
    }
    const span = blockSpan(block);
    const cubeKey = address.sip * topology.sip.cubes + address.cube;
    if (address.space === "sram") {
      const capacity = topology.cube.sram.capacity_bytes;
      if (address.offset + span > capacity) throw pastEnd(what, block, "SRAM", capacity);
      return {
        cubeKey,
        sram: true,
        split: { lanes: SINGLE_LANE, bytes: [block.rows * block.rowBytes] },
        ranges: new BlockRanges(block, address.offset, null),
      };
    }
    if (address.space === "tcm") {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `${what}: address 0x${block.address.toString(16)} is in a PE's TCM; the fabric moves data between a requester and HBM or SRAM, and TCM is the local end of a PE_DMA copy.`,
      );
    }
    if (address.offset + span > this.hbmCapacity) throw pastEnd(what, block, "HBM", this.hbmCapacity);
    return {
      cubeKey,
      sram: false,
      split: this.splitOf(block, address.offset),
      ranges: new BlockRanges(block, address.offset, this.map),
    };
  }

  /**
   * The bytes per pseudo-channel of a block at `offset` in its stack, cached by geometry (kernels
   * read the same tiles again and again; the cache is cleared when it holds 4096 blocks).
   */
  private splitOf(block: MemoryBlock, offset: number): Split {
    const key = `${offset}:${block.rows}:${block.rowBytes}:${block.rows <= 1 ? 0 : block.stride}`;
    let split = this.splits.get(key);
    if (split === undefined) {
      const shares = splitByPseudoChannel(block, offset, this.map);
      split = { lanes: shares.map((share) => share.lane), bytes: shares.map((share) => share.bytes) };
      if (this.splits.size >= SPLIT_CACHE_SIZE) this.splits.clear();
      this.splits.set(key, split);
    }
    return split;
  }

  /** The compiled paths between `requester` and the ports of one cube's memory (HBM lanes or SRAM). */
  private portPaths(requester: string, located: Located): PortPaths {
    let byCube = this.portPathsByRequester.get(requester);
    if (byCube === undefined) {
      byCube = new Map();
      this.portPathsByRequester.set(requester, byCube);
    }
    const key = located.sram ? -1 - located.cubeKey : located.cubeKey;
    let paths = byCube.get(key);
    if (paths === undefined) {
      const cubes = this.graph.topology.sip.cubes;
      const [sip, cube] = [Math.floor(located.cubeKey / cubes), located.cubeKey % cubes];
      const ids = located.sram
        ? [`sip${sip}.cube${cube}.sram`]
        : this.graph.hbmPseudoChannelsOfCube(sip, cube).map((node) => node.id);
      paths = {
        ids,
        toMemory: new Array(ids.length),
        fromMemory: new Array(ids.length),
        groupOf: [new Array(ids.length), new Array(ids.length)],
        groupIds: new Map(),
      };
      byCube.set(key, paths);
    }
    return paths;
  }

  /** Compiles and keeps the path to (`memory`) or from (`sink`) one port of `paths`. */
  private portPath(requester: string, paths: PortPaths, port: number, end: "memory" | "sink"): CompiledPath {
    const node = paths.ids[port] as string;
    const path = end === "memory" ? this.path(requester, node, end) : this.path(node, requester, end);
    (end === "memory" ? paths.toMemory : paths.fromMemory)[port] = path;
    return path;
  }

  /**
   * Splits `block`, at `offset` within its HBM stack, by pseudo-channel with the stack's address
   * mapping, calling `each(port, bytes, ranges)` per port in first-touched order.
   */
  split(
    block: MemoryBlock,
    offset: number,
    each: (port: number, bytes: number, ranges: PortRanges) => void,
  ): void {
    const ranges = new BlockRanges(block, offset, this.map);
    for (const share of splitByPseudoChannel(block, offset, this.map)) {
      each(share.lane, share.bytes, { ranges, port: share.lane });
    }
  }

  /**
   * Reads `block` (HBM or SRAM) into `requester` (a node id: a PE_DMA, M_CPU.DMA or `host`): one
   * request per pseudo-channel touched, each answered by a response carrying that PC's bytes.
   * Adds to `transfer`; the caller seals it.
   */
  read(requester: string, block: MemoryBlock, transfer: Transfer, what = "read"): void {
    this.move("read", requester, block, transfer, what);
  }

  /** Writes `block` (HBM or SRAM) from `requester`: one packet per pseudo-channel touched. */
  write(requester: string, block: MemoryBlock, transfer: Transfer, what = "write"): void {
    this.move("write", requester, block, transfer, what);
  }

  /** One packet per port `block` touches (a 0-byte request answered with the bytes, or the bytes), launched grouped. */
  private move(
    kind: "read" | "write",
    requester: string,
    block: MemoryBlock,
    transfer: Transfer,
    what: string,
  ): void {
    const located = this.locate(block, what);
    const paths = this.portPaths(requester, located);
    const { lanes, bytes } = located.split;
    const read = kind === "read";
    const parts: Packet[] = [];
    for (let i = 0; i < lanes.length; i++) {
      const port = lanes[i] as number;
      const share = bytes[i] as number;
      const request = paths.toMemory[port] ?? this.portPath(requester, paths, port, "memory");
      const response = read
        ? (paths.fromMemory[port] ?? this.portPath(requester, paths, port, "sink"))
        : null;
      transfer.expect();
      transfer.bytes += share;
      const packet = read
        ? new Packet(request, 0, transfer, response, share, null)
        : new Packet(request, share, transfer, null, 0, null);
      packet.ranges = located.ranges;
      parts.push(packet);
    }
    this.launchGrouped(paths, lanes, parts, read);
  }

  /**
   * Launches the one-port packets of a block: those whose paths share every stop but the
   * memory's end (and, for reads, whose responses do too) travel as one bundle; a packet alone
   * in its group travels as itself. Groups leave in the order of their first packet.
   */
  private launchGrouped(paths: PortPaths, ports: readonly number[], parts: Packet[], read: boolean): void {
    if (parts.length === 1) {
      this.launch(parts[0] as Packet);
      return;
    }
    // Groups by number, in the order of their first packet (groups are few: the memory's sides).
    const byGroup: Packet[][] = [];
    const order: Packet[][] = [];
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as Packet;
      const port = ports[i] as number;
      const group = paths.groupOf[read ? 1 : 0][port] ?? this.groupOf(paths, port, read);
      if (group < 0) {
        order.push([part]);
        continue;
      }
      let members = byGroup[group];
      if (members === undefined) {
        members = [];
        byGroup[group] = members;
        order.push(members);
      }
      members.push(part);
    }
    for (const members of order) {
      if (members.length === 1) {
        this.launch(members[0] as Packet);
        continue;
      }
      let bytes = 0;
      let returnBytes = 0;
      for (const part of members) {
        bytes += part.bytes;
        returnBytes += part.returnBytes;
      }
      const bundle = Packet.bundle(members, bytes, returnBytes, false);
      for (const part of members) part.bundle = bundle;
      this.launch(bundle);
    }
  }

  /**
   * The bundle group of a port's packets: ports whose request paths have the same stops and links
   * up to the memory's last hop (and whose response paths the same from the first shared stop)
   * share a group; -1 when the memory does not take batches.
   */
  private groupOf(paths: PortPaths, port: number, read: boolean): number {
    const request = paths.toMemory[port] as CompiledPath;
    const last = request.stops[request.stops.length - 1] as Stop;
    const groups = paths.groupOf[read ? 1 : 0];
    if ((last.component as Partial<BatchTarget> | null)?.acceptsBatches !== true) {
      groups[port] = -1;
      return -1;
    }
    const key = (stops: readonly Stop[]) =>
      stops
        .map((stop) => `${stop.component?.id ?? ""}<${stop.links.map((link) => link.edge.src).join(",")}`)
        .join(">");
    let text = key(request.stops.slice(0, -1));
    if (read) {
      const response = paths.fromMemory[port] as CompiledPath;
      text += `|${key(response.stops.slice(2))}|${(response.stops[1] as Stop).component?.id ?? ""}`;
    }
    let group = paths.groupIds.get(text);
    if (group === undefined) {
      group = paths.groupIds.size;
      paths.groupIds.set(text, group);
    }
    groups[port] = group;
    return group;
  }

  /** Sends a control message from node `src` to the component `dst` through the fabric. */
  send(src: string, dst: string, message: Message, bytes = 0): void {
    this.launch(new Packet(this.path(src, dst, "deliver"), bytes, null, null, 0, message));
  }

  /**
   * Sends `bytes` from node `src` to node `dst` and reports the tail's arrival to `transfer` (a
   * completion notice); the transfer must already count this packet (`expect()` when it was set up).
   */
  notify(src: string, dst: string, transfer: Transfer, bytes = 0): void {
    this.launch(new Packet(this.path(src, dst, "sink"), bytes, transfer, null, 0, null));
  }

  /** Sends a packet from its source stop (the source's overhead is not paid). */
  private launch(packet: Packet): void {
    const source = packet.path.stops[0] as Stop;
    packet.tailNs = this.env.now - source.overheadNs;
    // Forwarding from the source: `from` is only used for its environment.
    packet.forward(this.envHolder);
  }

  private readonly envHolder = { env: this.env } as Component;
}

/** Routes the fabric compiles are not cached by the graph: the compiled paths are. */
const UNKEPT = { keep: false } as const;

/** Blocks whose split {@link Fabric} keeps. */
const SPLIT_CACHE_SIZE = 4096;

/** The ports a block touches (lanes in first-touched order) and its bytes on each. */
interface Split {
  readonly lanes: readonly number[];
  readonly bytes: readonly number[];
}

const SINGLE_LANE: readonly number[] = [0];

/** A checked block: its cube, whether it is SRAM, its split and its address ranges. */
interface Located {
  /** `sip * cubes + cube`. */
  readonly cubeKey: number;
  readonly sram: boolean;
  readonly split: Split;
  readonly ranges: BlockRanges;
}

/** Paths between one requester and the ports of one memory, compiled on first use. */
interface PortPaths {
  /** The node id of each port (HBM pseudo-channels by lane, or the SRAM). */
  readonly ids: readonly string[];
  readonly toMemory: (CompiledPath | undefined)[];
  readonly fromMemory: (CompiledPath | undefined)[];
  /** The bundle group of each port's writes and reads (-1: never bundled), see `Fabric.groupOf`. */
  readonly groupOf: readonly [(number | undefined)[], (number | undefined)[]];
  readonly groupIds: Map<string, number>;
}

function pastEnd(what: string, block: MemoryBlock, memory: string, capacity: number): KbError {
  return new KbError(
    "MACHINE_INVALID_COMMAND",
    `${what}: block at 0x${block.address.toString(16)} (${block.rows} x ${block.rowBytes} B, stride ${block.stride}) runs past the end of ${memory} (${capacity} bytes).`,
  );
}
