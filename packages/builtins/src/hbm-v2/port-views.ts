import {
  B_ACT,
  B_ACTIVE,
  B_PRE,
  B_ROW,
  BANK_STRIDE,
  E_NEXT,
  E_STRIDE,
  LIST_PRIO,
  LIST_WRITES,
  P_ACT,
  P_ACTIVE,
  P_CMDMIN,
  P_OPEN,
  P_PREAB,
  P_REF_BANK,
  P_REFAB,
  P_REFPB,
  P_ROWBUS,
} from "./layout.js";
import type { HbmQueueView, HbmRefreshPort } from "./policies/policy.js";
import type { HbmTiming } from "./presets.js";
import { PortScan } from "./scan.js";

/**
 * What the policies see of a port's state (banks by flat index): the refresh policy's
 * {@link HbmRefreshPort} (read and act on banks and the row bus) and the page policy's
 * {@link HbmQueueView} (queued hits and conflicts). The scheduler closes banks its own way
 * (`closeBank`: the bookkeeping of a PRE).
 */
export abstract class PortViews extends PortScan implements HbmRefreshPort, HbmQueueView {
  protected abstract closeBank(b: number, time: number): void;

  // ---- HbmRefreshPort: what a refresh policy reads and does (banks by flat index) -----------

  get timing(): HbmTiming {
    return this.config.timing;
  }
  get banks(): number {
    return this.nBanks;
  }
  openRow(bank: number): number {
    return this.st[this.bankBase + bank * BANK_STRIDE + B_ROW] as number;
  }
  openBanks(): number {
    return this.st[this.portBase + P_OPEN] as number;
  }
  activeRuns(bank: number): number {
    return this.st[
      bank < 0 ? this.portBase + P_ACTIVE : this.bankBase + bank * BANK_STRIDE + B_ACTIVE
    ] as number;
  }
  preAt(bank: number): number {
    return this.st[this.bankBase + bank * BANK_STRIDE + B_PRE] as number;
  }
  actAt(bank: number): number {
    return this.st[this.bankBase + bank * BANK_STRIDE + B_ACT] as number;
  }
  preAllAt(): number {
    return this.st[this.portBase + P_PREAB] as number;
  }
  refAllAt(): number {
    return this.st[this.portBase + P_REFAB] as number;
  }
  portActAt(): number {
    return this.st[this.portBase + P_ACT] as number;
  }
  rowBusAt(): number {
    return Math.max(this.st[this.portBase + P_ROWBUS] as number, this.st[this.portBase + P_CMDMIN] as number);
  }
  precharge(bank: number, time: number): void {
    this.closeBank(this.bankBase + bank * BANK_STRIDE, time);
  }
  holdAct(bank: number, time: number): void {
    this.maxS(bank < 0 ? this.portBase + P_ACT : this.bankBase + bank * BANK_STRIDE + B_ACT, time);
  }
  useRowBus(time: number): void {
    this.setS(this.portBase + P_ROWBUS, time + this.config.timing.preCmd);
  }
  slot(i: 0 | 1): number {
    return this.st[this.portBase + (i === 0 ? P_REF_BANK : P_REFPB)] as number;
  }
  setSlot(i: 0 | 1, value: number): void {
    this.setS(this.portBase + (i === 0 ? P_REF_BANK : P_REFPB), value);
  }

  // ---- HbmQueueView: what a page policy sees -------------------------------------------------

  queuedHit(bank: number, row: number): boolean {
    return this.queued(bank, row, true);
  }
  queuedConflict(bank: number, row: number): boolean {
    return this.queued(bank, row, false);
  }

  /** Whether a queued entry targets `bank` at `row` (`same`) or at another row. */
  private queued(bank: number, row: number, same: boolean): boolean {
    const ed = this.ed;
    for (let list = LIST_PRIO; list <= LIST_WRITES; list++) {
      for (let e = this.st[this.listHead(list)] as number; e >= 0; e = ed[e * E_STRIDE + E_NEXT] as number) {
        if (this.eBank[e] === bank && (this.eRow[e] === row) === same) return true;
      }
    }
    return false;
  }
}
