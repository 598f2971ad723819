import type { HbmRefreshPolicy } from "./policy.js";

/**
 * All-bank refresh (Ramulator's `AllBank`): every tREFI (every pseudo-channel at the same times
 * k x tREFI), PREab of the open banks once no run holds one (tRAS, tRTP, write recovery), then
 * REFab tRP later (and tRC after the last ACT); no ACT for tRFC after it.
 */
export const allBankRefresh: HbmRefreshPolicy = {
  name: "all_bank",
  interval: (t) => t.tREFI,
  commandTime(port, due) {
    const rowBus = port.rowBusAt();
    if (port.openBanks() > 0) {
      if (port.activeRuns(-1) > 0) return Number.POSITIVE_INFINITY; // PREab would close an active row
      return Math.max(port.preAllAt(), rowBus, due);
    }
    return Math.max(port.refAllAt(), rowBus, due);
  },
  issue(port, time) {
    const t = port.timing;
    port.useRowBus(time);
    if (port.openBanks() > 0) {
      // PREab
      for (let bank = 0; bank < port.banks; bank++) if (port.openRow(bank) >= 0) port.precharge(bank, time);
      return false;
    }
    // REFab: ACT tRFC later (counted from the REF's last cycle to the ACT's).
    const refToAct = t.tRFC + t.preCmd - t.actCmd;
    for (let bank = 0; bank < port.banks; bank++) port.holdAct(bank, time + refToAct);
    return true;
  },
  idleKeep: () => 2,
};
