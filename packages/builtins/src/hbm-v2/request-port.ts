import type { MemoryRequest, MemoryTiming } from "@kb/components";
import type { Environment } from "@kb/des";
import type { HbmAddressMap } from "@kb/topology";
import { CMD_ACT, CMD_PRE, CMD_RD, CMD_REFAB, CMD_REFPB, CMD_WR, type HbmCommandLog } from "./command-log.js";
import type { HbmPortStats } from "./controller.js";
import type { LocateCache } from "./locate-cache.js";
import type { HbmCtrlV2Config } from "./params.js";
import { ActWindow, ColumnWindow, TimeHeap } from "./request-window.js";

/**
 * One pseudo-channel of `hbm_ctrl_v2` under `closed_form: request`: each request is scheduled
 * whole when it arrives (one decision per request), in closed form against the state its
 * predecessors left, and answered at once (no timer, no queue scan).
 *
 * Pass 1 opens, for each bank the request touches, the row of its first burst there (a row hit
 * needs nothing, a closed bank an ACT, another open row a PRE then an ACT), at the earliest time
 * the bank, tRRD_S / tRRD_L and tFAW allow ({@link ActWindow}: an ACT may fall between earlier
 * ones). Pass 2 issues the request's bursts in address order, each at the earliest time its bank
 * (tRCD) and the pseudo-channel's recent column commands ({@link ColumnWindow}: tBL, tCCD_S /
 * tCCD_L / tCCD_R, tRTW, tWTR) allow, so a later request's burst may take a gap between earlier
 * ones. Each bank serves its requests in arrival order (no FR-FCFS reordering across requests, no
 * write drain). Refresh: all-bank every tREFI or per bank (bank b every banks x tREFIpb from
 * (b + 1) x tREFIpb), applied when a command would reach its due time. Closed page: a PRE after
 * the request's last burst to each bank. docs/latency-model.md, section 3, `closed_form: request`.
 */
export class RequestPort {
  private readonly nBanks: number;
  // Per bank: open row (-1: closed), earliest ACT, RD, WR, PRE.
  private readonly bRow: Int32Array;
  private readonly bAct: Float64Array;
  private readonly bRd: Float64Array;
  private readonly bWr: Float64Array;
  private readonly bPre: Float64Array;
  /** The last request (serial) that touched the bank, and the bank's per-bank refresh due time. */
  private readonly bReq: Float64Array;
  private readonly bRef: Float64Array;
  /**
   * `closed_form: batch`: a request that opens its bank leaves its queue at the ACT (Ramulator's
   * active buffer, one burst's room): the bank's last ACT and the request it opened for (-1: its
   * burst counted).
   */
  private readonly roomAtAct: boolean;
  private readonly bActAt: Float64Array;
  private readonly bActFor: Float64Array;
  /** The last column commands (data bus, turnarounds, SIDs' tCCD_S / tCCD_R, the column command bus). */
  private readonly cols: ColumnWindow;
  /** Recent ACTs, for tRRD and tFAW. */
  private readonly acts: ActWindow;
  // All-bank refresh: the next due time.
  private nextRef: number;
  private serial = 0;
  /** Column times of the queued bursts still ahead (reads, writes), for `room`. */
  readonly ahead: [TimeHeap, TimeHeap] = [new TimeHeap(), new TimeHeap()];
  /**
   * Whether `ahead` is kept, shared by the ports of a stack: from the first `room` question on
   * (`bench:hbm`'s driver asks before its first request).
   */
  tracking = { on: false };
  /** The other pseudo-channels sharing this port's queues (queue_scope channel). */
  peers: readonly RequestPort[] = [];
  commandLog: HbmCommandLog | null = null;
  // Counters.
  private readonly counts = new Float64Array(16);
  private queueWait = [0, 0];
  private queueMax = [0, 0];
  private open = 0;
  private activeSince = 0;
  private activeEnd = 0;
  private activeNs = 0;
  // Derived timing.
  private readonly rcdRd: number;
  private readonly rcdWr: number;
  private readonly actToPre: number;
  private readonly preToAct: number;
  private readonly rdToPre: number;
  private readonly wrToPre: number;
  private readonly refToAct: number;
  private readonly refPbToAct: number;
  private readonly refMode: number; // 0 none, 1 all bank, 2 per bank
  // Scratch: the bank and row of each burst of the request being scheduled.
  private burstBank = new Int32Array(256);
  private burstRow = new Int32Array(256);

