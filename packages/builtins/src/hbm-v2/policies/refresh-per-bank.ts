import type { HbmRefreshPolicy } from "./policy.js";

// Journaled state: slot 0 the next bank (round robin), slot 1 the earliest next REFpb (tRREFD).
const NEXT_BANK = 0;
const NEXT_REFPB = 1;

/**
 * Per-bank refresh (Ramulator's `PerBank`): every tREFIpb one bank, round robin: PREpb if its row
 * is open (once no run holds it), then REFpb (tRC after its ACT, tRREFD after the previous
 * REFpb); that bank's next ACT waits tRFCpb, other banks' tRREFD.
 */
export const perBankRefresh: HbmRefreshPolicy = {
  name: "per_bank",
  interval: (t) => t.tREFIpb,
  commandTime(port, due) {
    const bank = port.slot(NEXT_BANK);
    const rowBus = port.rowBusAt();
    if (port.openRow(bank) >= 0) {
      if (port.activeRuns(bank) > 0) return Number.POSITIVE_INFINITY;
      return Math.max(port.preAt(bank), rowBus, due);
    }
    const t = port.timing;
    // ACT->REFpb same bank tRC and PRE->REFpb tRP: the bank's next ACT + (ACT - PRE length).
    return Math.max(
      port.actAt(bank) + t.actCmd - t.preCmd,
      port.slot(NEXT_REFPB),
      port.portActAt(),
      rowBus,
      due,
    );
  },
  issue(port, time) {
    const t = port.timing;
    const bank = port.slot(NEXT_BANK);
    port.useRowBus(time);
    if (port.openRow(bank) >= 0) {
      port.precharge(bank, time); // PREpb
      return false;
    }
    // REFpb
    port.holdAct(bank, time + t.tRFCpb + t.preCmd - t.actCmd);
    port.holdAct(-1, time + t.tRREFD + t.preCmd - t.actCmd);
    port.setSlot(NEXT_REFPB, time + t.tRREFD);
    port.setSlot(NEXT_BANK, (bank + 1) % port.banks);
    return true;
  },
  idleKeep: (banks) => banks + 2,
  skipped(port, count) {
    port.setSlot(NEXT_BANK, (port.slot(NEXT_BANK) + count) % port.banks);
  },
};
