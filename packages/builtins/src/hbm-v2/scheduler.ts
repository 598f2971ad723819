import { COL_LANE, ROW_LANE } from "./command-bus.js";
import { CMD_ACT, CMD_RD, CMD_WR } from "./command-log.js";
import {
  B_ACT,
  B_ACTIVE,
  B_HITS,
  B_PRE,
  B_RD,
  B_ROW,
  B_WR,
  E_ISSUED,
  E_PRIO,
  E_STATE,
  E_STRIDE,
  EPS,
  G_ACT,
  G_RD,
  G_WR,
  P_ACT,
  P_ACT_END,
  P_ACT_SINCE,
  P_ACTIVE,
  P_ACTS,
  P_CLOCK,
  P_CMDMIN,
  P_CMDMIN_COL,
  P_COLBUS,
  P_FAW,
  P_FAWI,
  P_FLIP,
  P_LAST_CMD,
  P_OPEN,
  P_OVR,
  P_OVW,
  P_PREAB,
  P_RD,
  P_RD_BURSTS,
  P_REF_PENDING,
  P_REFAB,
  P_ROWBUS,
  P_RQ,
  P_WQ,
  P_WR,
  P_WR_BURSTS,
  R_FIRST,
  R_LAST,
  R_LEFT,
  R_STRIDE,
  READ,
  S_RD,
  S_WR,
  SID_STRIDE,
} from "./layout.js";
import type { HbmCtrlV2Config } from "./params.js";
import type { HbmPagePolicy } from "./policies/policy.js";
import { PortBookkeeping } from "./port-bookkeeping.js";
import { COL, DUE, REF, ROW } from "./scan.js";

const INF = Number.POSITIVE_INFINITY;

/** Why {@link PortScheduler.run} stopped. */
export const STOP_IDLE = 0; // nothing queued
export const STOP_LIMIT = 1; // the next command is at or after `limit` (its time: `nextT`)
export const STOP_TARGET = 2; // the target request issued its last burst
export const STOP_PEERS = 3; // predicting: the rest waits on a peer port (room it frees, its refresh)

/** `closed_form`: how far one decision issues a run's bursts. */
const RUN = 0; // until another candidate could come between, even past the limit
const HORIZON = 1; // the same, but only bursts due by the limit
const BURST = 2; // one burst

/**
 * The command scheduler of one pseudo-channel: the scheduler policy (FR-FCFS by default) over
 * the queue at command granularity, in time order, skipping the time between commands. Each step
 * finds the earliest command any queued entry (a run of bursts of one request to one bank and
 * row) or the refresh can issue; ties go to a refresh falling due, then column before row
 * commands, then entries of started or answered requests (and entries that opened their row)
 * before the others, then the oldest. A run of bursts that nothing else can come between is
 * issued in closed form, back to back at max(tCCD_L, tCCD_S, tBL). The refresh and page
 * policies are asked at each refresh command and at the end of each run.
 */
export class PortScheduler extends PortBookkeeping {
  /** Time of the next command when `run` stopped at its limit. */
  nextT = INF;
  /** Requests whose first column command issued (not while predicting), `startedCount` of them. */
  readonly started: number[] = [];
  startedCount = 0;
  /** Requests whose last burst issued (not while predicting), `finishedCount` of them. */
  readonly finished: number[] = [];
  finishedCount = 0;

  // Derived timing (ns), with Ramulator's multi-cycle adjustment: a constraint from command p
  // to command f counts from p's last cycle to f's last cycle: nominal + len(p) - len(f).
  private readonly rcdRd: number;
  private readonly rcdWr: number;
  private readonly actToPre: number;
  private readonly rdToPre: number;
  private readonly wrToPre: number;
  private readonly wrToRdS: number;
  private readonly wrToRdL: number;
  private readonly actToRef: number;
  private readonly page: HbmPagePolicy;
  private readonly closedForm: number; // RUN, HORIZON or BURST

  constructor(config: HbmCtrlV2Config) {
    super(config);
    const t = config.timing;
    const act = t.actCmd;
    const pre = t.preCmd;
    const col = t.colCmd;
    this.rcdRd = t.tRCD_RD + act - col;
    this.rcdWr = t.tRCD_WR + act - col;
    this.actToPre = t.tRAS + act - pre;
    this.rdToPre = t.tRTP + col - pre;
    this.wrToPre = t.tCWL + t.tBL + t.tWR + col - pre;
    this.wrToRdS = t.tCWL + t.tBL + t.tWTR_S;
    this.wrToRdL = t.tCWL + t.tBL + t.tWTR_L;
    this.actToRef = t.tRC + act - pre;
    this.page = config.policies.page;
    this.closedForm = config.closedForm === "burst" ? BURST : config.closedForm === "horizon" ? HORIZON : RUN;
  }

