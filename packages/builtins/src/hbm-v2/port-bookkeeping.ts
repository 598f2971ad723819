// The bookkeeping beside a pseudo-channel's command choices: the refresh policy's commands (and
// whole idle intervals skipped), the write-drain and active time, each entry's row-buffer outcome
// and the DRAM command log (`--dram-trace`). PortScheduler (scheduler.ts) decides the commands.
import { CMD_PRE, CMD_REFAB, CMD_REFPB, type HbmCommandLog } from "./command-log.js";
import {
  B_ACT,
  B_ROW,
  BANK_STRIDE,
  E_CLASS,
  E_STRIDE,
  P_ACT_END,
  P_ACT_SINCE,
  P_ACTIVE_NS,
  P_DRAIN_NS,
  P_DRAIN_SINCE,
  P_FLIP,
  P_LAST_CMD,
  P_MODE,
  P_OPEN,
  P_RD_HIT,
  P_REF_LAST,
  P_REF_NEXT,
  P_REF_PENDING,
  P_REFAB,
  P_REFS,
  P_WR_HIT,
  READ,
} from "./layout.js";
import type { HbmCtrlV2Config } from "./params.js";
import type { HbmRefreshPolicy } from "./policies/policy.js";
import { PortViews } from "./port-views.js";

const INF = Number.POSITIVE_INFINITY;

/** A pseudo-channel's counters, refresh commands and command log, kept as the scheduler issues. */
export abstract class PortBookkeeping extends PortViews {
  /** A refresh ended (its REF issued, not while predicting) since the owner last cleared this. */
  refreshed = false;
  /** The DRAM commands issued (`--dram-trace`), or null: off. */
  commandLog: HbmCommandLog | null = null;

  /** PRE to ACT of a bank, with Ramulator's multi-cycle adjustment (see PortScheduler). */
  protected readonly preToAct: number;
  /** Bursts of a run issue this far apart: max(tCCD_L, tCCD_S, tBL, a column command). */
  protected readonly period: number;
  protected readonly refresh: HbmRefreshPolicy;
  /** A refresh keeps the pseudo-channel active this long: tRFC (REFab) or tRFCpb (REFpb). */
  private readonly refreshNs: number;

  constructor(config: HbmCtrlV2Config) {
    super(config);
    const t = config.timing;
    this.preToAct = t.tRP + t.preCmd - t.actCmd;
    this.period = Math.max(t.tCCD_L, t.tCCD_S, t.tBL, t.colCmd);
    this.refresh = config.policies.refresh;
    this.refreshNs = config.refresh === "per_bank" ? t.tRFCpb : t.tRFC;
  }

  /** The write-drain mode flipped before this command (at `time`): a drain starts or ends. */
  protected drainFlip(time: number): void {
    const p = this.portBase;
    this.setS(p + P_FLIP, 0);
    if ((this.st[p + P_MODE] as number) !== READ) this.setS(p + P_DRAIN_SINCE, time);
    else this.addS(p + P_DRAIN_NS, time - (this.st[p + P_DRAIN_SINCE] as number));
  }

  /**
   * ns spent in write drain: from the first command in write mode to the first in read mode,
   * the drain still going counted up to the last command.
   */
  drainNs(): number {
    const st = this.st;
    const p = this.portBase;
    const done = st[p + P_DRAIN_NS] as number;
    const writing = ((st[p + P_MODE] as number) !== READ) !== ((st[p + P_FLIP] as number) === 1);
    return writing
      ? done + Math.max(0, (st[p + P_LAST_CMD] as number) - (st[p + P_DRAIN_SINCE] as number))
      : done;
  }

  /** Counts an entry's row-buffer outcome at its first command. */
  protected classify(e: number, outcome: number): void {
    const o = e * E_STRIDE + E_CLASS;
    if ((this.ed[o] as number) !== 0) return;
    this.setE(o, outcome);
    const base = this.portBase + ((this.eKind[e] as number) === READ ? P_RD_HIT : P_WR_HIT);
    this.addS(base + outcome - 1, 1);
  }

  /** Closes bank `b` (state offset) with a precharge at `time`. */
  protected closeBank(b: number, time: number): void {
    const p = this.portBase;
    if (this.closedBank < 0) this.closedBank = b;
    else if (this.closedBank !== b) this.closedAll = true;
    if (this.commandLog !== null) this.logCommand(CMD_PRE, time, (b - this.bankBase) / BANK_STRIDE, -1, 1);
    this.setS(b + B_ROW, -1);
    this.maxS(b + B_ACT, time + this.preToAct);
    this.maxS(p + P_REFAB, time + this.config.timing.tRP);
    this.addS(p + P_OPEN, -1);
    if ((this.st[p + P_OPEN] as number) === 0) this.activeSpan(this.st[p + P_ACT_SINCE] as number, time);
  }

