import type { Environment, Event } from "@kb/des";
import type { TopologyEdge } from "@kb/topology";
import type { BlockRanges } from "./block-split.js";
import type { Component } from "./component.js";
import type { HopPacket } from "./forwarding.js";
import { Message, putInto } from "./message.js";
import type { Transfer } from "./transfer.js";

/**
 * A directed link as a bandwidth resource. Transfers are charged in the order they reach it
 * (FIFO): a packet of B bytes whose head reaches the link at `h` starts at `max(h, freeAt)` and
 * occupies it for `B / bw` ns; its tail leaves no earlier than its own tail arrived (a slow
 * source cannot be sped up by a fast link). Two concurrent transfers therefore share the
 * bandwidth: each sees the link for half the time.
 */
export class Link {
  /** Simulated time (ns) until which the link's bandwidth is already promised. */
  freeAt = 0;
  /** ns of bandwidth charged (`sum(bytes / bw)`). */
  busyNs = 0;
  /** Bytes carried. */
  bytes = 0;
  /** Packets carried. */
  packets = 0;
  /** The topology edge. */
  readonly edge: TopologyEdge;
  /** ns per byte (1 / bandwidth in GB/s). */
  readonly nsPerByte: number;
  /** Latency in ns. */
  readonly latencyNs: number;

  constructor(edge: TopologyEdge) {
    this.edge = edge;
    this.nsPerByte = 1 / edge.bwGbs;
    this.latencyNs = edge.latencyNs;
  }
}

/** A stop of a compiled path: a component that services the packet, or the end of the path. @internal */
export interface Stop {
  /** The component at this stop; null at the path's source when it is not a component (the host) or at a sink. */
  readonly component: Component | null;
  /** Lane of the component (the HBM pseudo-channel), else 0. */
  readonly lane: number;
  /** First-flit (or forward) overhead the component adds, ns. */
  readonly overheadNs: number;
  /** The links from the previous stop to this one (through pass-through nodes such as HBM channels). */
  readonly links: readonly Link[];
  /** Sum of the overheads of the pass-through nodes between the previous stop and this one. */
  readonly passOverheadNs: number;
  /** The component's admission check when it has finite inputs (a forwarding model with `admit`), else null. */
  readonly gate: Gate | null;
}

/**
 * A stop that may refuse a packet before its head leaves the previous stop (finite input
 * buffers, `ForwardingModel.admit`). @internal
 */
export interface Gate {
  /**
   * Whether `packet`, about to leave `from` for this stop, may go now. When not, the gate keeps
   * it (sets `packet.waitingAt`) and calls `packet.forward(from)` itself once it admits it.
   */
  admit(packet: Packet, from: Component): boolean;
}

/** How a path ends. */
export type PathEnd =
  /** The last stop is a memory (an HBM pseudo-channel lane, SRAM) that services the packet. */
  | "memory"
  /** The packet ends at its requester: the transfer learns its tail arrival time at once. */
  | "sink"
  /** The packet's payload message is put into the last stop's component when its tail arrives. */
  | "deliver";

/** A route compiled into stops: which components service a packet and which links lie between. */
export class CompiledPath {
  constructor(
    readonly src: string,
    readonly dst: string,
    readonly stops: readonly Stop[],
    readonly end: PathEnd,
    /** The route's formula latency (ns) and bottleneck (GB/s), for reports. */
    readonly latencyNs: number,
    readonly minBwGbs: number,
  ) {}
}

/** The ranges of one packet: its port's share of a block. @internal */
export interface PortRanges {
  readonly ranges: BlockRanges;
  readonly port: number;
}

/**
 * Head (`[0]`) and tail (`[1]`) times the last {@link cross} computed: a typed array, so storing
 * a double allocates nothing (a module-level `let` would box every value it is given).
 */
const crossed = new Float64Array(2);

/**
 * Moves `bytes` from a stop to `stop` over its links (section 2 of docs/latency-model.md): the
 * head may leave at `head`, the tail reached the previous stop at `tailIn` and pays `overheadNs`
 * there. Charges the links and leaves the arrival head and tail in `crossed`. With `pacedTail`
 * (>= 0: the stop's model paced the flits, `context.send`'s `tailNs`) the tail left at that time
 * and the links add only their latency (no wait for earlier packets' bytes; the model moved the
 * flits no faster than the links).
 */