  /**
   * Issues commands in time order while they are due by `limit` (STOP_LIMIT, `nextT` = the
   * next one's time), or, with `target` >= 0, until that request has issued its last burst
   * (STOP_TARGET; a prediction: run with the journal on, then roll back). A prediction runs
   * this port alone: when the rest waits on a peer port, for room its bursts free (queue_scope:
   * channel, the own queue empty) or for its refresh (refresh_scope: channel), it stops
   * (STOP_PEERS) rather than refresh forever or end idle.
   */
  run(limit: number, target: number): number {
    const cfg = this.config;
    const t = cfg.timing;
    const sidBase = this.sidBase;
    const p = this.portBase;
    const nSids = this.nSids;
    const period = this.period;
    const predicting = target >= 0;
    const closedForm = this.closedForm;
    // The last row or column command's time (a prediction's progress).
    let progressT = -1;
    for (;;) {
      const st = this.st;
      const ed = this.ed;
      const rd = this.rd;
      if (!this.cached) {
        // Nothing queued: idle, but refreshes still happen up to the limit.
        if (this.empty) {
          if (limit === INF) {
            this.nextT = INF;
            return STOP_IDLE;
          }
          this.skipIdleRefreshes(limit);
        } else if (predicting && this.waitingOnPeers) {
          this.nextT = INF;
          return STOP_PEERS;
        }
        if (!this.scan()) {
          this.nextT = INF;
          // Queued, yet nothing to issue: waiting on a peer (refresh_scope: channel).
          return predicting ? STOP_PEERS : STOP_IDLE;
        }
      }
      const bestT = this.cBestT;
      const bestKind = this.cBestKind;
      const bestE = this.cBestE;
      const otherT = this.cOtherT;
      if (bestT > limit + EPS) {
        this.nextT = bestT;
        return STOP_LIMIT;
      }
      this.cached = false;
      if (this.inOrder) this.maxS(p + P_CLOCK, bestT);
      if ((st[p + P_FLIP] as number) === 1) this.drainFlip(bestT);
      this.maxS(p + P_LAST_CMD, bestT);

      if (bestKind === DUE) {
        this.setS(p + P_REF_PENDING, 1);
        this.blockVersion++;
        continue;
      }
      // One row and one column command per slot of the channel's controller (command_bus:
      // channel): a taken slot moves every candidate of this port on that lane to the next one.
      const bus = this.bus;
      if (bus !== null) {
        const lane = bestKind === COL ? COL_LANE : ROW_LANE;
        const tick = bus.tickOf(bestT, lane);
        // An ACT holds the row lane for several slots.
        const n =
          bestKind === ROW && (st[(this.eB[bestE] as number) + B_ROW] as number) < 0 ? bus.actSlots : 1;
        // act_edge: rising (Ramulator's HBM3): an ACT only on a rising CK edge, so when the row lane's
        // slot is shorter than a CK, only every (CK / slot)-th slot; the port's row candidates move to it.
        if (n > 1 && cfg.actEdgeSlots > 1 && tick % cfg.actEdgeSlots !== 0) {
          this.setS(
            p + P_CMDMIN,
            (tick - (tick % cfg.actEdgeSlots) + cfg.actEdgeSlots) * (bus.slotNs[lane] as number),
          );
          continue;
        }
        const clash = bus.clash(tick, lane, n);
        if (clash >= 0) {
          this.setS(
            p + (lane === COL_LANE ? P_CMDMIN_COL : P_CMDMIN),
            (tick + clash + 1) * (bus.slotNs[lane] as number),
          );
          continue;
        }
        for (let i = 0; i < n; i++) this.book(tick + i, lane);
      }
      if (bestKind === REF) {
        // A prediction that refreshes for two tREFI without a row or column command waits on
        // a peer port (the channel's refresh order, refresh_scope: channel): it cannot finish alone.
        if (predicting) {
          if (progressT < 0) progressT = bestT;
          else if (bestT - progressT > 2 * t.tREFI) {
            this.nextT = INF;
            return STOP_PEERS;
          }
        }
        this.refreshCommand(bestT);
        continue;
      }
      progressT = bestT;

      const e = bestE;
      const o = e * E_STRIDE;
      const b = this.eB[e] as number;
      const kind = this.eKind[e] as number;
      const r = this.eReq[e] as number;
      const ro = r * R_STRIDE;

      if (bestKind === ROW) {
        const g = this.eG[e] as number;
        if ((st[b + B_ROW] as number) < 0) {
          // ACT
          const time = bestT;
          const fawI = st[p + P_FAWI] as number;
          this.setS(b + B_ROW, this.eRow[e] as number);
          this.setS(b + B_ACT, time + t.tRC);
          this.setS(b + B_RD, time + this.rcdRd);
          this.setS(b + B_WR, time + this.rcdWr);
          this.setS(b + B_PRE, time + this.actToPre);
          this.setS(g + G_ACT, time + t.tRRD_L);
          this.maxS(p + P_ACT, time + t.tRRD_S);
          this.setS(p + P_FAW + fawI, time);
          this.setS(p + P_FAWI, (fawI + 1) & 3);
          this.setS(p + P_ROWBUS, time + t.actCmd);
          this.maxS(p + P_PREAB, time + this.actToPre);
          this.maxS(p + P_REFAB, time + this.actToRef);
          if ((st[p + P_OPEN] as number) === 0)
            this.setS(p + P_ACT_SINCE, Math.max(time, st[p + P_ACT_END] as number));
          this.addS(p + P_OPEN, 1);
          this.addS(p + P_ACTS, 1);
          if (this.commandLog !== null)
            this.logCommand(CMD_ACT, time, this.eBank[e] as number, this.eRow[e] as number, 1);
          if (this.capped) this.setS(b + B_HITS, 0);
          if ((ed[o + E_STATE] as number) !== 1) {
            this.addS(b + B_ACTIVE, 1);
            this.addS(p + P_ACTIVE, 1);
            this.setE(o + E_STATE, 1);
            this.promote(e);
            // Ramulator moves the activating request out of its queue: one burst's room.
            if ((ed[o + E_ISSUED] as number) === 0 || cfg.activeBurst) {
              this.setOccupancy(kind, (st[p + (kind === READ ? P_RQ : P_WQ)] as number) - 1, time);
            }
          }
          this.classify(e, 2);
          this.admit(time);
        } else {
          // PRE (row conflict)
          this.closeBank(b, bestT);
          this.setS(p + P_ROWBUS, bestT + t.preCmd);
          this.classify(e, 3);
        }
        continue;
      }

      // Column command(s).
      const issued = ed[o + E_ISSUED] as number;
      const total = this.eBursts[e] as number;
      const opened = (ed[o + E_STATE] as number) === 1;
      // active_buffer burst: only the burst the ACT was for has priority; it goes alone.
      let k = closedForm === BURST || (opened && cfg.activeBurst) ? 1 : total - issued;
      // closed_form horizon: only the bursts due by the limit (the per-burst schedule exactly).
      if (k > 1 && closedForm === HORIZON) {
        k = Math.min(k, Math.max(1, Math.floor((limit + EPS - bestT) / period) + 1));
      }
      // The bursts of this run that nothing queued can come between (before any other
      // candidate's earliest time) go back to back in closed form (closed_form run: even past
      // the limit, so a request arriving meanwhile queues behind them).
      if (k > 1 && otherT < INF) {
        k = Math.min(k, Math.max(1, Math.floor((otherT - EPS - bestT) / period) + 1));
      }
      // ... and up to the burst that frees enough room to admit a waiting entry of its kind.
      // (An entry that activated its bank left one burst's room at the ACT.)
      const preFreed = opened && (issued === 0 || cfg.activeBurst) ? 1 : 0;
      const ovHead = st[p + (kind === READ ? P_OVR : P_OVW)] as number;
      const waiting = this.overflow[kind] as number[];
      if (k > 1 && ovHead < waiting.length) {
        const cap = kind === READ ? cfg.readQueue : cfg.writeQueue;
        const need =
          (this.eBursts[waiting[ovHead] as number] as number) -
          (cap -
            (st[p + (kind === READ ? P_RQ : P_WQ)] as number) -
            this.peerSum(kind === READ ? P_RQ : P_WQ));
        const until = Math.max(1, need + preFreed);
        if (until < k) k = until;
      }
      // ... and up to the next burst whose command slot another command took.
      if (bus !== null && k > 1) {
        for (let i = 1; i < k; i++) {
          const tick = bus.tickOf(bestT + i * period, COL_LANE);
          if (bus.taken(tick, COL_LANE)) {
            k = i;
            break;
          }
          this.book(tick, COL_LANE);
        }
      }
      // ... and, under a row-hit cap, up to the cap of hits going ahead of an older request to
      // another row of the bank (they are counted).
      if (this.capped && (ed[o + E_PRIO] as number) === 0 && this.bypassing(this.eBank[e] as number)) {
        const left = this.hitCap - (st[b + B_HITS] as number);
        if (left < k) k = Math.max(1, left);
        this.addS(b + B_HITS, k);
      }
      const first = bestT;
      const last = first + (k - 1) * period;
      if (this.inOrder) this.maxS(p + P_CLOCK, last);
      this.maxS(p + P_LAST_CMD, last);
      const g = this.eG[e] as number;
      const sid = this.eSid[e] as number;
      if (kind === READ) {
        this.maxS(b + B_PRE, last + this.rdToPre);
        this.maxS(g + G_RD, last + t.tCCD_L);
        for (let s = 0; s < nSids; s++) {
          this.maxS(sidBase + s * SID_STRIDE + S_RD, last + (s === sid ? t.tCCD_S : t.tCCD_R));
        }
        this.maxS(p + P_RD, last + t.tBL);
        this.maxS(p + P_WR, last + t.tRTW);
        this.maxS(p + P_PREAB, last + this.rdToPre);
        this.addS(p + P_RD_BURSTS, k);
      } else {
        this.maxS(b + B_PRE, last + this.wrToPre);
        this.maxS(g + G_WR, last + t.tCCD_L);
        this.maxS(g + G_RD, last + this.wrToRdL);
        this.maxS(sidBase + sid * SID_STRIDE + S_WR, last + t.tCCD_S);
        this.maxS(p + P_WR, last + t.tBL);
        this.maxS(p + P_RD, last + this.wrToRdS);
        this.maxS(p + P_PREAB, last + this.wrToPre);
        this.addS(p + P_WR_BURSTS, k);
      }
      this.setS(p + P_COLBUS, last + t.colCmd);
      if (this.commandLog !== null)
        this.logCommand(
          kind === READ ? CMD_RD : CMD_WR,
          first,
          this.eBank[e] as number,
          this.eRow[e] as number,
          k,
        );
      this.classify(e, 1);
      this.setE(o + E_ISSUED, issued + k);
      // Each burst leaves the queue at its own command (the first one left at its ACT).
      const occAt = p + (kind === READ ? P_RQ : P_WQ);
      for (let i = preFreed; i < k; i++)
        this.setOccupancy(kind, (st[occAt] as number) - 1, first + i * period);
      if ((rd[ro + R_FIRST] as number) < 0) {
        this.setR(ro + R_FIRST, first);
        if (!predicting) this.started[this.startedCount++] = r;
      }
      this.setR(ro + R_LAST, last);
      const left = (rd[ro + R_LEFT] as number) - k;
      this.setR(ro + R_LEFT, left);
      if (left === 0 && !predicting) this.finished[this.finishedCount++] = r;
      if (opened && cfg.activeBurst && issued + k < total) {
        // The rest of the run waits as ordinary row hits; its bank may close before them.
        this.addS(b + B_ACTIVE, -1);
        this.addS(p + P_ACTIVE, -1);
        this.blockVersion++;
        this.setE(o + E_STATE, 0);
        this.demote(e);
      } else if (issued + k === total) {
        // The run is done: off the queue; the page policy may close the row (auto-precharge).
        if ((ed[o + E_STATE] as number) === 1) {
          this.addS(b + B_ACTIVE, -1);
          this.addS(p + P_ACTIVE, -1);
          this.blockVersion++; // a PRE of this bank may be unblocked
        }
        this.setE(o + E_STATE, 2);
        this.unlink(e);
        if (
          (st[b + B_ACTIVE] as number) === 0 &&
          this.page.closeAfterRun(this.eBank[e] as number, this.eRow[e] as number, this)
        ) {
          this.closeBank(b, st[b + B_PRE] as number);
        }
      }
      this.admit(last);
      if (predicting && (this.rd[target * R_STRIDE + R_LEFT] as number) === 0) {
        this.nextT = last;
        return STOP_TARGET;
      }
    }
  }
}
