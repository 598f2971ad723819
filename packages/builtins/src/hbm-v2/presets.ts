/**
 * JEDEC timing presets of `hbm_ctrl_v2`, in ns.
 *
 * Sources: Ramulator 2.1 (CMU SAFARI `ramulator2`, commit c5b1c3a, `python/ramulator/dram/hbm3.py`
 * and `hbm2.py`), whose `HBM3_6400Mbps` and `HBM2_2000Mbps` presets carry the JEDEC JESD238 /
 * JESD235 values (listed in ../shared/fidelity/hbm-reference.md). The presets give clock counts;
 * here every value is the count times tCK, so the numbers below read `count x tCK`.
 *
 * `hbm2e` and `hbm3e` are derived, not published presets: the base part's analog timings (ns)
 * are kept and rounded up to whole clocks of the faster tCK, while the data-bus clock counts
 * (tBL, tCCD_S, tCCD_L, tCCD_R) keep their counts and so scale with tCK.
 */

/** Every timing of the controller, ns. */
export interface HbmTiming {
  /** Clock period (CK), ns. */
  readonly tCK: number;
  /** Data-bus time of one burst (BL8 x 32 bit on HBM3, BL4 x 64 bit on HBM2). */
  readonly tBL: number;
  /** RD to first read data (CAS latency). */
  readonly tCL: number;
  /** WR to first write data (CAS write latency). */
  readonly tCWL: number;
  /** ACT to RD. */
  readonly tRCD_RD: number;
  /** ACT to WR. */
  readonly tRCD_WR: number;
  /** PRE to ACT, same bank. */
  readonly tRP: number;
  /** ACT to PRE, same bank. */
  readonly tRAS: number;
  /** ACT to ACT, same bank. */
  readonly tRC: number;
  /** Write recovery: end of write data to PRE. */
  readonly tWR: number;
  /** RD to PRE. */
  readonly tRTP: number;
  /** Column to column, same SID (different bank group). */
  readonly tCCD_S: number;
  /** Column to column, same bank group. */
  readonly tCCD_L: number;
  /** RD to RD across SIDs. */
  readonly tCCD_R: number;
  /** ACT to ACT, different bank group. */
  readonly tRRD_S: number;
  /** ACT to ACT, same bank group. */
  readonly tRRD_L: number;
  /** Window of four ACTs. */
  readonly tFAW: number;
  /** End of write data to RD, different bank group. */
  readonly tWTR_S: number;
  /** End of write data to RD, same bank group. */
  readonly tWTR_L: number;
  /** RD to WR turnaround. */
  readonly tRTW: number;
  /** All-bank refresh cycle time. */
  readonly tRFC: number;
  /** All-bank refresh interval. */
  readonly tREFI: number;
  /** Per-bank refresh cycle time. */
  readonly tRFCpb: number;
  /** Per-bank refresh interval (one bank every tREFIpb). */
  readonly tREFIpb: number;
  /** REFpb to REFpb and REFpb to ACT of another bank. */
  readonly tRREFD: number;
  /** Length of an ACT on the row command bus (Ramulator times constraints from a command's last cycle). */
  readonly actCmd: number;
  /** Length of a PRE or REF on the row command bus. */
  readonly preCmd: number;
  /** Length of a RD or WR on the column command bus. */
  readonly colCmd: number;
  /** Fixed controller front-end latency: a request is visible to the scheduler this long after it arrives. */
  readonly frontend: number;
}

/** The presets `cube.hbm.preset` names. */
export type HbmPresetName = "hbm2" | "hbm2e" | "hbm3" | "hbm3e";

/** A preset: its timing and what it models, in words. */
export interface HbmPreset {
  readonly name: HbmPresetName;
  /** Data rate per pin, Gb/s. */
  readonly gbps: number;
  readonly source: string;
  readonly timing: HbmTiming;
}

