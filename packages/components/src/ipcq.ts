import { type Event, Store } from "@kb/des";
import { KbError } from "@kb/errors";
import { tcmAddress } from "@kb/topology";
import type { Machine } from "./machine.js";
import { Transfer } from "./transfer.js";

/**
 * The directions of a PE's inter-PE communication queues (ADR-0046 D3.10): its neighbours in the
 * cube's PE grid (PE p at row floor(p / cols), column p % cols, no wrap-around), the PE with the
 * same index in the next / previous cube of its SIP (a ring), and in the next / previous SIP.
 */
export const IPCQ_DIRECTIONS = [
  "east",
  "west",
  "north",
  "south",
  "cube_next",
  "cube_prev",
  "sip_next",
  "sip_prev",
] as const;

/** A queue direction. */
export type IpcqDirection = (typeof IPCQ_DIRECTIONS)[number];

/** The direction a payload arrives from: what PE A sends "east" its east neighbour receives from "west". */
export function oppositeDirection(direction: IpcqDirection): IpcqDirection {
  return OPPOSITE[direction];
}

const OPPOSITE: Readonly<Record<IpcqDirection, IpcqDirection>> = {
  east: "west",
  west: "east",
  north: "south",
  south: "north",
  cube_next: "cube_prev",
  cube_prev: "cube_next",
  sip_next: "sip_prev",
  sip_prev: "sip_next",
};

/** Queue geometry of a PE (pe_cpu params). */
export interface IpcqConfig {
  readonly slots: number;
  readonly slotBytes: number;
  /** Fixed latency of reading a slot, ns, plus bytes / readGbs. */
  readonly slotReadNs: number;
  readonly readGbs: number;
  /** TCM byte offset of the PE's slot region (directions x slots x slotBytes). */
  readonly regionOffset: number;
}

/** A payload in flight or waiting in a receiver's queue. */
export interface IpcqPayload {
  readonly from: string;
  readonly bytes: number;
  /** Receiver-side slot address (TCM). */
  readonly slot: number;
  /** Phase 1: real bytes were delivered into the slot (the sender's data was not pending). */
  readonly hasData: boolean;
}

/** One direction's queue at a receiver, and the sender's credits for it. */
interface Queue {
  /** Delivered payloads, FIFO. */
  readonly arrived: Store<IpcqPayload>;
  /** Free slots the sender may fill (credit-based flow control), held at the sender. */
  readonly credits: Store<true>;
  /** Next slot index to fill (rotates). */
  next: number;
  /** A return-slot receive's slot the kernel may still read: its credit waits for the next receive. */
  held: string | null;
  /** Sequence number of the next send on this channel. */
  sent: number;
  /** Sequence number of the next payload to hand over to `arrived`. */
  handed: number;
  /** Payloads that arrived ahead of one sent before them, by sequence number. */
  readonly early: Map<number, IpcqPayload>;
}

/** Phase-1 data hooks (the runtime's memory store): what a send delivers into a slot. */
export interface IpcqDataHooks {
  /** The payload's bytes landed in the receiver's slot at `slot`. */
  deliver(slot: number, bytes: Uint8Array): void;
}

/**
 * The IPCQ network of a machine: per (receiver PE, inbound direction) a queue of `slots` slots in
 * the receiver's TCM, with credits held by the sender. A send waits for a credit, then the bytes
 * move from the sender's PE_DMA through the fabric (the topology's route, contending with other
 * traffic) into the slot while the sender goes on; they count as arrived when the tail does and every payload
 * sent ahead of them on the channel has (in-order delivery, `handOver`). A receive waits for the queue,
 * pays the slot read (`slotReadNs + bytes / readGbs`, skipped by the diagnostic no-consume
 * receive), optionally copies to a destination, and returns the slot's credit to the sender
 * (after the route's latency, see `returnCredit`): at once after a copy to a destination, at the next receive from that
 * direction (or the program's end) when the kernel reads the payload in its slot, so the slot
 * cannot be overwritten while the kernel still uses it.
 */
export class IpcqNetwork {
  /** Set by the runtime to move real bytes in phase 1. */
  hooks: IpcqDataHooks | null = null;
  private readonly queues = new Map<string, Queue>();
  private readonly rows: number;
  private readonly cols: number;
  private readonly cubes: number;
  private readonly sips: number;

  constructor(private readonly machine: Machine) {
    const topology = machine.graph.topology;
    this.rows = topology.cube.noc.rows;
    this.cols = topology.cube.noc.cols;
    this.cubes = topology.sip.cubes;
    this.sips = topology.system.sips;
  }

  /** The network of `machine` (one per machine). */
  static of(machine: Machine): IpcqNetwork {
    return machine.shared("ipcq", () => new IpcqNetwork(machine));
  }

