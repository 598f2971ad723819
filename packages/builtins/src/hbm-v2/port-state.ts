import type { MemoryRequest } from "@kb/components";
import type { CommandBus } from "./command-bus.js";
import {
  B_ROW,
  BANK_STRIDE,
  BG_STRIDE,
  E_CLASS,
  E_ISSUED,
  E_LIST,
  E_NEXT,
  E_PREV,
  E_PRIO,
  E_STATE,
  E_STRIDE,
  P_FAW,
  P_HEAD,
  P_OCC_T,
  P_OVR,
  P_OVW,
  P_REF_NEXT,
  P_RHEAD,
  P_RQ,
  P_RQ_AREA,
  P_RQ_MAX,
  P_WHEAD,
  P_WQ,
  P_WQ_AREA,
  P_WQ_MAX,
  PORT_FIELDS,
  R_FIRST,
  R_LAST,
  R_LEFT,
  R_STRIDE,
  READ,
  SID_STRIDE,
} from "./layout.js";
import type { HbmCtrlV2Config } from "./params.js";

/**
 * The state of one pseudo-channel's controller, kept in typed arrays so that the scheduler
 * allocates nothing per burst. Commands are applied when the simulated clock reaches them; to
 * predict a request's end the scheduler runs ahead with `journaling` on and takes everything
 * back with `rollbackTo(0)`.
 *
 * Taken back: `st` (banks, bank groups, SIDs, the port), `ed` (entries' progress and the queue's
 * linked lists), `rd` (requests' progress), `eReady` (an entry's earliest command, moved later
 * when it is admitted) and the channel's command slots. The other entry and request fields are
 * written once, at arrival. Turning `journaling` on copies these arrays and `rollbackTo` copies
 * them back: a prediction is rare (one per large request at most) and writes a few thousand
 * values, while the writes outside predictions are some twenty a command, which then cost a
 * store each instead of a journal check.
 */

function grow<T extends Float64Array | Int32Array | Uint8Array>(array: T, size: number): T {
  const next = new (array.constructor as new (n: number) => T)(size);
  next.set(array);
  return next;
}

/** `target` holding a copy of `source` (`target` itself when it is large enough). */
function copyInto<T extends Float64Array | Int32Array>(target: T, source: T): T {
  const into = target.length >= source.length ? target : grow(target, source.length);
  into.set(source);
  return into;
}

export abstract class PortState {
  readonly nBanks: number;
  readonly nGroups: number;
  readonly nSids: number;
  readonly bankBase = 0;
  readonly bgBase: number;
  readonly sidBase: number;
  readonly portBase: number;
  /** Banks, bank groups, SIDs and port scalars (journaled). */
  st: Float64Array;
  /** Entry progress and the queue list (journaled; small integers). */
  ed: Int32Array;
  /** Request progress (journaled). */
  rd: Float64Array;

  // Entry static fields.
  eBank: Int32Array;
  eGroup: Int32Array;
  eSid: Int32Array;
  /** Offsets in `st` of the entry's bank, bank group and SID fields. */
  eB: Int32Array;
  eG: Int32Array;
  eS: Int32Array;
  eRow: Float64Array;
  eBursts: Int32Array;
  eKind: Uint8Array;
  eReq: Int32Array;
  eSeq: Float64Array;
  eReady: Float64Array;
  /** Scheduler bookkeeping (not journaled): a lower bound of the entry's next command time. */
  eLB: Float64Array;
  /** Scheduler bookkeeping: the block version at which the entry was found blocked. */
  eBlk: Int32Array;
  private freeEntries: number[] = [];
  private entryCap = 0;
  private nextSeq = 0;

  // Request static fields.
  readonly reqObj: (MemoryRequest | null)[] = [];
  readonly reqEntries: number[][] = [];
  rKind: Uint8Array;
  rAnswered: Uint8Array;
  rBursts: Int32Array;
  private freeRequests: number[] = [];
  private reqCap = 0;
  /** Requests not yet finished, in arrival order. */
  live: number[] = [];