function cross(
  stop: Stop,
  overheadNs: number,
  head: number,
  tailIn: number,
  bytes: number,
  pacedTail = -1,
): void {
  const paced = pacedTail >= 0;
  let tail = paced ? pacedTail : tailIn + overheadNs;
  if (tail < head) tail = head;
  const links = stop.links;
  for (let i = 0; i < links.length; i++) {
    const link = links[i] as Link;
    // A paced packet's flits left at the model's pace, interleaved with others': no FIFO wait,
    // and its tail is the model's.
    const start = paced ? head : Math.max(head, link.freeAt);
    const cost = bytes * link.nsPerByte;
    const end = paced ? tail : start + cost;
    if (bytes > 0) {
      if (!paced || end > link.freeAt) link.freeAt = end;
      link.busyNs += cost;
      link.bytes += bytes;
    }
    link.packets++;
    if (end > tail) tail = end;
    head = start + link.latencyNs;
    tail += link.latencyNs;
  }
  crossed[0] = head + stop.passOverheadNs;
  crossed[1] = tail + stop.passOverheadNs;
}

/**
 * A unit of fabric traffic: a read request (no payload; the memory answers with a response of
 * `returnBytes`), a write or response carrying `bytes`, or a control message carrying a payload
 * message. Moves stop to stop with cut-through timing (see {@link Fabric}).
 *
 * A **bundle** carries the packets of one block to (or from) several ports of one memory whose
 * paths share every stop but the memory's end: it crosses the shared stops as one packet of their
 * bytes (one hop overhead, one link charge per hop), fans out to its ports on the last hop and
 * fans in on the first hop of the responses (docs/latency-model.md section 2).
 */
export class Packet extends Message {
  /** Index of the stop the packet is at (0 = its source). */
  stop = 0;
  /** Time the head may leave the current stop (ns); the current time if earlier. */
  departNs = 0;
  /** Time the tail reaches the current stop (ns). */
  tailNs = 0;
  /** When the current stop's model paced the flits itself: when the tail leaves it (ns), else -1. @internal */
  pacedTailNs = -1;
  /** For a read request or a write to a memory: its block's address ranges (the memory reads its port's). @internal */
  ranges: BlockRanges | null = null;
  /** For a bundle: the one-port packets it carries (null for a plain packet). @internal */
  parts: Packet[] | null = null;
  /** For a part of a request bundle: the bundle, so the memory can bundle the responses. @internal */
  bundle: Packet | null = null;
  /** A response bundle at its memory: its parts still have their own first links to cross. */
  private fanIn = false;
  /** The view the forwarding model of the packet's current stop was given, while it is there. @internal */
  hop: HopPacket | null = null;
  /** The gate holding the packet before its next stop (refused there), else null. @internal */
  waitingAt: Gate | null = null;

  constructor(
    public path: CompiledPath,
    /** Payload bytes (0 for a read request). */
    public bytes: number,
    /** The transfer to report to. */
    readonly transfer: Transfer | null,
    /** For a read request: the path the response takes and its size. */
    readonly response: CompiledPath | null,
    readonly returnBytes: number,
    /** For a control packet: the message delivered at the end. */
    readonly payload: Message | null,
  ) {
    super();
  }

  /**
   * A bundle of `parts`: plain packets of one transfer whose paths are alike but for the memory's
   * end. Requests and writes (at their source) carry `bytes` (0 for requests) and the responses'
   * `returnBytes`; responses (`fanIn`, at their memory) carry the sum of their bytes. @internal
   */
  static bundle(parts: Packet[], bytes: number, returnBytes: number, fanIn: boolean): Packet {
    const first = parts[0] as Packet;
    const bundle = new Packet(
      first.path,
      bytes,
      first.transfer,
      fanIn ? null : first.response,
      returnBytes,
      null,
    );
    bundle.parts = parts;
    bundle.fanIn = fanIn;
    return bundle;
  }

  get label(): string {
    const size = this.response !== null ? `read req ${this.returnBytes}B` : `${this.bytes}B`;
    return this.parts === null ? size : `${size} x${this.parts.length}`;
  }

  /** The component that services the packet at its current stop. */
  get here(): Stop {
    return this.path.stops[this.stop] as Stop;
  }

  /** Turns a serviced read request into its response, leaving the memory at `departNs`. @internal */
  becomeResponse(departNs: number, tailNs: number): void {
    this.path = this.response as CompiledPath;
    this.bytes = this.returnBytes;
    this.stop = 0;
    this.departNs = departNs;
    this.tailNs = tailNs;
  }

