import {
  B_ACT,
  B_ACTIVE,
  B_HITS,
  B_PRE,
  B_RD,
  B_ROW,
  B_WR,
  E_NEXT,
  E_STRIDE,
  EPS,
  G_ACT,
  G_RD,
  G_WR,
  LIST_PRIO,
  LIST_READS,
  LIST_WRITES,
  P_ACT,
  P_CLOCK,
  P_CMDMIN,
  P_CMDMIN_COL,
  P_COLBUS,
  P_FAW,
  P_FAWI,
  P_FLIP,
  P_MODE,
  P_OVR,
  P_OVW,
  P_RD,
  P_REF_LAST,
  P_REF_NEXT,
  P_REF_PENDING,
  P_ROWBUS,
  P_RQ,
  P_WQ,
  P_WR,
  READ,
  S_RD,
  S_WR,
} from "./layout.js";
import type { PortState } from "./port-state.js";
import { PortQueue } from "./queue.js";

// What a candidate command is; `rank` orders kinds due at the same time.
export const DUE = 0; // a refresh falls due
export const COL = 1; // RD / WR
export const ROW = 2; // ACT / PRE of an entry
export const REF = 3; // PREab / REFab / PREpb / REFpb (row bus, before entries' row commands)

const INF = Number.POSITIVE_INFINITY;

/**
 * The candidate search of a pseudo-channel's scheduler: the earliest command any queued entry
 * (a run of bursts of one request to one bank and row) or the refresh can issue: ties go to a
 * refresh falling due, then column before row commands, then entries that opened their bank (the
 * priority list) before the others, then the oldest. The scheduler policy (policies/) narrows
 * the candidates: in order, only the oldest eligible entry of each list; with a row-hit cap, a
 * capped hit waits for an older entry to another row of its bank.
 */
export abstract class PortScan extends PortQueue {
  // The next candidate found by the last scan, valid until the state changes.
  protected cached = false;
  /** A peer switched this port's write-drain mode since it last looked (wake it). */
  private followed = false;
  /** Bumped whenever an entry may become unblocked (mode, refresh, a bank's last active run, priority). */
  protected blockVersion = 0;
  /** A bank closed since the last scan (its entries' bounds are void), or several (`closedAll`). */
  protected closedBank = -1;
  protected closedAll = false;
  /** The class-1 list the last scan served (-1: none, a refresh waited). */
  protected lastServed = -1;
  // The scan in progress.
  protected sBestT = INF;
  protected sBestKind = -1;
  protected sBestE = -1;
  protected sBestCls = 0;
  protected sBestSeq = INF;
  protected sOtherT = INF;
  protected sColT = INF;
  protected sRowT = INF;
  protected sMode = 0;
  protected sRefPending = false;
  protected sRowBus = 0;
  protected sPortAct = 0;
  protected sPortRd = 0;
  protected sPortWr = 0;
  protected cBestT = INF;
  protected cBestKind = -1;
  protected cBestE = -1;
  protected cOtherT = INF;

  protected readonly writeHigh: number;
  protected readonly writeLow: number;
  /** The scheduler policy: only the oldest eligible entry of a list is a candidate. */
  protected readonly inOrder: boolean;
  /** The scheduler policy's row-hit cap (INF: none). */
  protected readonly hitCap: number;
  protected readonly capped: boolean;
  /** Per bank: the scan that saw an older entry to another row of it (with a cap). */
  private readonly conflictSeen: Int32Array;
  private scanNo = 0;
  /** In order: the last command's time (no command before it). */
  private sClock = -INF;
  /** col_edge rising: RD and WR only at multiples of this, ns (0: any time). */
  private readonly colEdge: number;
  /** act_edge rising: ACT only at multiples of this, ns (0: any row slot). */
  private readonly actEdge: number;

