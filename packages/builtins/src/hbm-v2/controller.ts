import type { MemoryRequest } from "@kb/components";
import type { Environment } from "@kb/des";
import type { HbmAddressMap } from "@kb/topology";
import {
  EPS,
  P_ACTS,
  P_OPEN,
  P_RD_BURSTS,
  P_RD_CONF,
  P_RD_HIT,
  P_RD_MISS,
  P_REF_PENDING,
  P_REFS,
  P_RQ_MAX,
  P_WQ_MAX,
  P_WR_BURSTS,
  P_WR_CONF,
  P_WR_HIT,
  P_WR_MISS,
  R_FIRST,
  R_LAST,
  R_LEFT,
  R_STRIDE,
  READ,
  WRITE,
} from "./layout.js";
import type { LocateCache } from "./locate-cache.js";
import type { HbmCtrlV2Config } from "./params.js";
import { PortScheduler, STOP_PEERS, STOP_TARGET } from "./scheduler.js";
import type { Sleeper, WakeHub } from "./wake-hub.js";

const INF = Number.POSITIVE_INFINITY;

/** Counters of one pseudo-channel (they include commands already planned ahead of the clock). */
export interface HbmPortStats {
  readonly readBursts: number;
  readonly writeBursts: number;
  /** Runs of read bursts by their first command: row hit, miss (closed bank), conflict (other row open). */
  readonly readHits: number;
  readonly readMisses: number;
  readonly readConflicts: number;
  readonly writeHits: number;
  readonly writeMisses: number;
  readonly writeConflicts: number;
  readonly activates: number;
  /** Banks closed: PREs on row conflicts, auto-precharges, each bank a PREab closed (= activates less the banks open now). */
  readonly precharges: number;
  readonly refreshes: number;
  /** ns with a bank open or refreshing (DRAMPower's rank active time: IDD3N instead of IDD2N). */
  readonly activeNs: number;
  /** Requests answered at their first data with a predicted end (`predict_bytes`). */
  readonly predictions: number;
  /**
   * ns in write-drain mode: from its first command in write mode to its first command back in
   * read mode (idle time between counts; a drain still going counts up to the last command).
   */
  readonly writeDrainNs: number;
  /** Mean bursts in this pseudo-channel's read / write queue from 0 to now (its entries of the channel's queue under queue_scope channel). */
  readonly readQueueMean: number;
  readonly writeQueueMean: number;
  /** Most bursts in this pseudo-channel's read / write queue at once. */
  readonly readQueueMax: number;
  readonly writeQueueMax: number;
}

/**
 * One pseudo-channel of `hbm_ctrl_v2`: turns requests into runs of bursts and issues their
 * commands when the simulated clock reaches them, waking itself with one timer at the next
 * command (or answer) time.
 *
 * A request is answered when its last burst issues, or, if that comes later, when its first data
 * leaves (reads: first RD + tCL; writes: first WR + tCWL), with the end its remaining bursts reach
 * if nothing else arrives (a prediction: the scheduler runs ahead with its journal on and takes
 * that back). Its timing is then fixed; its remaining bursts keep priority over unstarted work.
 */
export class HbmPort implements Sleeper {
  readonly sched: PortScheduler;
  /** Requests answered with a prediction (for `stats`). */
  private predictions = 0;
  /** Started, unanswered requests in start order (their answer deadlines are in the same order). */
  private waiting: number[] = [];
  private waitingHead = 0;
  private readonly runOf: Int32Array;
  private readonly touched: Int32Array;

  constructor(
    readonly config: HbmCtrlV2Config,
    private readonly env: Environment,
    private readonly map: HbmAddressMap | null,
    private readonly hub: WakeHub,
    readonly port: number,
    private readonly cache: LocateCache,
  ) {
    this.sched = new PortScheduler(config);
    this.runOf = new Int32Array(this.sched.nBanks).fill(-1);
    this.touched = new Int32Array(this.sched.nBanks);
  }

  /** A request arrives (now). Always answered later. */
  arrive(request: MemoryRequest): void {
    const now = this.env.now;
    const s = this.sched;
    s.commit();
    // An idle port does not wake for refreshes: catch up with them now.
    if (s.empty) s.run(now, -1);
    const kind = request.kind === "read" ? READ : WRITE;
    const r = s.newRequest(request, kind);
    const ready = Math.max(now, kind === WRITE ? request.tailNs : now) + this.config.timing.frontend;
    const bursts = this.split(r, request, ready);
    s.rBursts[r] = bursts;
    s.rd[r * R_STRIDE + R_LEFT] = bursts;
    s.admit(now);
    s.invalidate();
    // Plan when it can first issue a command (its front end): then every request arriving at
    // this instant is in, and no request is answered inside its own service().
    this.wake(now + this.config.timing.frontend, now);
    this.nudgePeers(now);
  }

