/**
 * The three policy families of `hbm_ctrl_v2`, after Ramulator 2's split of a controller into a
 * scheduler, a refresh manager and a row policy: each is a small object, chosen by a param
 * (`scheduler`, `refresh`, `page_policy`) or supplied by a plug-in through
 * `hbmCtrlV2WithPolicies`. A policy is asked once per scheduling decision (a candidate search,
 * a finished run of bursts, a refresh command), never per byte.
 */
import type { HbmTiming } from "../presets.js";

/**
 * The scheduler: which queued runs of bursts (one request's bursts to one bank and row) may
 * issue their next command, and which goes first. Commands issue in time order; at equal times
 * a refresh falling due goes first, then column commands (row hits) before row commands, then
 * runs that opened their bank, then the oldest.
 */
export interface HbmSchedulerPolicy {
  readonly name: string;
  /**
   * false (first ready, FR-FCFS): every queued run is a candidate and the earliest command wins.
   * true (in order, FCFS): only the oldest eligible run of each queue (the runs that opened
   * their bank; the reads or writes being served) is a candidate, and no command issues before
   * the last one issued.
   */
  readonly inOrder: boolean;
  /**
   * Column bursts of younger row hits that may go ahead of an older queued request to another
   * row of their bank (counted from the bank's ACT); then the hits wait until that request has
   * precharged the bank. `Infinity`: no cap (FR-FCFS).
   */
  readonly rowHitCap: number;
}

/** What a page policy sees of the queue when a run finishes. */
export interface HbmQueueView {
  /** Whether a queued run (read or write, admitted to the queue) targets `row` of flat bank `bank`. */
  queuedHit(bank: number, row: number): boolean;
  /** Whether a queued run targets another row than `row` of flat bank `bank`. */
  queuedConflict(bank: number, row: number): boolean;
}

/** The page (row-buffer) policy: whether a row stays open after a run of bursts. */
export interface HbmPagePolicy {
  readonly name: string;
  /**
   * Called when the last burst of a run to `row` of flat bank `bank` (SID, bank group, bank of
   * the pseudo-channel) issues and no other run holds the bank: true precharges the bank at its
   * earliest PRE (auto-precharge), false leaves the row open.
   */
  closeAfterRun(bank: number, row: number, queue: HbmQueueView): boolean;
}

/**
 * What a refresh policy may read and do on a pseudo-channel. Times are ns; banks are flat
 * indices (0 .. banks - 1). Every change is undone when the scheduler takes back a prediction.
 */
export interface HbmRefreshPort {
  readonly timing: HbmTiming;
  readonly banks: number;
  /** The open row of `bank`, -1 when closed. */
  openRow(bank: number): number;
  /** Open banks of the pseudo-channel. */
  openBanks(): number;
  /** Runs that opened `bank` (or any bank, with -1) and still have bursts to issue. */
  activeRuns(bank: number): number;
  /** Earliest PRE of `bank` (tRAS, tRTP, write recovery). */
  preAt(bank: number): number;
  /** Earliest ACT of `bank` (tRC, tRP, an earlier refresh). */
  actAt(bank: number): number;
  /** Earliest all-bank precharge (every bank's tRAS, tRTP, write recovery). */
  preAllAt(): number;
  /** Earliest all-bank refresh (tRC after the last ACT, tRP after the last PRE). */
  refAllAt(): number;
  /** Earliest ACT of the pseudo-channel by tRRD_S and an earlier REFpb's tRREFD. */
  portActAt(): number;
  /** When the row command bus is free. */
  rowBusAt(): number;
  /** Precharges `bank` at `time` (its next ACT tRP later). */
  precharge(bank: number, time: number): void;
  /** No ACT of `bank` (or, with -1, of any bank) before `time`. */
  holdAct(bank: number, time: number): void;
  /** A row command of one PRE/REF length takes the row bus at `time`. */
  useRowBus(time: number): void;
  /** Two numbers of journaled state the policy may keep (e.g. the next bank, a spacing). */
  slot(i: 0 | 1): number;
  setSlot(i: 0 | 1, value: number): void;
}

/**
 * The refresh policy. A refresh falls due every `interval` (the first at `interval`); while one
 * is due, no run starts a new command on the pseudo-channel, and the policy issues its commands
 * (a precharge, then the refresh) until `issue` says it is done.
 */
export interface HbmRefreshPolicy {
  readonly name: string;
  /** ns between refreshes (Infinity: never). */
  interval(timing: HbmTiming): number;
  /** Earliest time of the due refresh's next command (>= `due`); Infinity while it must wait. */
  commandTime(port: HbmRefreshPort, due: number): number;
  /** Issues the due refresh's next command at `time`; true when that command was the refresh. */
  issue(port: HbmRefreshPort, time: number): boolean;
  /**
   * With nothing queued and every bank closed, a port skips whole intervals: refreshes kept
   * before the time skipped to (enough for their recovery windows), and what a skipped one does
   * to the policy's state.
   */
  idleKeep(banks: number): number;
  skipped?(port: HbmRefreshPort, count: number): void;
}

/** The three policies of one `hbm_ctrl_v2`. */
export interface HbmPolicies {
  readonly scheduler: HbmSchedulerPolicy;
  readonly refresh: HbmRefreshPolicy;
  readonly page: HbmPagePolicy;
}