  constructor(config: ConstructorParameters<typeof PortQueue>[0]) {
    super(config);
    this.writeHigh = config.writeHigh * config.writeQueue;
    this.writeLow = config.writeLow * config.writeQueue;
    const policy = config.policies.scheduler;
    this.inOrder = policy.inOrder;
    this.hitCap = policy.rowHitCap;
    this.capped = policy.rowHitCap < INF;
    this.conflictSeen = new Int32Array(this.nBanks).fill(-1);
    this.colEdge = config.colEdgeNs;
    this.actEdge = config.channelBus && config.actEdgeSlots > 1 ? config.timing.tCK : 0;
  }

  /** `time`, or with act_edge rising (and a row slot shorter than a CK) the first rising edge at or after it. */
  private actEdgeAt(time: number): number {
    const edge = this.actEdge;
    return edge > 0 && time < INF ? Math.ceil(time / edge - 1e-6) * edge : time;
  }

  /** `time`, or with col_edge rising the first rising CK edge at or after it. */
  private colAt(time: number): number {
    const edge = this.colEdge;
    return edge > 0 && time < INF ? Math.ceil(time / edge - 1e-6) * edge : time;
  }

  /**
   * Whether the channel's queues (its peers' entries changed) would move this port now: its write
   * drain flips, or a waiting entry fits. Never while nothing is queued here.
   */
  peerMoved(): boolean {
    if (this.peers.length === 0 || this.empty) return false;
    if (this.followed) {
      this.followed = false;
      return true;
    }
    const st = this.st;
    const p = this.portBase;
    const rq = (st[p + P_RQ] as number) + this.peerSum(P_RQ);
    const wq = (st[p + P_WQ] as number) + this.peerSum(P_WQ);
    if (rq + wq > 0) {
      const mode = st[p + P_MODE] as number;
      if (mode === READ ? wq > this.writeHigh || rq === 0 : wq < this.writeLow && rq !== 0) return true;
    }
    for (let kind = 0; kind < 2; kind++) {
      if (!this.waitingRoom(kind)) continue;
      const occ = kind === READ ? rq : wq;
      const head = (this.overflow[kind] as number[])[
        st[p + (kind === READ ? P_OVR : P_OVW)] as number
      ] as number;
      const cap = kind === READ ? this.config.readQueue : this.config.writeQueue;
      if (occ === 0 || occ + (this.eBursts[head] as number) <= cap) return true;
    }
    return false;
  }

  /** A peer of the channel switched the write-drain mode to `mode` (now). */
  private follow(mode: number): void {
    const at = this.portBase + P_MODE;
    if (this.st[at] === mode) return;
    this.st[at] = mode;
    const flip = this.portBase + P_FLIP;
    this.st[flip] = 1 - (this.st[flip] as number);
    this.cached = false;
    this.blockVersion++;
    this.followed = true;
  }

  /** Forgets the cached next candidate (the queue changed from outside: an arrival). */
  invalidate(): void {
    this.cached = false;
  }

  /** Forgets every entry's lower bound (the state went back: after a prediction). */
  forgetBounds(): void {
    this.cached = false;
    this.closedAll = true;
    this.lastServed = -1;
    this.blockVersion++;
  }

