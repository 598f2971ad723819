import type { MemoryRequest } from "@kb/components";
import type { Environment } from "@kb/des";
import type { HbmAddressMap } from "@kb/topology";
import type { LocateCache } from "./locate-cache.js";
import type { RequestPort } from "./request-port.js";
import { type Sleeper, WakeHub } from "./wake-hub.js";

const INF = Number.POSITIVE_INFINITY;
const READ = 0;
const WRITE = 1;

/** A request held for its queue's next batch. */
interface Held {
  readonly request: MemoryRequest;
  /** The pseudo-channel (its index in the queue's cores), its arrival rank in the queue. */
  readonly core: number;
  readonly seq: number;
  /** Its bursts, and the bank and row of its first burst (FR-FCFS looks at that one). */
  readonly bursts: number;
  readonly bank: number;
  readonly row: number;
  /** When it arrived, and the earliest its commands may issue (arrival + front end). */
  readonly since: number;
  readonly ready: number;
}

/**
 * The read and write queues of `hbm_ctrl_v2` under `closed_form: batch` (a pseudo-channel's, or
 * under queue_scope channel its channel's, serving the channel's pseudo-channels): the closed form
 * of `closed_form: request` ({@link RequestPort}: each request scheduled whole against the state
 * its predecessors on its pseudo-channel left), with the order of the requests decided per batch.
 *
 * Arrivals are held until the column frontier of a pseudo-channel of the queue (its latest column
 * command decided; the earliest of them) comes within `lead` (decision_horizon_ns) of the clock,
 * or the queue holds a queue's worth of bursts of their kind: then one timer decides the whole
 * batch. A read is placed from its arrival (its ACT may fall while the column bus was busy, before
 * the batch), a write from the batch that drains it. Write drain by
 * batch (Ramulator's set_write_mode, the held bursts as the queue's occupancy): in read mode the
 * writes stay held while a read waits and they are at or below write_high; in write mode (entered
 * above write_high, or with no read waiting) writes are scheduled until fewer than write_low
 * remain and a read waits; then every held read is. FR-FCFS within a kind: the oldest held
 * request whose first burst's row is open (as the requests decided so far left it) goes first,
 * else the oldest. Each request is answered at its batch. docs/latency-model.md, section 3,
 * `closed_form: batch`.
 */
export class BatchQueue implements Sleeper {
  private readonly held: [Held[], Held[]] = [[], []];
  /** Bursts held, per kind. */
  private readonly heldBursts = [0, 0];
  private mode = READ;
  private drainSince = 0;
  private drainCore = 0;
  private seq = 0;
  private wakeAt = INF;
  private readonly high: number;
  private readonly low: number;

  constructor(
    readonly cores: readonly RequestPort[],
    private readonly env: Environment,
    private readonly map: HbmAddressMap | null,
    private readonly cache: LocateCache,
    private readonly hub: WakeHub,
    readonly index: number,
    /** How long before the column frontier a batch is decided. */
    private readonly lead: number,
  ) {
    const cfg = (cores[0] as RequestPort).config;
    this.high = cfg.writeHigh * cfg.writeQueue;
    this.low = cfg.writeLow * cfg.writeQueue;
  }

  /** A request of pseudo-channel `core` arrives (now): held for the next batch. */
  arrive(core: number, request: MemoryRequest): void {
    const now = this.env.now;
    const cfg = (this.cores[core] as RequestPort).config;
    const kind = request.kind === "write" ? WRITE : READ;
    const burst = cfg.burstBytes;
    let ranges = request.ranges;
    if (ranges.length === 0) ranges = [0, request.bytes];
    let bursts = 0;
    let firstBurst = -1;
    for (let i = 0; i + 1 < ranges.length; i += 2) {
      const offset = ranges[i] as number;
      const bytes = ranges[i + 1] as number;
      if (bytes <= 0) continue;
      const first = Math.floor(offset / burst);
      if (firstBurst < 0) firstBurst = first;
      bursts += Math.floor((offset + bytes - 1) / burst) - first + 1;
    }
    let bank = 0;
    let row = 0;
    if (this.map !== null && firstBurst >= 0) {
      this.cache.locate(this.map, firstBurst, burst, cfg.bankGroups, cfg.banksPerGroup);
      bank = this.cache.bank;
      row = this.cache.row;
    }
    const ready = Math.max(now, kind === WRITE ? request.tailNs : now) + cfg.timing.frontend;
    const seq = this.seq++;
    (this.held[kind] as Held[]).push({ request, core, seq, bursts, bank, row, since: now, ready });
    const heldNow = (this.heldBursts[kind] as number) + bursts;
    this.heldBursts[kind] = heldNow;
    const cap = kind === READ ? cfg.readQueue : cfg.writeQueue;
    // A full queue decides at once; else at the frontier's lead (not before the front end).
    this.wake(heldNow >= cap ? now : Math.max(ready, this.frontier() - this.lead));
  }