  constructor(
    readonly config: HbmCtrlV2Config,
    private readonly env: Environment,
    private readonly map: HbmAddressMap | null,
    readonly port: number,
    private readonly cache: LocateCache,
  ) {
    const n = config.sids * config.bankGroups * config.banksPerGroup;
    this.nBanks = n;
    this.bRow = new Int32Array(n).fill(-1);
    this.bAct = new Float64Array(n);
    this.bRd = new Float64Array(n);
    this.bWr = new Float64Array(n);
    this.bPre = new Float64Array(n);
    this.bReq = new Float64Array(n).fill(-1);
    this.roomAtAct = config.closedForm === "batch";
    this.bActAt = new Float64Array(n);
    this.bActFor = new Float64Array(n).fill(-1);
    const t = config.timing;
    const act = t.actCmd;
    const pre = t.preCmd;
    const col = t.colCmd;
    this.rcdRd = t.tRCD_RD + act - col;
    this.rcdWr = t.tRCD_WR + act - col;
    this.actToPre = t.tRAS + act - pre;
    this.preToAct = t.tRP + pre - act;
    this.rdToPre = t.tRTP + col - pre;
    this.wrToPre = t.tCWL + t.tBL + t.tWR + col - pre;
    this.refToAct = t.tRFC + pre - act;
    this.refPbToAct = t.tRFCpb + pre - act;
    this.acts = new ActWindow(t);
    this.cols = ColumnWindow.of(t);
    this.refMode = config.refresh === "all_bank" ? 1 : config.refresh === "per_bank" ? 2 : 0;
    this.nextRef = this.refMode === 1 ? t.tREFI : Number.POSITIVE_INFINITY;
    this.bRef = new Float64Array(n);
    for (let b = 0; b < n; b++)
      this.bRef[b] = this.refMode === 2 ? (b + 1) * t.tREFIpb : Number.POSITIVE_INFINITY;
  }

  /** Whether bank `b` has `row` open (in the schedule decided so far). */
  rowOpen(b: number, row: number): boolean {
    return this.bRow[b] === row;
  }

  /** The latest column command decided so far (the column frontier). */
  frontier = 0;
  /** Time in write drain (`closed_form: batch` keeps it; `request` has no drain). */
  drainNs = 0;

  /** Bursts a request of `kind` (0 read, 1 write) can put into its queue now. */
  room(kind: number): number {
    // The first question: from now on every port of the stack keeps its bursts still ahead. (A
    // run that never asks, such as `kb run`'s, skips that heap: its queue maxima stay 0.)
    this.tracking.on = true;
    const now = this.env.now;
    const cap = kind === 0 ? this.config.readQueue : this.config.writeQueue;
    const own = this.ahead[kind] as TimeHeap;
    own.drop(now);
    let used = own.size;
    for (const peer of this.peers) {
      const f = peer.ahead[kind] as TimeHeap;
      f.drop(now);
      used += f.size;
    }
    return cap - used;
  }