  /**
   * Finds the next command (into the `c*` fields): the earliest candidate, ties by kind, then
   * priority class, then age; `cOtherT` is a lower bound of any other candidate's time (blocked
   * ones included). False when there is none.
   */
  protected scan(): boolean {
    const st = this.st;
    const p = this.portBase;
    const t = this.config.timing;
    // Write drain (Ramulator set_write_mode).
    let mode = st[p + P_MODE] as number;
    // The queues are the channel's (queue_scope: channel): the other PCs' entries count.
    const rq = (st[p + P_RQ] as number) + this.peerSum(P_RQ);
    const wq = (st[p + P_WQ] as number) + this.peerSum(P_WQ);
    if (rq + wq > 0 && (mode === READ ? wq > this.writeHigh || rq === 0 : wq < this.writeLow && rq !== 0)) {
      mode = 1 - mode;
      this.setS(p + P_MODE, mode);
      // Timed at the next command (flipping back before it cancels the flip).
      this.setS(p + P_FLIP, 1 - (st[p + P_FLIP] as number));
      this.blockVersion++;
      // One write-drain mode per channel (its queues are one): the peers follow (not while
      // predicting, which is taken back).
      if (!this.journaling) for (const peer of this.peers) (peer as PortScan).follow(mode);
    }
    const refPending = (st[p + P_REF_PENDING] as number) === 1;
    const inOrder = this.inOrder;
    const capped = this.capped;
    if (inOrder) this.sClock = st[p + P_CLOCK] as number;
    if (capped) this.scanNo++;
    this.sMode = mode;
    this.sRefPending = refPending;
    this.sBestT = INF;
    this.sBestKind = -1;
    this.sBestE = -1;
    this.sBestCls = 0;
    this.sBestSeq = INF;
    this.sOtherT = INF;
    if (!refPending) {
      const due = st[p + P_REF_NEXT] as number;
      if (due < INF) {
        this.sBestT = due;
        this.sBestKind = DUE;
      }
    } else {
      const r = this.afterEarlierRefresh(this.refreshCommandTime(st[p + P_REF_NEXT] as number));
      if (r < INF) {
        this.sBestT = r;
        this.sBestKind = REF;
      }
    }
    // P_CMDMIN(_COL): the channel's row (column) slot at the last best time was taken by another command.
    const rowBus = Math.max(st[p + P_ROWBUS] as number, st[p + P_CMDMIN] as number);
    const colBus = Math.max(st[p + P_COLBUS] as number, st[p + P_CMDMIN_COL] as number);
    const fawI = st[p + P_FAWI] as number;
    const faw = (st[p + P_FAW + fawI] as number) + t.tFAW;
    this.sRowBus = rowBus;
    this.sPortAct = Math.max(st[p + P_ACT] as number, rowBus, faw);
    this.sPortRd = this.colAt(Math.max(st[p + P_RD] as number, colBus));
    this.sPortWr = this.colAt(Math.max(st[p + P_WR] as number, colBus));
    const lowRow = Math.min(this.sPortAct, rowBus);
    // An entry's earliest time only grows, except when its bank closes: lower bounds from earlier
    // scans let this one skip entries that cannot win.
    const closeAll = this.closedAll;
    const closed = this.closedBank;
    this.closedAll = false;
    this.closedBank = -1;
    const ed = this.ed;
    const eB = this.eB;
    const eLB = this.eLB;
    const eBlk = this.eBlk;
    const version = this.blockVersion;
    // 1. Entries with priority: all of them (ties among them go to the oldest); in order, the
    // oldest eligible one (the others' bounds are still voided).
    let headFound = false;
    for (let e = st[this.listHead(LIST_PRIO)] as number; e >= 0; ) {
      const next = ed[e * E_STRIDE + E_NEXT] as number;
      if (closeAll || (closed >= 0 && eB[e] === closed)) {
        eLB[e] = -INF;
        eBlk[e] = -1;
      }
      if (!headFound) {
        const bound = eLB[e] as number;
        if (eBlk[e] === version || (!inOrder && bound > this.sBestT + EPS)) {
          if (bound < this.sOtherT) this.sOtherT = bound;
        } else if (this.consider(e, 0) && inOrder) headFound = true;
      }
      e = next;
    }
    // 2. The other entries of the kind being served (the other kind is blocked, as is everything
    // while a refresh waits), oldest first: once the oldest column and row candidates at the bus
    // bounds are found, nothing after them can win.
    const served = refPending ? -1 : mode === READ ? LIST_READS : LIST_WRITES;
    const lowCol = mode === READ ? this.sPortRd : this.sPortWr;
    const eRow = this.eRow;
    this.sColT = INF;
    this.sRowT = INF;
    let colDone = false;
    let rowDone = false;
    for (let list = LIST_READS; list <= LIST_WRITES; list++) {
      if (list !== served) {
        // Blocked (the other kind, or a refresh waits): one bound for the whole list is enough (for
        // a closed-form run); their lower bounds are voided below if their bank closed.
        if ((st[this.listHead(list)] as number) >= 0) {
          const bound = Math.min(lowRow, list === LIST_READS ? this.sPortRd : this.sPortWr);
          if (bound < this.sOtherT) this.sOtherT = bound;
        }
        continue;
      }
      if (served !== this.lastServed) {
        // Banks may have closed while this list waited: its lower bounds are void.
        this.voidBounds(list);
        this.lastServed = served;
      }
      headFound = false;
      for (let e = st[this.listHead(list)] as number; e >= 0; ) {
        const next = ed[e * E_STRIDE + E_NEXT] as number;
        if (closeAll || (closed >= 0 && eB[e] === closed)) {
          eLB[e] = -INF;
          eBlk[e] = -1;
        }
        if (capped) {
          // An entry to another row of an open bank: younger capped hits of that bank wait for it.
          const open = st[(eB[e] as number) + B_ROW] as number;
          if (open >= 0 && open !== eRow[e]) this.conflictSeen[this.eBank[e] as number] = this.scanNo;
        }
        if (inOrder) {
          // Only the oldest eligible entry is a candidate (the others' bounds are still voided).
          if (!headFound) {
            if (eBlk[e] === version) {
              const bound = eLB[e] as number;
              if (bound < this.sOtherT) this.sOtherT = bound;
            } else headFound = this.consider(e, 1);
          }
          e = next;
          continue;
        }
        let bound = eLB[e] as number;
        if (colDone || rowDone) {
          // The oldest column (row) candidate at the bus bound is found: later column (row)
          // candidates cannot beat it; a bound is enough for them.
          const hit = st[(eB[e] as number) + B_ROW] === eRow[e];
          if (hit ? colDone : rowDone) {
            bound = Math.max(bound, hit ? lowCol : lowRow);
            if (bound < this.sOtherT) this.sOtherT = bound;
            e = next;
            continue;
          }
        }
        if (bound > this.sBestT + EPS || eBlk[e] === version) {
          if (bound < this.sOtherT) this.sOtherT = bound;
        } else {
          this.consider(e, 1);
          colDone = this.sColT <= lowCol + EPS;
          rowDone = this.sRowT <= lowRow + EPS;
          if (colDone && rowDone) {
            // Every later entry of this list is behind one of the two: bound them all at once.
            const rest = Math.min(lowCol, lowRow);
            if (rest < this.sOtherT) this.sOtherT = rest;
            break;
          }
        }
        e = next;
      }
    }
    if (this.sBestKind < 0) return false; // nothing (or only blocked candidates: cannot happen, see the docs)
    this.cached = true;
    this.cBestT = this.sBestT;
    this.cBestKind = this.sBestKind;
    this.cBestE = this.sBestE;
    this.cOtherT = this.sOtherT;
    return true;
  }