/** HBM3, 6.4 Gb/s: Ramulator 2.1 `HBM3_6400Mbps` (JESD238), tCK = 0.625 ns (CK 1.6 GHz). */
function hbm3(): HbmTiming {
  const ck = 0.625;
  return {
    tCK: ck,
    tBL: 2 * ck, // nBL 2 (BL8 on a 32-bit pseudo-channel: 32 B)
    tCL: 20 * ck, // nCL 20 = 12.5 ns
    tCWL: 10 * ck, // nCWL 10 = 6.25 ns
    tRCD_RD: 31 * ck, // nRCDRD 31 = 19.375 ns
    tRCD_WR: 15 * ck, // nRCDWR 15 = 9.375 ns
    tRP: 26 * ck, // nRP 26 = 16.25 ns
    tRAS: 45 * ck, // nRAS 45 = 28.125 ns
    tRC: 72 * ck, // nRC 72 = 45 ns
    tWR: 33 * ck, // nWR 33 = 20.625 ns
    tRTP: 9 * ck, // nRTP 9 = 5.625 ns
    tCCD_S: 2 * ck, // nCCDS 2 = 1.25 ns
    tCCD_L: 4 * ck, // nCCDL 4 = 2.5 ns
    tCCD_R: 3 * ck, // nCCDR 3 = 1.875 ns
    tRRD_S: 4 * ck, // nRRDS 4 = 2.5 ns
    tRRD_L: 5 * ck, // nRRDL 5 = 3.125 ns
    tFAW: 24 * ck, // nFAW 24 = 15 ns
    tWTR_S: 7 * ck, // nWTRS 7 = 4.375 ns
    tWTR_L: 10 * ck, // nWTRL 10 = 6.25 ns
    tRTW: 20 * ck, // nRTW 20 = 12.5 ns
    tRFC: 560 * ck, // nRFC 560 = 350 ns (8 Gb per channel: HBM3_16Gb_8hi, JESD238 table 84)
    tREFI: 6240 * ck, // nREFI 6240 = 3.9 us
    tRFCpb: 320 * ck, // nRFCpb 320 = 200 ns
    tREFIpb: 195 * ck, // nREFIpb 195 = 121.875 ns (tREFI / 32 banks)
    tRREFD: 8 * ck, // nRREFD 8 = 5 ns (Ramulator's preset value)
    actCmd: 1.5 * ck, // ACT: 1.5 CK on the row bus (Ramulator HBM3 command_cycles)
    preCmd: 0.5 * ck, // PRE, REF: 0.5 CK (half-cycle row commands)
    colCmd: 1 * ck, // RD, WR: 1 CK
    frontend: 1 * ck, // 1 CK: matches the reference's unloaded hit latency (16.875 ns = 27 CK)
  };
}

/** HBM2, 2 Gb/s: Ramulator 2.1 `HBM2_2000Mbps` (JESD235), tCK = 1 ns (CK 1 GHz). */
function hbm2(): HbmTiming {
  const ck = 1;
  return {
    tCK: ck,
    tBL: 2 * ck, // nBL 2 (BL4 on a 64-bit pseudo-channel: 32 B)
    tCL: 14 * ck, // nCL 14
    tCWL: 5 * ck, // nCWL 5
    tRCD_RD: 14 * ck, // nRCDRD 14
    tRCD_WR: 12 * ck, // nRCDWR 12
    tRP: 14 * ck, // nRP 14
    tRAS: 34 * ck, // nRAS 34
    tRC: 48 * ck, // nRC 48
    tWR: 16 * ck, // nWR 16
    tRTP: 5 * ck, // nRTPL 5
    tCCD_S: 2 * ck, // nCCDS 2
    tCCD_L: 4 * ck, // nCCDL 4
    tCCD_R: 2 * ck, // no SIDs in HBM2: taken as nCCDS
    tRRD_S: 4 * ck, // nRRDS = max(4, 4 ns)
    tRRD_L: 4 * ck, // nRRDL = max(4, 4 ns)
    tFAW: 15 * ck, // nFAW = max(8, 15 ns)
    tWTR_S: 6 * ck, // nWTRS 6
    tWTR_L: 8 * ck, // nWTRL 8
    tRTW: (14 + 2 + 2 - 5) * ck, // nCL + nBL + 2 - nCWL = 13 (Ramulator's HBM2 RD->WR)
    tRFC: 350 * ck, // 350 ns (8 Gb: HBM2_8Gb, JESD235D)
    tREFI: 3900 * ck, // 3.9 us
    tRFCpb: 160 * ck, // 160 ns (REFSB, 8 Gb)
    tREFIpb: 122 * ck, // ceil(3900 / 32 banks)
    tRREFD: 8 * ck, // 8 ns
    actCmd: 2 * ck, // ACT: 2 CK (Ramulator HBM2 command_cycles)
    preCmd: 1 * ck,
    colCmd: 1 * ck,
    frontend: 1 * ck, // 1 CK: matches the reference's unloaded hit latency (21 ns = 21 CK)
  };
}