  /** Entries waiting for queue room, per kind (heads at P_OVR / P_OVW). */
  readonly overflow: [number[], number[]] = [[], []];
  /**
   * The other pseudo-channels of the channel when the queues are the channel's (`queue_scope:
   * channel`): their occupancy counts against this port's queues and write-drain decision.
   */
  peers: readonly PortState[] = [];
  /** The channel's command slots (`command_bus: channel`), shared with the peers; null: none. */
  bus: CommandBus | null = null;

  // The copy taken when `journaling` turned on (the journal's start).
  private saveSt: Float64Array = new Float64Array(0);
  private saveEd: Int32Array = new Int32Array(0);
  private saveRd: Float64Array = new Float64Array(0);
  private saveReady: Float64Array = new Float64Array(0);
  private saveBooked: Float64Array = new Float64Array(0);
  private saved = false;
  private predicting = false;

  /** Whether the writes since it turned on are to be taken back (only while predicting). */
  get journaling(): boolean {
    return this.predicting;
  }
  set journaling(on: boolean) {
    if (on && !this.predicting) this.save();
    this.predicting = on;
  }

  constructor(readonly config: HbmCtrlV2Config) {
    this.nSids = config.sids;
    this.nGroups = config.sids * config.bankGroups;
    this.nBanks = this.nGroups * config.banksPerGroup;
    this.bgBase = this.nBanks * BANK_STRIDE;
    this.sidBase = this.bgBase + this.nGroups * BG_STRIDE;
    this.portBase = this.sidBase + this.nSids * SID_STRIDE;
    this.st = new Float64Array(this.portBase + PORT_FIELDS);
    for (let b = 0; b < this.nBanks; b++) this.st[b * BANK_STRIDE + B_ROW] = -1;
    const p = this.portBase;
    for (let i = 0; i < 4; i++) this.st[p + P_FAW + i] = Number.NEGATIVE_INFINITY;
    // The three queue lists (see PortQueue.listHead): empty.
    for (const at of [P_HEAD, P_RHEAD, P_WHEAD]) this.st.fill(-1, p + at, p + at + 2);
    this.st[p + P_REF_NEXT] = config.policies.refresh.interval(config.timing);
    this.ed = new Int32Array(0);
    this.rd = new Float64Array(0);
    this.eBank = new Int32Array(0);
    this.eGroup = new Int32Array(0);
    this.eSid = new Int32Array(0);
    this.eB = new Int32Array(0);
    this.eG = new Int32Array(0);
    this.eS = new Int32Array(0);
    this.eRow = new Float64Array(0);
    this.eBursts = new Int32Array(0);
    this.eKind = new Uint8Array(0);
    this.eReq = new Int32Array(0);
    this.eSeq = new Float64Array(0);
    this.eReady = new Float64Array(0);
    this.eLB = new Float64Array(0);
    this.eBlk = new Int32Array(0);
    this.rKind = new Uint8Array(0);
    this.rAnswered = new Uint8Array(0);
    this.rBursts = new Int32Array(0);
    this.growEntries(64);
    this.growRequests(16);
  }

  /**
   * Sets the read (`kind` READ) or write queue's occupancy to `occ` bursts at `time`, keeping the
   * time integrals and maxima of both (the queue-occupancy counters), journaled.
   */
  setOccupancy(kind: number, occ: number, time: number): void {
    const p = this.portBase;
    const st = this.st;
    const since = st[p + P_OCC_T] as number;
    if (time > since) {
      const dt = time - since;
      const rq = st[p + P_RQ] as number;
      const wq = st[p + P_WQ] as number;
      if (rq !== 0) this.addS(p + P_RQ_AREA, rq * dt);
      if (wq !== 0) this.addS(p + P_WQ_AREA, wq * dt);
      this.setS(p + P_OCC_T, time);
    }
    this.setS(p + (kind === READ ? P_RQ : P_WQ), occ);
    this.maxS(p + (kind === READ ? P_RQ_MAX : P_WQ_MAX), occ);
  }

  /**
   * The mean occupancy of the read (`kind` READ) or write queue from 0 to `end` (the occupancy
   * after the last change is held to `end`), bursts.
   */
  meanOccupancy(kind: number, end: number): number {
    const p = this.portBase;
    const st = this.st;
    const since = st[p + P_OCC_T] as number;
    const until = Math.max(end, since);
    if (until <= 0) return 0;
    const occ = st[p + (kind === READ ? P_RQ : P_WQ)] as number;
    const area = st[p + (kind === READ ? P_RQ_AREA : P_WQ_AREA)] as number;
    return (area + occ * (until - since)) / until;
  }