  /** Voids the lower bounds of a list's entries on a closed bank (or all). */
  private voidBounds(list: number): void {
    const ed = this.ed;
    for (let e = this.st[this.listHead(list)] as number; e >= 0; e = ed[e * E_STRIDE + E_NEXT] as number) {
      this.eLB[e] = -INF;
      this.eBlk[e] = -1;
    }
  }

  /**
   * Evaluates entry `e` (priority class `cls`) as a candidate of the scan in progress; false when
   * it is blocked.
   */
  private consider(e: number, cls: number): boolean {
    const st = this.st;
    const b = this.eB[e] as number;
    const kind = this.eKind[e] as number;
    const open = st[b + B_ROW] as number;
    const col = open === this.eRow[e];
    let time: number;
    if (col) {
      const g = this.eG[e] as number;
      const s = this.eS[e] as number;
      time =
        kind === READ
          ? Math.max(st[b + B_RD] as number, st[g + G_RD] as number, st[s + S_RD] as number, this.sPortRd)
          : Math.max(st[b + B_WR] as number, st[g + G_WR] as number, st[s + S_WR] as number, this.sPortWr);
    } else if (open < 0) {
      time = Math.max(st[b + B_ACT] as number, st[(this.eG[e] as number) + G_ACT] as number, this.sPortAct);
    } else {
      time = Math.max(st[b + B_PRE] as number, this.sRowBus);
    }
    const ready = this.eReady[e] as number;
    if (ready > time) time = ready;
    if (this.sClock > time) time = this.sClock;
    if (col) time = this.colAt(time);
    else if (open < 0) time = this.actEdgeAt(time);
    this.eLB[e] = time;
    const refPending = this.sRefPending;
    const blocked = col
      ? cls === 1 &&
        (refPending ||
          kind !== this.sMode ||
          (this.capped &&
            (st[b + B_HITS] as number) >= this.hitCap &&
            this.conflictSeen[this.eBank[e] as number] === this.scanNo))
      : refPending || (cls === 1 && kind !== this.sMode) || (open >= 0 && (st[b + B_ACTIVE] as number) > 0);
    if (blocked) {
      this.eBlk[e] = this.blockVersion;
      if (time < this.sOtherT) this.sOtherT = time;
      return false;
    }
    const slot = col ? COL : ROW;
    if (col) {
      if (time < this.sColT) this.sColT = time;
    } else if (time < this.sRowT) this.sRowT = time;
    const bestT = this.sBestT;
    let better: boolean;
    if (time < bestT - EPS) better = true;
    else if (time > bestT + EPS) better = false;
    else if (slot !== this.sBestKind) better = rank(slot) < rank(this.sBestKind);
    else if (cls !== this.sBestCls) better = cls < this.sBestCls;
    else better = (this.eSeq[e] as number) < this.sBestSeq;
    if (better) {
      if (bestT < this.sOtherT) this.sOtherT = bestT;
      this.sBestT = time;
      this.sBestKind = slot;
      this.sBestCls = cls;
      this.sBestSeq = this.eSeq[e] as number;
      this.sBestE = e;
    } else if (time < this.sOtherT) this.sOtherT = time;
    return true;
  }