  forward(from: Component): Event<any> | null {
    const stops = this.path.stops;
    const next = this.stop + 1;
    if (next >= stops.length) return null; // serviced by its last stop (a memory)
    const gate = (stops[next] as Stop).gate;
    if (gate !== null && !gate.admit(this, from)) return null; // waits for room; the gate forwards it
    const env = from.env;
    const now = env.now;
    const parts = this.parts;
    const paced = this.pacedTailNs;
    this.pacedTailNs = -1;
    if (parts !== null && this.fanIn) {
      this.fanIn = false;
      this.gather(parts, now);
    } else if (parts !== null && next === stops.length - 1 && this.path.end === "memory") {
      return this.scatter(parts, env);
    } else {
      cross(
        stops[next] as Stop,
        this.here.overheadNs,
        Math.max(this.departNs, now),
        this.tailNs,
        this.bytes,
        paced,
      );
    }
    const head = crossed[0] as number;
    const tail = crossed[1] as number;
    const stop = stops[next] as Stop;
    this.stop = next;
    this.departNs = 0;
    this.tailNs = tail;
    if (next === stops.length - 1) {
      const end = this.path.end;
      if (end === "sink") {
        (this.transfer as Transfer).packetsDone(tail, parts === null ? 1 : parts.length);
        return null;
      }
      if (end === "deliver") {
        deliverAt(env, tail, stop.component as Component, this.payload as Message);
        return null;
      }
    }
    return deliverAt(env, head, stop.component as Component, this);
  }

  /**
   * Fan-in: a response bundle leaves its memory; each part crosses its own first links (its
   * channel's), and the bundle goes on from the first shared stop with the earliest head and the
   * latest tail of its parts.
   */
  private gather(parts: Packet[], now: number): void {
    let head = Number.POSITIVE_INFINITY;
    let tail = 0;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as Packet;
      cross(part.path.stops[1] as Stop, 0, Math.max(part.departNs, now), part.tailNs, part.bytes);
      if ((crossed[0] as number) < head) head = crossed[0] as number;
      if ((crossed[1] as number) > tail) tail = crossed[1] as number;
    }
    crossed[0] = head;
    crossed[1] = tail;
  }

  /**
   * Fan-out: a request or write bundle takes its last hop; each part crosses its own last links
   * with the bundle's head and tail, and the parts that arrive together reach the memory in one
   * batch.
   */
  private scatter(parts: Packet[], env: Environment): null {
    const here = this.here;
    const head = Math.max(this.departNs, env.now);
    const last = this.stop + 1;
    let batch: Packet[] = [];
    let batchHead = 0;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as Packet;
      cross(part.path.stops[last] as Stop, here.overheadNs, head, this.tailNs, part.bytes);
      part.stop = last;
      part.departNs = 0;
      part.tailNs = crossed[1] as number;
      if (batch.length > 0 && crossed[0] !== batchHead) {
        deliverAt(
          env,
          batchHead,
          (this.path.stops[last] as Stop).component as Component,
          new PacketBatch(batch),
        );
        batch = [];
      }
      batchHead = crossed[0] as number;
      batch.push(part);
    }
    deliverAt(env, batchHead, (this.path.stops[last] as Stop).component as Component, new PacketBatch(batch));
    return null;
  }
}

/**
 * A memory that takes the parts of a bundle as one {@link PacketBatch} in `enqueue` (every
 * `defineMemoryModel` memory). @internal
 */
export interface BatchTarget {
  readonly acceptsBatches: true;
}

/** Packets of one bundle that reach their memory together (see {@link BatchTarget}). @internal */
export class PacketBatch extends Message {
  constructor(readonly packets: Packet[]) {
    super();
  }

  get label(): string {
    return `${this.packets.length} requests`;
  }

  forward(): null {
    return null;
  }
}

/** Puts `message` into `target` at time `t`: now (with backpressure) or later (in flight). */
function deliverAt(env: Environment, t: number, target: Component, message: Message): Event<any> | null {
  if (t <= env.now) return putInto(target, message);
  const pending = pendingDeliveries.pop() ?? { target, message };
  pending.target = target;
  pending.message = message;
  env.timeout(t - env.now, pending).addCallback(deliverNow);
  return null;
}

interface PendingDelivery {
  target: Component;
  message: Message;
}

const pendingDeliveries: PendingDelivery[] = [];

function deliverNow(event: Event<PendingDelivery>): void {
  const pending = event.value;
  pending.target.enqueue(pending.message);
  pendingDeliveries.push(pending);
}