  /**
   * The other pseudo-channels of the channel (`queue_scope: channel`): they share this port's
   * queues, so its arrivals and commands can flip their write drain or make room for them.
   */
  peers: readonly HbmPort[] = [];

  /** refresh_scope channel: the channel's pseudo-channels refreshed after this one (null: not set up yet). */
  private refreshNext: readonly HbmPort[] = [];
  private refreshBefore: readonly HbmPort[] | null = null;

  /** Sets up the refresh order of the channel (PC order) once its peers are known. */
  private orderRefresh(): void {
    if (this.refreshBefore !== null) return;
    this.refreshBefore = this.peers.filter((peer) => peer.port < this.port);
    this.refreshNext = this.peers.filter((peer) => peer.port > this.port);
    this.sched.refreshAfter = this.refreshBefore.map((peer) => peer.sched);
  }

  /**
   * refresh_scope channel, after a run: wakes the earlier pseudo-channels this port's refresh
   * waits for (an idle one has not caught up with its refresh), and the later ones once this
   * port's REFab issued (their refresh may go now).
   */
  private passRefresh(now: number): void {
    const s = this.sched;
    if (s.waitsForEarlierRefresh) {
      s.waitsForEarlierRefresh = false;
      for (const peer of this.refreshBefore as readonly HbmPort[]) this.hub.wake(peer.port, now);
    }
    if (s.refreshed) {
      s.refreshed = false;
      for (const peer of this.refreshNext) {
        peer.sched.invalidate();
        this.hub.wake(peer.port, now);
      }
    }
  }

  /** Wakes the peers that this port's queue change moves (now). */
  private nudgePeers(now: number): void {
    for (const peer of this.peers) {
      if (peer.sched.peerMoved()) {
        peer.sched.invalidate();
        this.hub.wake(peer.port, now);
      }
    }
  }

  /** Bursts a request of `kind` can put into its queue now (Ramulator accepts a request only then). */
  room(kind: "read" | "write"): number {
    return this.sched.room(kind === "read" ? READ : WRITE);
  }
  /** The counters. */
  stats(): HbmPortStats {
    const st = this.sched.st;
    const p = this.sched.portBase;
    return {
      readBursts: st[p + P_RD_BURSTS] as number,
      writeBursts: st[p + P_WR_BURSTS] as number,
      readHits: st[p + P_RD_HIT] as number,
      readMisses: st[p + P_RD_MISS] as number,
      readConflicts: st[p + P_RD_CONF] as number,
      writeHits: st[p + P_WR_HIT] as number,
      writeMisses: st[p + P_WR_MISS] as number,
      writeConflicts: st[p + P_WR_CONF] as number,
      activates: st[p + P_ACTS] as number,
      precharges: (st[p + P_ACTS] as number) - (st[p + P_OPEN] as number),
      refreshes: st[p + P_REFS] as number,
      activeNs: this.sched.activeNs(this.env.now),
      predictions: this.predictions,
      writeDrainNs: this.sched.drainNs(),
      readQueueMean: this.sched.meanOccupancy(READ, this.env.now),
      writeQueueMean: this.sched.meanOccupancy(WRITE, this.env.now),
      readQueueMax: st[p + P_RQ_MAX] as number,
      writeQueueMax: st[p + P_WQ_MAX] as number,
    };
  }

  /**
   * Splits a request's ranges into bursts of `burst_bytes`, located with the address map, and
   * gathers the bursts to one bank and row into runs (entries; a bank's run is where its first
   * burst is in the request, later bursts to the same row join it). Returns the burst count.
   */
  private split(r: number, request: MemoryRequest, ready: number): number {
    const s = this.sched;
    const cfg = this.config;
    const burst = cfg.burstBytes;
    const maxRun = s.rKind[r] === READ ? cfg.readQueue : cfg.writeQueue;
    let ranges = request.ranges;
    if (ranges.length === 0 && request.bytes > 0) ranges = [0, request.bytes];
    const cache = this.cache;
    const bpg = cfg.banksPerGroup;
    const groups = cfg.bankGroups;
    // The open run of each bank in this request (entries touched are reset at the end).
    const runOf = this.runOf;
    const touched = this.touched;
    let nTouched = 0;
    let count = 0;
    for (let i = 0; i + 1 < ranges.length; i += 2) {
      const offset = ranges[i] as number;
      const bytes = ranges[i + 1] as number;
      if (bytes <= 0) continue;
      const first = Math.floor(offset / burst);
      const last = Math.floor((offset + bytes - 1) / burst);
      for (let j = first; j <= last; j++) {
        let bank = 0;
        let row = 0;
        if (this.map !== null) {
          cache.locate(this.map, j, burst, groups, bpg);
          bank = cache.bank;
          row = cache.row;
        }
        count++;
        const entry = runOf[bank] as number;
        if (entry >= 0 && s.eRow[entry] === row && (s.eBursts[entry] as number) < maxRun) {
          s.eBursts[entry] = (s.eBursts[entry] as number) + 1;
          continue;
        }
        const group = Math.floor(bank / bpg);
        if (entry < 0) touched[nTouched++] = bank;
        runOf[bank] = s.newEntry(r, bank, group, Math.floor(group / groups), row, ready);
      }
    }
    for (let i = 0; i < nTouched; i++) runOf[touched[i] as number] = -1;
    return count;
  }