  /**
   * Schedules request `request` whole and returns its timing: it arrives now, or (`readyAt`, a
   * batch's decision, `closed_form: batch`) arrived at `since` and may issue from `readyAt`.
   */
  serve(request: MemoryRequest, readyAt = -1, since = -1): MemoryTiming {
    const now = this.env.now;
    const cfg = this.config;
    const t = cfg.timing;
    const write = request.kind === "write" ? 1 : 0;
    const ready = readyAt >= 0 ? readyAt : Math.max(now, write === 1 ? request.tailNs : now) + t.frontend;
    const from = since >= 0 ? since : now;
    const serial = this.serial++;
    const n = this.locate(request);
    const bBank = this.burstBank;
    const bRowOf = this.burstRow;
    const bRow = this.bRow;
    const bReq = this.bReq;
    const counts = this.counts;
    // Pass 1: open each touched bank to the row of its first burst there.
    for (let i = 0; i < n; i++) {
      const b = bBank[i] as number;
      if (bReq[b] === serial) continue;
      this.openRow(b, bRowOf[i] as number, ready, serial, write);
      bReq[b] = serial;
    }
    // Pass 2: the bursts in address order.
    const bpg = cfg.banksPerGroup;
    const groups = cfg.bankGroups;
    const track = this.tracking.on;
    const fifo = this.ahead[write] as TimeHeap;
    if (track) fifo.drop(now);
    // A batch's read may issue from its arrival, before now: the windows kept from there.
    const keep = Math.min(now, ready);
    this.cols.prune(keep);
    this.acts.prune(keep);
    let first = Number.POSITIVE_INFINITY;
    let last = 0;
    let wait = 0;
    for (let i = 0; i < n; i++) {
      const b = bBank[i] as number;
      const row = bRowOf[i] as number;
      if (bRow[b] !== row) this.openRow(b, row, ready, serial, write); // another row of a bank it touched
      const g = Math.floor(b / bpg);
      const sid = Math.floor(g / groups);
      let time: number;
      if (write === 0) {
        time = Math.max(ready, this.bRd[b] as number);
      } else {
        time = Math.max(ready, this.bWr[b] as number);
      }
      if (time >= this.due(b)) {
        this.refreshBefore(b, time);
        this.openRow(b, row, ready, serial, write);
        i--; // the burst again, its bank reopened after the refresh
        continue;
      }
      time = this.cols.slot(time, write, g, sid);
      this.column(b, time, write);
      if (time < first) first = time;
      if (time > last) last = time;
      if (track) {
        if (this.roomAtAct && this.bActFor[b] === serial) {
          this.bActFor[b] = -1;
          fifo.push(this.bActAt[b] as number);
        } else fifo.push(time);
      }
      wait += time - from;
    }
    if (last > this.frontier) this.frontier = last;
    counts[write === 0 ? 0 : 1] = (counts[write === 0 ? 0 : 1] as number) + n;
    this.queueWait[write] = (this.queueWait[write] as number) + wait;
    const size = fifo.size;
    if (size > (this.queueMax[write] as number)) this.queueMax[write] = size;
    if (cfg.closedPage) {
      for (let i = 0; i < n; i++) {
        const b = bBank[i] as number;
        if ((bRow[b] as number) >= 0) this.precharge(b, this.bPre[b] as number);
      }
    }
    const latency = write === 1 ? t.tCWL : t.tCL;
    const startNs = Math.max(first + latency, now, request.arrivalNs);
    const endNs = Math.max(last + latency + t.tBL, startNs);
    return { startNs, endNs, busyNs: n * t.tBL };
  }

  /** Bank and row of every burst of `request` into the scratch arrays; returns the count. */
  private locate(request: MemoryRequest): number {
    const cfg = this.config;
    const burst = cfg.burstBytes;
    let ranges = request.ranges;
    if (ranges.length === 0 && request.bytes > 0) ranges = [0, request.bytes];
    const cache = this.cache;
    const bpg = cfg.banksPerGroup;
    const groups = cfg.bankGroups;
    let count = 0;
    for (let i = 0; i + 1 < ranges.length; i += 2) {
      const offset = ranges[i] as number;
      const bytes = ranges[i + 1] as number;
      if (bytes <= 0) continue;
      const firstBurst = Math.floor(offset / burst);
      const lastBurst = Math.floor((offset + bytes - 1) / burst);
      if (count + lastBurst - firstBurst + 1 > this.burstBank.length) {
        const size = Math.max(this.burstBank.length * 2, count + lastBurst - firstBurst + 1);
        const banks = new Int32Array(size);
        banks.set(this.burstBank);
        const rows = new Int32Array(size);
        rows.set(this.burstRow);
        this.burstBank = banks;
        this.burstRow = rows;
      }
      const outBank = this.burstBank;
      const outRow = this.burstRow;
      for (let j = firstBurst; j <= lastBurst; j++) {
        let bank = 0;
        let row = 0;
        if (this.map !== null) {
          cache.locate(this.map, j, burst, groups, bpg);
          bank = cache.bank;
          row = cache.row;
        }
        outBank[count] = bank;
        outRow[count] = row;
        count++;
      }
    }
    return count;
  }