/** Keys whose clock counts stay fixed when a faster part is derived (they scale with tCK). */
const CLOCK_COUNT_KEYS = [
  "tBL",
  "tCCD_S",
  "tCCD_L",
  "tCCD_R",
  "actCmd",
  "preCmd",
  "colCmd",
  "frontend",
] as const;

/**
 * A faster bin of `base` at `tCK` ns: clock-count keys keep their counts (scaled by tCK), every
 * other timing keeps its ns value rounded up to whole clocks of the new tCK.
 */
function derive(base: HbmTiming, tCK: number): HbmTiming {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(base)) {
    if (key === "tCK") out[key] = tCK;
    else if ((CLOCK_COUNT_KEYS as readonly string[]).includes(key)) out[key] = (value / base.tCK) * tCK;
    else out[key] = Math.ceil(value / tCK - 1e-9) * tCK;
  }
  return out as unknown as HbmTiming;
}

function hbm2e(): HbmTiming {
  // HBM2E, 3.2 Gb/s: CK 1.6 GHz, tCK = 0.625 ns; HBM2_2000Mbps's ns values in whole clocks.
  const t = derive(hbm2(), 0.625);
  // RD->WR is a formula of clock counts in Ramulator's HBM2: nCL + nBL + 2 - nCWL at the new tCK.
  return { ...t, tRTW: t.tCL + t.tBL + 2 * t.tCK - t.tCWL };
}

function hbm3e(): HbmTiming {
  // HBM3E, 9.6 Gb/s: CK 2.4 GHz, tCK = 0.41667 ns; HBM3_6400Mbps's ns values in whole clocks.
  return derive(hbm3(), 1 / 2.4);
}

/** The four presets (`cube.hbm.preset`), every value in ns. */
export const HBM_PRESETS: Readonly<Record<HbmPresetName, HbmPreset>> = Object.freeze({
  hbm2: {
    name: "hbm2",
    gbps: 2,
    source: "JESD235 via Ramulator 2.1 HBM2_2000Mbps (tCK 1 ns)",
    timing: Object.freeze(hbm2()),
  },
  hbm2e: {
    name: "hbm2e",
    gbps: 3.2,
    source: "hbm2 scaled to tCK 0.625 ns (3.2 Gb/s): analog timings kept in ns, bus clock counts kept",
    timing: Object.freeze(hbm2e()),
  },
  hbm3: {
    name: "hbm3",
    gbps: 6.4,
    source: "JESD238 via Ramulator 2.1 HBM3_6400Mbps (tCK 0.625 ns)",
    timing: Object.freeze(hbm3()),
  },
  hbm3e: {
    name: "hbm3e",
    gbps: 9.6,
    source: "hbm3 scaled to tCK 0.4167 ns (9.6 Gb/s): analog timings kept in ns, bus clock counts kept",
    timing: Object.freeze(hbm3e()),
  },
});