  /** The PE in `direction` of PE `pe` (`sip0.cube1.pe3`); a located error when there is none. */
  neighbour(pe: string, direction: string, where: string): string {
    const node = this.machine.graph.node(pe);
    let sip = node.sip as number;
    let cube = node.cube as number;
    let index = node.pe as number;
    const row = Math.floor(index / this.cols);
    const col = index % this.cols;
    const none = (why: string) =>
      new KbError("MACHINE_INVALID_COMMAND", `${where}: PE ${pe} has no "${direction}" neighbour (${why}).`);
    switch (direction) {
      case "east":
        if (col + 1 >= this.cols) throw none(`it is in the last of ${this.cols} grid columns`);
        index++;
        break;
      case "west":
        if (col === 0) throw none("it is in grid column 0");
        index--;
        break;
      case "north":
        if (row === 0) throw none("it is in grid row 0");
        index -= this.cols;
        break;
      case "south":
        if (row + 1 >= this.rows) throw none(`it is in the last of ${this.rows} grid rows`);
        index += this.cols;
        break;
      case "cube_next":
      case "cube_prev":
        if (this.cubes < 2) throw none("its SIP has one cube");
        cube = (cube + (direction === "cube_next" ? 1 : this.cubes - 1)) % this.cubes;
        break;
      case "sip_next":
      case "sip_prev":
        if (this.sips < 2) throw none("the system has one SIP");
        sip = (sip + (direction === "sip_next" ? 1 : this.sips - 1)) % this.sips;
        break;
      default:
        throw new KbError(
          "MACHINE_INVALID_COMMAND",
          `${where}: unknown IPCQ direction ${JSON.stringify(direction)}; directions: ${IPCQ_DIRECTIONS.join(", ")}.`,
        );
    }
    return `sip${sip}.cube${cube}.pe${index}`;
  }

  /** The queue a send from `sender` to `direction` fills. */
  outbound(
    sender: string,
    direction: string,
    config: IpcqConfig,
    where: string,
  ): { receiver: string; queue: Queue; inbound: IpcqDirection } {
    const receiver = this.neighbour(sender, direction, where);
    const inbound = OPPOSITE[direction as IpcqDirection];
    return { receiver, inbound, queue: this.queue(receiver, inbound, config) };
  }

  /** The queue of `receiver` for payloads arriving from `direction`. */
  queue(receiver: string, direction: IpcqDirection, config: IpcqConfig): Queue {
    const key = `${receiver}<${direction}`;
    let queue = this.queues.get(key);
    if (queue === undefined) {
      const env = this.machine.env;
      const credits = new Store<true>(env, { name: `${key} credits` });
      for (let i = 0; i < config.slots; i++) credits.tryPut(true);
      queue = {
        arrived: new Store<IpcqPayload>(env, { name: `${key} slots` }),
        credits,
        next: 0,
        held: null,
        sent: 0,
        handed: 0,
        early: new Map(),
      };
      this.queues.set(key, queue);
    }
    return queue;
  }

  /** TCM address of slot `index` of `receiver`'s queue from `direction`. */
  slotAddress(receiver: string, direction: IpcqDirection, index: number, config: IpcqConfig): number {
    const node = this.machine.graph.node(receiver);
    const d = IPCQ_DIRECTIONS.indexOf(direction);
    const offset = config.regionOffset + (d * config.slots + index) * config.slotBytes;
    return tcmAddress(node.sip as number, node.cube as number, node.pe as number, offset);
  }