  /** The time bank `b`'s next refresh is due (INF: none). */
  private due(b: number): number {
    return this.refMode === 1
      ? this.nextRef
      : this.refMode === 2
        ? (this.bRef[b] as number)
        : Number.POSITIVE_INFINITY;
  }

  /**
   * Opens bank `b` to `row` for request `serial` (not before `ready`): nothing on a hit, an ACT
   * on a closed bank, a PRE then an ACT on another open row; counts the run's outcome.
   */
  private openRow(b: number, row: number, ready: number, serial: number, write: number): void {
    const open = this.bRow[b] as number;
    const outcome = 2 + 3 * write; // counts: 2 + hit/miss/conflict, +3 for writes
    if (open === row) {
      if (this.bReq[b] !== serial) this.counts[outcome] = (this.counts[outcome] as number) + 1;
      return;
    }
    if (open >= 0) {
      const pre = Math.max(ready, this.bPre[b] as number);
      if (pre >= this.due(b)) this.refreshBefore(b, pre);
      else {
        this.precharge(b, pre);
        this.counts[outcome + 2] = (this.counts[outcome + 2] as number) + 1;
      }
    } else this.counts[outcome + 1] = (this.counts[outcome + 1] as number) + 1;
    let at = Math.max(ready, this.bAct[b] as number);
    if (at >= this.due(b)) {
      this.refreshBefore(b, at);
      at = Math.max(ready, this.bAct[b] as number);
    }
    at = this.acts.slot(at, Math.floor(b / this.config.banksPerGroup));
    const t = this.config.timing;
    this.bRow[b] = row;
    this.bActAt[b] = at;
    this.bActFor[b] = serial;
    this.bAct[b] = at + t.tRC;
    this.bRd[b] = at + this.rcdRd;
    this.bWr[b] = at + this.rcdWr;
    this.bPre[b] = at + this.actToPre;
    this.counts[8] = (this.counts[8] as number) + 1; // ACTs
    if (this.open++ === 0) this.activeSince = Math.max(at, this.activeEnd);
    if (this.commandLog !== null) this.commandLog.record(CMD_ACT, at, b, row);
  }

  /** A column command of bank `b` (group `g`, SID `sid`) at `time`. */
  private column(b: number, time: number, write: number): void {
    if (write === 0) {
      this.bPre[b] = Math.max(this.bPre[b] as number, time + this.rdToPre);
    } else {
      this.bPre[b] = Math.max(this.bPre[b] as number, time + this.wrToPre);
    }
    if (this.commandLog !== null)
      this.commandLog.record(write === 0 ? CMD_RD : CMD_WR, time, b, this.bRow[b] as number);
  }

  /** Closes bank `b` with a PRE at `time`. */
  private precharge(b: number, time: number): void {
    this.bRow[b] = -1;
    this.bAct[b] = Math.max(this.bAct[b] as number, time + this.preToAct);
    if (--this.open === 0) this.activeSpan(time);
    if (this.commandLog !== null) this.commandLog.record(CMD_PRE, time, b, -1);
  }

  private activeSpan(to: number): void {
    const start = Math.max(this.activeSince, this.activeEnd);
    if (to > start) this.activeNs += to - start;
    this.activeEnd = Math.max(this.activeEnd, to);
  }