  /** The peers' sum of port field `at` (queue occupancy: P_RQ, P_WQ); 0 without peers. */
  peerSum(at: number): number {
    let sum = 0;
    const i = this.portBase + at;
    for (const peer of this.peers) sum += peer.st[i] as number;
    return sum;
  }

  /** Whether entries of `kind` wait for queue room. */
  waitingRoom(kind: number): boolean {
    const list = this.overflow[kind] as number[];
    return (this.st[this.portBase + (kind === READ ? P_OVR : P_OVW)] as number) < list.length;
  }

  // ---- writes (taken back after a prediction) -----------------------------------------------

  /** Copies what a prediction may write (reusing the copy's arrays while they are large enough). */
  private save(): void {
    this.saveSt = copyInto(this.saveSt, this.st);
    this.saveEd = copyInto(this.saveEd, this.ed);
    this.saveRd = copyInto(this.saveRd, this.rd);
    this.saveReady = copyInto(this.saveReady, this.eReady);
    if (this.bus !== null) this.saveBooked = copyInto(this.saveBooked, this.bus.booked);
    this.saved = true;
  }

  /** `st[i] = v`. */
  setS(i: number, v: number): void {
    this.st[i] = v;
  }

  /** `st[i] = max(st[i], v)`. */
  maxS(i: number, v: number): void {
    if (v > (this.st[i] as number)) this.st[i] = v;
  }

  /** `st[i] += d`. */
  addS(i: number, d: number): void {
    this.st[i] = (this.st[i] as number) + d;
  }

  setE(i: number, v: number): void {
    this.ed[i] = v;
  }

  setR(i: number, v: number): void {
    this.rd[i] = v;
  }

  /** An entry's earliest command time (it can move later when the entry is admitted). */
  setReady(e: number, v: number): void {
    this.eReady[e] = v;
  }

  /** Takes command slot `tick` of `lane` of the channel's bus. */
  book(tick: number, lane: number): void {
    const bus = this.bus as CommandBus;
    bus.booked[bus.index(tick, lane)] = tick;
  }

  /**
   * Takes back every write since `journaling` turned on (`mark` 0: the only mark there is);
   * without a copy (nothing was journaled), nothing.
   */
  rollbackTo(mark: number): void {
    if (mark !== 0)
      throw new RangeError(`hbm_ctrl_v2: rollbackTo(${mark}): only 0, the journal's start, is kept.`);
    if (!this.saved) return;
    this.st.set(this.saveSt.subarray(0, this.st.length));
    this.ed.set(this.saveEd.subarray(0, this.ed.length));
    this.rd.set(this.saveRd.subarray(0, this.rd.length));
    this.eReady.set(this.saveReady.subarray(0, this.eReady.length));
    if (this.bus !== null) this.bus.booked.set(this.saveBooked.subarray(0, this.bus.booked.length));
    this.saved = false;
  }

  /** Frees what finished (call with an empty journal). */
  commit(): void {
    this.saved = false;
    if (this.overflowHeadsBig()) this.cleanup();
  }

  private overflowHeadsBig(): boolean {
    const p = this.portBase;
    return (this.st[p + P_OVR] as number) >= 256 || (this.st[p + P_OVW] as number) >= 256;
  }

  // ---- entries and requests ------------------------------------------------------------------

  private growEntries(size: number): void {
    this.ed = grow(this.ed, size * E_STRIDE);
    this.eBank = grow(this.eBank, size);
    this.eGroup = grow(this.eGroup, size);
    this.eSid = grow(this.eSid, size);
    this.eB = grow(this.eB, size);
    this.eG = grow(this.eG, size);
    this.eS = grow(this.eS, size);
    this.eRow = grow(this.eRow, size);
    this.eBursts = grow(this.eBursts, size);
    this.eKind = grow(this.eKind, size);
    this.eReq = grow(this.eReq, size);
    this.eSeq = grow(this.eSeq, size);
    this.eReady = grow(this.eReady, size);
    this.eLB = grow(this.eLB, size);
    this.eBlk = grow(this.eBlk, size);
    for (let e = size - 1; e >= this.entryCap; e--) this.freeEntries.push(e);
    this.entryCap = size;
  }