  /**
   * Issues every command due by `now`, answers the requests that finished or reached their
   * deadline, and wakes at the next command or deadline.
   */
  private advance(now: number): void {
    const s = this.sched;
    const t = this.config.timing;
    // Entries waiting for room a peer freed (channel queues) join the queue now.
    if (this.peers.length > 0) s.admit(now);
    if (this.config.channelRefresh) this.orderRefresh();
    s.run(now + this.config.horizon, -1);
    if (this.config.channelRefresh) this.passRefresh(now);
    const finished = s.finished;
    for (let i = 0; i < s.finishedCount; i++) {
      const r = finished[i] as number;
      if (s.rAnswered[r] === 0) this.answer(r, now, false);
    }
    s.finishedCount = 0;
    const started = s.started;
    const big = this.config.predictBytes;
    for (let i = 0; i < s.startedCount; i++) {
      const r = started[i] as number;
      if (s.rAnswered[r] === 0 && (s.reqObj[r] as MemoryRequest).bytes >= big) this.waiting.push(r);
    }
    s.startedCount = 0;
    // Requests whose first data leaves before their last burst issues: answer at that deadline.
    let deadline = INF;
    while (this.waitingHead < this.waiting.length) {
      const r = this.waiting[this.waitingHead] as number;
      if (s.rAnswered[r] === 1) {
        this.waitingHead++;
        continue;
      }
      const at = (s.rd[r * R_STRIDE + R_FIRST] as number) + (s.rKind[r] === READ ? t.tCL : t.tCWL);
      if (at > now + EPS) {
        deadline = at;
        break;
      }
      this.answer(r, now, true);
      this.waitingHead++;
    }
    if (this.waitingHead > 0 && this.waitingHead === this.waiting.length) {
      this.waiting.length = 0;
      this.waitingHead = 0;
    }
    // An idle port sleeps through refreshes (caught up at the next arrival), unless a later
    // pseudo-channel's refresh waits for its REFab (refresh_scope channel).
    const idle = s.empty && !(this.refreshNext.length > 0 && s.st[s.portBase + P_REF_PENDING] === 1);
    this.wake(Math.min(idle ? INF : s.nextT, deadline), now);
    this.nudgePeers(now);
  }

  /**
   * Answers request `r`: finished (its first and last column commands are known), or, with
   * `predict`, at its deadline: runs the scheduler ahead until its last burst issues, then takes
   * that back. A prediction that cannot finish alone (its rest waits on a peer port: room in
   * the channel's queue, the channel's refresh order) is taken back unanswered: the request is
   * answered when it finishes.
   */
  private answer(r: number, now: number, predict: boolean): void {
    const s = this.sched;
    let last = s.rd[r * R_STRIDE + R_LAST] as number;
    if (predict) {
      const nextT = s.nextT;
      s.journaling = true;
      const stop = s.run(INF, r);
      if (stop !== STOP_TARGET && stop !== STOP_PEERS) {
        throw new Error(`hbm_ctrl_v2: request slot ${r} did not finish in its prediction (scheduler bug).`);
      }
      last = s.rd[r * R_STRIDE + R_LAST] as number;
      s.rollbackTo(0);
      s.journaling = false;
      s.forgetBounds();
      // The port's next command is that of the state taken back to, not the prediction's.
      s.nextT = nextT;
      if (stop === STOP_PEERS) return;
      this.predictions++;
    }
    const first = s.rd[r * R_STRIDE + R_FIRST] as number;
    s.rAnswered[r] = 1;
    const request = s.reqObj[r] as MemoryRequest;
    const t = this.config.timing;
    const latency = request.kind === "read" ? t.tCL : t.tCWL;
    const startNs = Math.max(first + latency, now, request.arrivalNs);
    const endNs = Math.max(last + latency + t.tBL, startNs);
    request.complete({ startNs, endNs, busyNs: (s.rBursts[r] as number) * t.tBL });
  }

  /** Wakes at `at` (through the stack's hub: one DES timer for all ports). */
  private wake(at: number, _now: number): void {
    this.hub.wake(this.port, at);
  }

  /** The hub's call: the time asked for has come. */
  wakeUp(now: number): void {
    this.advance(now);
  }
}