  /**
   * refresh_scope channel: the channel's pseudo-channels whose refresh goes before this one's (the
   * lower PCs, in Ramulator's one priority buffer per channel).
   */
  refreshAfter: readonly PortState[] = [];
  /** A scan found this port's refresh waiting for an earlier pseudo-channel's REFab (its owner wakes them). */
  waitsForEarlierRefresh = false;

  /**
   * `time` (this port's next refresh command), or later: no earlier than a row slot after the
   * REFab of each pseudo-channel before it in the channel, and INF while one of them has not
   * issued this round's REFab yet.
   */
  private afterEarlierRefresh(time: number): number {
    const earlier = this.refreshAfter;
    if (earlier.length === 0 || !(time < INF)) return time;
    const due = this.st[this.portBase + P_REF_NEXT] as number;
    let at = time;
    for (const peer of earlier) {
      if ((peer.st[peer.portBase + P_REF_NEXT] as number) <= due + EPS) {
        this.waitsForEarlierRefresh = true;
        return INF;
      }
      const after = (peer.st[peer.portBase + P_REF_LAST] as number) + this.config.timing.preCmd;
      if (after > at) at = after;
    }
    return at;
  }

  /** Whether the last scan saw an older entry to another row of `bank` (with a row-hit cap). */
  protected bypassing(bank: number): boolean {
    return this.conflictSeen[bank] === this.scanNo;
  }

  /** Earliest time of the pending refresh's next command (INF while it must wait), due at `due`. */
  protected abstract refreshCommandTime(due: number): number;
}

/** Order of candidate kinds at equal times. */
function rank(kind: number): number {
  return kind === DUE ? 0 : kind === COL ? 1 : kind === REF ? 2 : 3;
}