  /** The earliest column frontier of the queue's pseudo-channels. */
  private frontier(): number {
    let f = INF;
    for (const core of this.cores) if (core.frontier < f) f = core.frontier;
    return f;
  }

  private wake(at: number): void {
    if (at < this.wakeAt) {
      this.wakeAt = at;
      this.hub.wake(this.index, at);
    }
  }

  /** Bursts a request of `kind` to pseudo-channel `core` can put into its queue now. */
  room(core: number, kind: number): number {
    return (this.cores[core] as RequestPort).room(kind) - (this.heldBursts[kind] as number);
  }

  /** The hub's call: decide the batch. */
  wakeUp(now: number): void {
    this.wakeAt = INF;
    const rq = this.heldBursts[READ] as number;
    let wq = this.heldBursts[WRITE] as number;
    if (this.mode === READ ? wq > this.high || (rq === 0 && wq > 0) : rq > 0 && (wq < this.low || wq === 0)) {
      this.flip(now);
    }
    if (this.mode === WRITE) {
      const writes = this.held[WRITE];
      while (writes.length > 0 && (wq >= this.low || rq === 0)) wq -= this.decide(writes, now);
      if (rq > 0) this.flip(now);
    }
    if (this.mode === READ) {
      const reads = this.held[READ];
      while (reads.length > 0) this.decide(reads, now);
    }
    // Writes still held: look again at the frontier's lead (then, unless a read came, a drain).
    if (this.held[WRITE].length > 0) this.wake(Math.max(now, this.frontier() - this.lead));
  }

  /** Switches between read and write mode at `now` (the drain's time counted on its first pseudo-channel). */
  private flip(now: number): void {
    this.mode = 1 - this.mode;
    if (this.mode === WRITE) {
      this.drainSince = now;
      const first = this.held[WRITE][0];
      this.drainCore = first === undefined ? 0 : first.core;
    } else {
      const core = this.cores[this.drainCore] as RequestPort;
      core.drainNs += now - this.drainSince;
    }
  }

  /**
   * Schedules the next request of `list` (FR-FCFS: the oldest whose first burst's row is open on
   * its pseudo-channel, else the oldest), answers it, and returns its bursts.
   */
  private decide(list: Held[], now: number): number {
    let pick = 0;
    for (let i = 0; i < list.length; i++) {
      const h = list[i] as Held;
      if ((this.cores[h.core] as RequestPort).rowOpen(h.bank, h.row)) {
        pick = i;
        break;
      }
    }
    const h = list[pick] as Held;
    list.splice(pick, 1);
    const kind = h.request.kind === "write" ? WRITE : READ;
    this.heldBursts[kind] = (this.heldBursts[kind] as number) - h.bursts;
    const core = this.cores[h.core] as RequestPort;
    // A read may issue from its arrival (its ACT while the column bus was busy); a write held
    // for a drain from the drain's start.
    const ready = kind === READ ? h.ready : Math.max(h.ready, now);
    h.request.complete(core.serve(h.request, ready, h.since));
    return h.bursts;
  }
}

/** A stack's batch queues, addressed by port: `arrive` holds a request in its port's queue, `room` is what that queue takes. */
export interface BatchQueues {
  arrive(port: number, request: MemoryRequest): void;
  room(port: number, kind: number): number;
}

/**
 * The batch queues over a stack's request ports (one per pseudo-channel, or per channel under
 * queue_scope channel; one DES timer for all, through a {@link WakeHub}).
 */
export function batchQueues(
  env: Environment,
  map: HbmAddressMap | null,
  cache: LocateCache,
  cores: readonly RequestPort[],
): BatchQueues {
  const queues: BatchQueue[] = [];
  const cfg = cores[0]?.config;
  const per = cfg?.channelQueues ? cfg.pseudoChannels : 1;
  const hub = new WakeHub(env, queues, Math.ceil(cores.length / per));
  const queueOf: BatchQueue[] = [];
  for (let first = 0; first < cores.length; first += per) {
    const group = cores.slice(first, first + per);
    // decision_horizon_ns: a batch is decided that long before the column bus frees.
    const queue = new BatchQueue(
      group,
      env,
      map,
      cache,
      hub,
      queues.length,
      (group[0] as RequestPort).config.horizon,
    );
    queues.push(queue);
    for (let i = 0; i < group.length; i++) queueOf.push(queue);
  }
  const at = (port: number): BatchQueue => {
    const queue = queueOf[port];
    if (queue === undefined) throw new RangeError(`hbm_ctrl_v2: no port ${port} (0 .. ${cores.length - 1}).`);
    return queue;
  };
  return {
    arrive: (port, request) => at(port).arrive(port % per, request),
    room: (port, kind) => at(port).room(port % per, kind),
  };
}