  private growRequests(size: number): void {
    this.rd = grow(this.rd, size * R_STRIDE);
    this.rKind = grow(this.rKind, size);
    this.rAnswered = grow(this.rAnswered, size);
    this.rBursts = grow(this.rBursts, size);
    for (let r = size - 1; r >= this.reqCap; r--) this.freeRequests.push(r);
    while (this.reqObj.length < size) {
      this.reqObj.push(null);
      this.reqEntries.push([]);
    }
    this.reqCap = size;
  }

  /** A request slot for `request` (not journaled: arrivals are final). */
  newRequest(request: MemoryRequest, kind: number): number {
    if (this.freeRequests.length === 0) {
      this.cleanup();
      // Amortised: grow while most slots are live (a cleanup walks every live request).
      if (this.freeRequests.length < this.reqCap >> 2) this.growRequests(this.reqCap * 2);
    }
    const r = this.freeRequests.pop() as number;
    this.reqObj[r] = request;
    (this.reqEntries[r] as number[]).length = 0;
    this.rKind[r] = kind;
    this.rAnswered[r] = 0;
    this.rBursts[r] = 0;
    this.rd[r * R_STRIDE + R_LEFT] = 0;
    this.rd[r * R_STRIDE + R_FIRST] = -1;
    this.rd[r * R_STRIDE + R_LAST] = -1;
    this.live.push(r);
    return r;
  }

  /** A new entry of request `r`: one burst to (bank, row), waiting for queue room. */
  newEntry(r: number, bank: number, group: number, sid: number, row: number, ready: number): number {
    if (this.freeEntries.length === 0) {
      this.cleanup();
      if (this.freeEntries.length < this.entryCap >> 2) this.growEntries(this.entryCap * 2);
    }
    const e = this.freeEntries.pop() as number;
    const kind = this.rKind[r] as number;
    this.eBank[e] = bank;
    this.eGroup[e] = group;
    this.eSid[e] = sid;
    this.eB[e] = this.bankBase + bank * BANK_STRIDE;
    this.eG[e] = this.bgBase + group * BG_STRIDE;
    this.eS[e] = this.sidBase + sid * SID_STRIDE;
    this.eRow[e] = row;
    this.eBursts[e] = 1;
    this.eKind[e] = kind;
    this.eReq[e] = r;
    this.eSeq[e] = this.nextSeq++;
    this.eReady[e] = ready;
    this.eLB[e] = Number.NEGATIVE_INFINITY;
    this.eBlk[e] = -1;
    const o = e * E_STRIDE;
    this.ed[o + E_ISSUED] = 0;
    this.ed[o + E_STATE] = -1;
    this.ed[o + E_NEXT] = -1;
    this.ed[o + E_PREV] = -1;
    this.ed[o + E_CLASS] = 0;
    this.ed[o + E_PRIO] = 0;
    this.ed[o + E_LIST] = -1;
    (this.reqEntries[r] as number[]).push(e);
    (this.overflow[kind] as number[]).push(e);
    return e;
  }

  /** Frees finished requests and compacts the overflow lists (only with an empty journal). */
  protected cleanup(): void {
    const live = this.live;
    let kept = 0;
    for (let i = 0; i < live.length; i++) {
      const r = live[i] as number;
      if ((this.rd[r * R_STRIDE + R_LEFT] as number) === 0 && this.rAnswered[r] === 1) {
        for (const e of this.reqEntries[r] as number[]) this.freeEntries.push(e);
        this.reqObj[r] = null;
        this.freeRequests.push(r);
      } else live[kept++] = r;
    }
    live.length = kept;
    for (let kind = 0; kind < 2; kind++) {
      const at = this.portBase + (kind === READ ? P_OVR : P_OVW);
      const head = this.st[at] as number;
      const list = this.overflow[kind] as number[];
      if (head > 0) {
        list.splice(0, head);
        this.st[at] = 0;
      }
    }
  }
}