  /**
   * Sends `bytes` from `src` (the sender's TCM) to `direction`: waits for a credit (a free slot at
   * the receiver), then hands the payload to the fabric and returns the event of its arrival. The
   * sender goes on at once (the PE_DMA moves the bytes; the program's end waits for the arrival):
   * the payload is read at this instant, so what the sender does next cannot change it.
   */
  *send(
    sender: string,
    direction: string,
    src: number,
    bytes: number,
    data: Uint8Array | null,
    config: IpcqConfig,
    where: string,
  ): Generator<Event<unknown>, Event<unknown>, unknown> {
    if (!(Number.isInteger(bytes) && bytes > 0 && bytes <= config.slotBytes)) {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `${where}: an IPCQ payload is 1 to ${config.slotBytes} bytes (the slot size, pe_cpu param ipcq_slot_bytes), got ${bytes}; send larger data in chunks.`,
      );
    }
    const { receiver, inbound, queue } = this.outbound(sender, direction, config, where);
    const env = this.machine.env;
    const credit = queue.credits.tryGet();
    if (credit === undefined) yield queue.credits.get();
    const slot = this.slotAddress(receiver, inbound, queue.next, config);
    queue.next = (queue.next + 1) % config.slots;
    // The op record starts now, when the payload is read from the sender's TCM: phase 2 copies
    // it at this point of the log (the send snapshot rule: later inbound data cannot change it).
    const logger = this.machine.opLogger;
    const opId =
      logger === null
        ? -1
        : logger.start(env.now, `${sender}.pe_dma`, "memory", "ipcq_send", {
            src_addr: src,
            dst_addr: slot,
            nbytes: bytes,
            src_space: "tcm",
            dst_space: "tcm",
          });
    const transfer = new Transfer(env);
    transfer.expect();
    transfer.bytes += bytes;
    this.machine.fabric.notify(`${sender}.pe_dma`, `${receiver}.pe_dma`, transfer, bytes);
    transfer.seal();
    const seq = queue.sent++;
    transfer.done.addCallback(() => {
      if (logger !== null) logger.end(opId, env.now);
      if (data !== null) this.hooks?.deliver(slot, data);
      this.handOver(queue, seq, { from: sender, bytes, slot, hasData: data !== null });
    });
    return transfer.done;
  }

  /**
   * In-order delivery at the receiver's network interface: payload `seq` of a channel arrived (its
   * tail is in its slot). It joins the queue once every payload sent ahead of it on the channel has
   * (message k is handed over at max(arrival_k, handover_{k-1})): a fabric with virtual channels
   * lets a short message overtake a long one sent just before it, but a queue's receives take
   * their payloads in send order.
   */
  private handOver(queue: Queue, seq: number, payload: IpcqPayload): void {
    if (seq !== queue.handed) {
      queue.early.set(seq, payload);
      return;
    }
    // In order (the usual case): hand it over, then any that arrived early and are next now.
    queue.handed++;
    queue.arrived.tryPut(payload);
    if (queue.early.size === 0) return;
    for (let next = queue.early.get(queue.handed); next !== undefined; next = queue.early.get(queue.handed)) {
      queue.early.delete(queue.handed);
      queue.handed++;
      queue.arrived.tryPut(next);
    }
  }

  /**
   * Receives from `direction` at `receiver`: waits for a payload, pays the slot read unless
   * `consume` is false, copies it to `dst` when given, returns the credit. Ends with the payload.
   */
  *recv(
    receiver: string,
    direction: string,
    bytes: number,
    dst: number | null,
    consume: boolean,
    config: IpcqConfig,
    where: string,
  ): Generator<Event<unknown>, IpcqPayload, unknown> {
    const sender = this.neighbour(receiver, direction, where);
    const queue = this.queue(receiver, direction as IpcqDirection, config);
    const env = this.machine.env;
    // The previous return-slot payload of this queue is done with now: free its slot.
    this.release(receiver, queue);
    let payload = queue.arrived.tryGet();
    if (payload === undefined) payload = (yield queue.arrived.get()) as IpcqPayload;
    if (payload.bytes !== bytes) {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `${where}: received ${payload.bytes} bytes from ${payload.from} (${direction}), but the recv expects ${bytes}; shapes and dtypes of send and recv must agree.`,
      );
    }
    if (consume) {
      const logger = dst === null ? null : this.machine.opLogger;
      const opId =
        logger === null
          ? -1
          : logger.start(env.now, `${receiver}.pe_dma`, "memory", "ipcq_recv", {
              src_addr: payload.slot,
              dst_addr: dst as number,
              nbytes: bytes,
              src_space: "tcm",
              dst_space: "tcm",
            });
      const readNs = config.slotReadNs + bytes / config.readGbs;
      if (readNs > 0) yield env.timeout(readNs);
      if (logger !== null) logger.end(opId, env.now);
    }
    // A copied-out slot is free again at once; a slot the kernel reads in place (return_slot)
    // stays its until its next receive from this direction or the end of its program.
    if (dst === null && consume) queue.held = sender;
    else this.returnCredit(receiver, sender, queue);
    return payload;
  }

  /** Frees the slots `receiver` still held (at the end of its program). */
  releaseAll(receiver: string): void {
    for (const direction of IPCQ_DIRECTIONS) {
      const queue = this.queues.get(`${receiver}<${direction}`);
      if (queue !== undefined) this.release(receiver, queue);
    }
  }

  private release(receiver: string, queue: Queue): void {
    if (queue.held === null) return;
    const sender = queue.held;
    queue.held = null;
    this.returnCredit(receiver, sender, queue);
  }

  /**
   * The slot's credit travels back to the sender as link-level flow control: the route's latency,
   * no bandwidth and no queueing behind data (credits ride a separate virtual channel, as PCIe
   * flow-control DLLPs and UCIe credits do). Were they charged as packets, a credit would wait
   * behind the data its sender has queued on the same egress link, and a ring that streams both
   * ways through each PE port would be held to the queue's depth, not the link's bandwidth.
   */
  private returnCredit(receiver: string, sender: string, queue: Queue): void {
    const path = this.machine.fabric.path(`${receiver}.pe_dma`, `${sender}.pe_dma`, "sink");
    this.machine.env.timeout(path.latencyNs).addCallback(() => queue.credits.tryPut(true));
  }
}

/** Reads the IPCQ geometry from pe_cpu params (`ipcq_slots`, `ipcq_slot_bytes`, ...) and the TCM capacity. */
export function ipcqConfigOf(params: Record<string, unknown>, tcmCapacity: number): IpcqConfig {
  const slots = Number(params.ipcq_slots);
  const slotBytes = Number(params.ipcq_slot_bytes);
  return {
    slots,
    slotBytes,
    slotReadNs: Number(params.ipcq_slot_read_ns),
    readGbs: Number(params.ipcq_read_gbs),
    regionOffset: tcmCapacity - ipcqRegionBytes(slots, slotBytes),
  };
}

/** Bytes of a PE's IPCQ slot region: every direction's slots, at the end of its TCM. */
export function ipcqRegionBytes(slots: number, slotBytes: number): number {
  return IPCQ_DIRECTIONS.length * slots * slotBytes;
}