  /**
   * Adds the active span [from, to] (a bank open, or a refresh) to the active time, less what it
   * shares with the last span counted (spans are counted as they end, nearly in time order).
   */
  private activeSpan(from: number, to: number): void {
    const p = this.portBase;
    const start = Math.max(from, this.st[p + P_ACT_END] as number);
    if (to > start) this.addS(p + P_ACTIVE_NS, to - start);
    this.maxS(p + P_ACT_END, to);
  }

  /** ns with a bank open or refreshing up to `now` (DRAMPower's rank active time). */
  activeNs(now: number): number {
    const st = this.st;
    const p = this.portBase;
    const done = st[p + P_ACTIVE_NS] as number;
    if ((st[p + P_OPEN] as number) === 0) return done;
    return done + Math.max(0, now - Math.max(st[p + P_ACT_SINCE] as number, st[p + P_ACT_END] as number));
  }

  /** A refresh at `time` keeps the pseudo-channel active for `refreshNs`. */
  private refreshSpan(time: number): void {
    if ((this.st[this.portBase + P_OPEN] as number) > 0) return; // active already
    this.activeSpan(time, time + this.refreshNs);
  }

  /** Issues the pending refresh's next command at `time` (the refresh policy's). */
  protected refreshCommand(time: number): void {
    const bank = this.slot(0);
    if (!this.refresh.issue(this, time)) return;
    const p = this.portBase;
    if (this.commandLog !== null) this.logRefreshes(time, 0, 1, bank);
    this.refreshSpan(time);
    this.setS(p + P_REF_LAST, time);
    if (!this.journaling) this.refreshed = true;
    this.setS(p + P_REF_PENDING, 0);
    this.blockVersion++;
    this.setS(
      p + P_REF_NEXT,
      (this.st[p + P_REF_NEXT] as number) + this.refresh.interval(this.config.timing),
    );
    this.addS(p + P_REFS, 1);
  }

  protected refreshCommandTime(due: number): number {
    return this.refresh.commandTime(this, due);
  }

  /**
   * With nothing queued and every bank closed, refreshes change nothing but their count and the
   * banks' next ACT: skip whole intervals up to `limit`, keeping the last ones.
   */
  protected skipIdleRefreshes(limit: number): void {
    const st = this.st;
    const p = this.portBase;
    if ((st[p + P_OPEN] as number) > 0 || (st[p + P_REF_PENDING] as number) === 1) return;
    const interval = this.refresh.interval(this.config.timing);
    const next = st[p + P_REF_NEXT] as number;
    if (!(next < INF)) return;
    // Keep enough refreshes before the limit for their recovery windows (and a full bank cycle).
    const skip = Math.floor((limit - next) / interval) - this.refresh.idleKeep(this.nBanks);
    if (skip <= 0) return;
    if (this.commandLog !== null) this.logRefreshes(next, interval, skip, this.slot(0));
    this.setS(p + P_REF_NEXT, next + skip * interval);
    this.setS(p + P_REF_LAST, next + (skip - 1) * interval);
    this.addS(p + P_REFS, skip);
    // Idle, every bank closed: each skipped refresh is its own active span.
    this.addS(p + P_ACTIVE_NS, skip * this.refreshNs);
    this.maxS(p + P_ACT_END, next + (skip - 1) * interval + this.refreshNs);
    this.refresh.skipped?.(this, skip);
  }

  /** Logs `n` commands `cmd` on `bank` (flat) at `row`, `period` apart from `time` (not while predicting). */
  protected logCommand(cmd: number, time: number, bank: number, row: number, n: number): void {
    if (this.journaling) return;
    const log = this.commandLog as HbmCommandLog;
    for (let i = 0; i < n; i++) log.record(cmd, time + i * this.period, bank, row);
  }

  /** Logs `n` refreshes `interval` apart from `time`, per-bank ones round robin from `bank`. */
  private logRefreshes(time: number, interval: number, n: number, bank: number): void {
    if (this.journaling) return;
    const log = this.commandLog as HbmCommandLog;
    const perBank = this.config.refresh === "per_bank";
    for (let i = 0; i < n; i++) {
      log.record(
        perBank ? CMD_REFPB : CMD_REFAB,
        time + i * interval,
        perBank ? (bank + i) % this.nBanks : -1,
        -1,
      );
    }
  }
}