  /**
   * Issues the refreshes due by `time` that bank `b`'s next command meets: all-bank (PREab of the
   * open banks, REFab tRP later, ACTs tRFC after) or bank `b`'s own (PREpb, REFpb, tRFCpb).
   */
  private refreshBefore(b: number, time: number): void {
    const t = this.config.timing;
    if (this.refMode === 1) {
      // An idle stretch: the refreshes wholly in the past left only closed banks.
      while (this.nextRef <= time) {
        let preAll = this.nextRef;
        let anyOpen = false;
        for (let k = 0; k < this.nBanks; k++) {
          if ((this.bRow[k] as number) >= 0) {
            anyOpen = true;
            preAll = Math.max(preAll, this.bPre[k] as number);
          }
        }
        if (anyOpen) {
          for (let k = 0; k < this.nBanks; k++) if ((this.bRow[k] as number) >= 0) this.precharge(k, preAll);
        }
        let ref = anyOpen ? preAll + t.tRP : this.nextRef;
        for (let k = 0; k < this.nBanks; k++)
          ref = Math.max(ref, (this.bAct[k] as number) + t.actCmd - t.preCmd);
        for (let k = 0; k < this.nBanks; k++)
          this.bAct[k] = Math.max(this.bAct[k] as number, ref + this.refToAct);
        this.activeSince = Math.max(ref, this.activeEnd);
        this.activeSpan(ref + t.tRFC);
        this.counts[9] = (this.counts[9] as number) + 1;
        if (this.commandLog !== null) this.commandLog.record(CMD_REFAB, ref, -1, -1);
        this.nextRef += t.tREFI;
        if (this.nextRef + t.tREFI <= time && ref + t.tRFC < time) {
          // Skip the whole refreshes of an idle stretch (counted), banks already closed.
          const skip = Math.floor((time - this.nextRef) / t.tREFI);
          this.counts[9] = (this.counts[9] as number) + skip;
          this.nextRef += skip * t.tREFI;
        }
      }
      return;
    }
    // Per bank.
    const period = this.nBanks * t.tREFIpb;
    while ((this.bRef[b] as number) <= time) {
      const dueAt = this.bRef[b] as number;
      let ref = dueAt;
      if ((this.bRow[b] as number) >= 0) {
        const pre = Math.max(dueAt, this.bPre[b] as number);
        this.precharge(b, pre);
        ref = pre + t.tRP;
      }
      ref = Math.max(ref, (this.bAct[b] as number) + t.actCmd - t.preCmd);
      this.bAct[b] = Math.max(this.bAct[b] as number, ref + this.refPbToAct);
      this.counts[9] = (this.counts[9] as number) + 1;
      if (this.commandLog !== null) this.commandLog.record(CMD_REFPB, ref, b, -1);
      this.bRef[b] = dueAt + period;
      if (dueAt + 2 * period <= time && ref + t.tRFCpb < time) {
        const skip = Math.floor((time - (this.bRef[b] as number)) / period);
        this.counts[9] = (this.counts[9] as number) + skip;
        this.bRef[b] = (this.bRef[b] as number) + skip * period;
      }
    }
  }

  /** The counters (commands planned ahead of the clock included). */
  stats(): HbmPortStats {
    const c = this.counts;
    const now = this.env.now;
    const activates = c[8] as number;
    return {
      readBursts: c[0] as number,
      writeBursts: c[1] as number,
      readHits: c[2] as number,
      readMisses: c[3] as number,
      readConflicts: c[4] as number,
      writeHits: c[5] as number,
      writeMisses: c[6] as number,
      writeConflicts: c[7] as number,
      activates,
      precharges: activates - this.open,
      refreshes: c[9] as number,
      activeNs:
        this.open > 0
          ? this.activeNs + Math.max(0, now - Math.max(this.activeSince, this.activeEnd))
          : this.activeNs,
      predictions: 0,
      writeDrainNs: this.drainNs,
      readQueueMean: now > 0 ? (this.queueWait[0] as number) / now : 0,
      writeQueueMean: now > 0 ? (this.queueWait[1] as number) / now : 0,
      readQueueMax: this.queueMax[0] as number,
      writeQueueMax: this.queueMax[1] as number,
    };
  }
}
