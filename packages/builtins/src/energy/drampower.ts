import { drampowerTrace, type HbmCommandLog } from "../hbm-v2/command-log.js";
import type { HbmCtrlV2Config } from "../hbm-v2/params.js";
import { HBM_POWER } from "./hbm.js";

// DRAMPower 5 has no HBM standard: a pseudo-channel of `hbm_ctrl_v2` is given to it as one DDR4
// rank, whose core formulas are the ones the HBM energy table uses (docs/energy.md), with the
// preset's VDD and currents and the node's timing in clocks of tCK.

/** Clocks of `ns` at `tCK`, rounded up. */
function clocks(ns: number, tCK: number): number {
  return Math.ceil(ns / tCK - 1e-9);
}

/**
 * The memspec (DRAMUtils' JSON, `memspec.memoryType` DDR4) DRAMPower needs for one pseudo-channel
 * of `config`: the banks of every SID as one rank, the burst as `burstLength / dataRate` = tBL in
 * clocks (so DRAMPower's RD and WR energy is VDD (IDD4R - IDD3N) tBL), the currents of the preset
 * (`HBM_POWER`), I_beta = IDD0 and rho = 1 (DRAMPower's defaults), no VPP and no I/O termination
 * (the core energy is compared; the TSV I/O is kernbench's own cost).
 */
export function drampowerMemspec(config: HbmCtrlV2Config): Record<string, unknown> {
  const t = config.timing;
  const ck = (ns: number) => clocks(ns, t.tCK);
  const power = HBM_POWER[config.preset];
  const groups = config.sids * config.bankGroups;
  const banks = groups * config.banksPerGroup;
  const dataRate = 4;
  const burstLength = ck(t.tBL) * dataRate;
  const width = (config.burstBytes * 8) / burstLength;
  const zero = 0;
  return {
    memspec: {
      memoryId: `kernbench_${config.preset}_pseudo_channel`,
      memoryType: "DDR4",
      memarchitecturespec: {
        nbrOfChannels: 1,
        nbrOfDevices: 1,
        nbrOfRanks: 1,
        nbrOfBanks: banks,
        nbrOfBankGroups: groups,
        nbrOfRows: 16384,
        nbrOfColumns: 32,
        burstLength,
        dataRate,
        width,
        RefMode: 1,
      },
      mempowerspec: {
        vdd: power.vdd,
        idd0: power.idd0 / 1000,
        idd2n: power.idd2n / 1000,
        idd3n: power.idd3n / 1000,
        idd4r: power.idd4r / 1000,
        idd4w: power.idd4w / 1000,
        idd6n: power.idd2n / 1000,
        idd2p: power.idd2n / 1000,
        idd3p: power.idd3n / 1000,
        idd5B: power.idd5b / 1000,
        idd5F2: power.idd5b / 1000,
        idd5F4: power.idd5b / 1000,
        vpp: zero,
        ipp0: zero,
        ipp2n: zero,
        ipp3n: zero,
        ipp4r: zero,
        ipp4w: zero,
        ipp6n: zero,
        ipp2p: zero,
        ipp3p: zero,
        ipp5B: zero,
        ipp5F2: zero,
        ipp5F4: zero,
        vddq: power.vdd,
        iBeta_vdd: power.idd0 / 1000,
        iBeta_vpp: zero,
      },
      memtimingspec: {
        tCK: t.tCK * 1e-9,
        CKE: 1,
        CKESR: 1,
        RAS: ck(t.tRAS),
        RC: ck(t.tRC),
        RCD: ck(t.tRCD_RD),
        RL: ck(t.tCL),
        RPRE: 1,
        RTP: ck(t.tRTP),
        WL: ck(t.tCWL),
        WPRE: 1,
        WR: ck(t.tWR),
        XP: 1,
        XS: ck(t.tRFC),
        REFM: 1,
        REFI: ck(t.tREFI),
        RFC1: ck(t.tRFC),
        RFC2: ck(t.tRFC),
        RFC4: ck(t.tRFC),
        RP: ck(t.tRP),
        DQSCK: 1,
        CCD_S: ck(t.tCCD_S),
        CCD_L: ck(t.tCCD_L),
        FAW: ck(t.tFAW),
        RRD_S: ck(t.tRRD_S),
        RRD_L: ck(t.tRRD_L),
        WTR_S: ck(t.tWTR_S),
        WTR_L: ck(t.tWTR_L),
        XPDLL: 1,
        XSDLL: ck(t.tRFC),
        AL: 0,
        ACTPDEN: 1,
        PRPDEN: 1,
        REFPDEN: 1,
        RTRS: 1,
      },
      bankwisespec: { factRho: 1 },
      memimpedancespec: {
        C_total_ck: zero,
        C_total_cb: zero,
        C_total_rb: zero,
        C_total_wb: zero,
        C_total_dqs: zero,
        R_eq_ck: 1,
        R_eq_cb: 1,
        R_eq_rb: 1,
        R_eq_wb: 1,
        R_eq_dqs: 1,
      },
      prepostamble: {
        read_zeroes: zero,
        write_zeroes: zero,
        read_ones: zero,
        write_ones: zero,
        read_zeroes_to_ones: zero,
        write_zeroes_to_ones: zero,
        write_ones_to_zeroes: zero,
        read_ones_to_zeroes: zero,
        readMinTccd: zero,
        writeMinTccd: zero,
      },
    },
  };
}

/** One file of a DRAMPower input folder: its name and text. */
export interface DramPowerFile {
  readonly name: string;
  readonly text: string;
}

/**
 * What `--dram-trace DIR` writes for one `hbm_ctrl_v2` instance: `memspec.json` (every pseudo-channel
 * is alike) and `pc<p>.csv` per port `p` (channel floor(p / pseudo_channels)), each ending at `endNs`.
 * Run DRAMPower's CLI as `cli -m memspec.json -t pc0.csv -j pc0.json`.
 */
export function drampowerFiles(
  config: HbmCtrlV2Config,
  logs: readonly HbmCommandLog[],
  endNs: number,
): DramPowerFile[] {
  return [
    { name: "memspec.json", text: `${JSON.stringify(drampowerMemspec(config), null, 2)}\n` },
    ...logs.map((log, p) => ({ name: `pc${p}.csv`, text: drampowerTrace(log, config, endNs) })),
  ];
}
