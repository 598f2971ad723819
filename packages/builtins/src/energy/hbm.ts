import type { EnergyCost, EnergyTable } from "@kb/spec";
import { resolveTopology } from "@kb/topology";
import {
  type HbmCtrlV2Config,
  type HbmCtrlV2Params,
  hbmCtrlV2Config,
  hbmCtrlV2Params,
} from "../hbm-v2/params.js";
import { HBM_PRESETS, type HbmPresetName, type HbmTiming } from "../hbm-v2/presets.js";

// HBM energy from the presets' supply currents, with DRAMPower 5's core formulas (docs/energy.md):
// per pseudo-channel, I_beta = IDD0 (DRAMPower's default), rho = 1.
//   ACT:  VDD (IDD0 - IDD3N) tRAS        PRE:  VDD (IDD0 - IDD2N) tRP
//   RD:   VDD (IDD4R - IDD3N) tBL        WR:   VDD (IDD4W - IDD3N) tBL
//   REF:  VDD (IDD5B - IDD3N) tRFC (all-bank; a per-bank REF: tRFCpb / banks)
//   background: VDD IDD2N per pseudo-channel, over the whole run, plus VDD (IDD3N - IDD2N) while a
//   bank is open or refreshing (DRAMPower's active standby, rho = 1).
// mA x V x ns = pJ.

/** Supply currents of one pseudo-channel, mA, and its core voltage, V. */
export interface HbmPower {
  readonly vdd: number;
  readonly idd0: number;
  readonly idd2n: number;
  readonly idd3n: number;
  readonly idd4r: number;
  readonly idd4w: number;
  readonly idd5b: number;
  /** Where the values come from. */
  readonly source: string;
}

const ASSUMED =
  "assumption: no HBM vendor publishes IDD values (DRAMSys' HBM2 memspec has zeros); chosen so a row-hit read costs about 1.2-1.5 pJ/bit in the core and ACT+PRE about 1 nJ per 1 KiB row, the range O'Connor et al. (MICRO 2017, Fine-Grained DRAM) give for HBM2";

const HBM2_POWER: HbmPower = {
  vdd: 1.2,
  idd0: 60,
  idd2n: 40,
  idd3n: 42,
  idd4r: 202,
  idd4w: 190,
  idd5b: 250,
  source: `VDD 1.2 V (JESD235); currents per pseudo-channel: ${ASSUMED}`,
};

const HBM3_POWER: HbmPower = {
  vdd: 1.1,
  idd0: 55,
  idd2n: 30,
  idd3n: 32,
  idd4r: 260,
  idd4w: 250,
  idd5b: 200,
  source: `VDD 1.1 V (JESD238); currents per pseudo-channel: ${ASSUMED}`,
};

/** The supply of each preset: hbm2e and hbm3e keep their base part's currents (at their own timings). */
export const HBM_POWER: Readonly<Record<HbmPresetName, HbmPower>> = Object.freeze({
  hbm2: HBM2_POWER,
  hbm2e: HBM2_POWER,
  hbm3: HBM3_POWER,
  hbm3e: HBM3_POWER,
});

/** Energy per command of one pseudo-channel, pJ, and its background power, mW. */
export interface HbmCommandEnergy {
  readonly actPj: number;
  readonly prePj: number;
  readonly rdPj: number;
  readonly wrPj: number;
  /** One REFab (all banks of the pseudo-channel). */
  readonly refPj: number;
  /** One REFpb (one bank). */
  readonly refPerBankPj: number;
  readonly backgroundMw: number;
  /** What active standby adds to the precharged one, mW. */
  readonly activeMw: number;
}

/** DRAMPower's per-command energies for `power` at `timing` (`banks` per pseudo-channel). */
export function hbmCommandEnergy(power: HbmPower, timing: HbmTiming, banks: number): HbmCommandEnergy {
  const { vdd, idd0, idd2n, idd3n, idd4r, idd4w, idd5b } = power;
  return {
    actPj: vdd * (idd0 - idd3n) * timing.tRAS,
    prePj: vdd * (idd0 - idd2n) * timing.tRP,
    rdPj: vdd * (idd4r - idd3n) * timing.tBL,
    wrPj: vdd * (idd4w - idd3n) * timing.tBL,
    refPj: vdd * (idd5b - idd3n) * timing.tRFC,
    refPerBankPj: (vdd * (idd5b - idd3n) * timing.tRFCpb) / banks,
    backgroundMw: vdd * idd2n,
    activeMw: vdd * (idd3n - idd2n),
  };
}

/** The through-silicon I/O between the DRAM dies and the base die, pJ per bit moved. */
const TSV_PJ_PER_BIT = 0.25;
const TSV_SOURCE =
  "assumption: TSV I/O to the base die, below the 0.5-1 pJ/bit of an interposer HBM PHY (O'Connor et al., MICRO 2017) since the compute sits on the base die";

/** The geometry `cube.hbm` gives a controller when the topology writes none: the topology schema's defaults. */
const DEFAULT_GEOMETRY = (() => {
  const {
    channels,
    pseudo_channels,
    pc_bw_gbs,
    access_latency_ns,
    interleave_bytes,
    flit_bytes,
    capacity_bytes,
  } = resolveTopology({ name: "defaults" }).cube.hbm;
  return {
    channels,
    pseudo_channels,
    pc_bw_gbs,
    access_latency_ns,
    interleave_bytes,
    flit_bytes,
    capacity_bytes,
  };
})();

const SOURCE_V2 =
  "DRAMPower 5 core formulas (tukl-msd/DRAMPower, core_calculation_DDR4.cpp) on the preset's IDD and timing";

/** `hbm_ctrl_v2`: per command it counts, from the preset's currents and the node's timing. */
export const HBM_CTRL_V2_ENERGY: EnergyTable = {
  costs: costsOf(hbmV2Values(hbmCtrlV2Params.parse(DEFAULT_GEOMETRY)), [
    ["act_pj", "act", "One ACT: VDD (IDD0 - IDD3N) tRAS."],
    ["pre_pj", "pre", "One bank precharged: VDD (IDD0 - IDD2N) tRP."],
    ["rd_pj", "rd", "One read burst (burst_bytes): VDD (IDD4R - IDD3N) tBL."],
    ["wr_pj", "wr", "One write burst: VDD (IDD4W - IDD3N) tBL."],
    ["ref_pj", "ref", "One refresh: VDD (IDD5B - IDD3N) tRFC for REFab, tRFCpb / banks for REFpb."],
    ["background_mw", "time_ns", "Standby of every pseudo-channel: VDD IDD2N x channels x pseudo_channels."],
    [
      "active_pj",
      "active_ns",
      "Active standby over precharged, while a pseudo-channel has a bank open or refreshing: VDD (IDD3N - IDD2N).",
    ],
    ["io_pj_per_bit", "bytes", "TSV I/O of each byte read or written."],
  ]),
  values: (params) => hbmV2Values(params as HbmCtrlV2Params),
};

function hbmV2Values(params: HbmCtrlV2Params): Record<string, number> {
  const energy = hbmCtrlV2CommandEnergy(hbmCtrlV2Config(params));
  return {
    act_pj: energy.actPj,
    pre_pj: energy.prePj,
    rd_pj: energy.rdPj,
    wr_pj: energy.wrPj,
    ref_pj: energy.refPj,
    background_mw: energy.backgroundMw * portsOf(params),
    active_pj: energy.activeMw, // mW x ns = pJ: charged per ns of active_ns
    io_pj_per_bit: TSV_PJ_PER_BIT,
  };
}

/**
 * One pseudo-channel's energy per command of `hbm_ctrl_v2` under `config` (its preset's currents,
 * its timing), `refPj` the refresh command its policy issues (REFab, or REFpb).
 */
export function hbmCtrlV2CommandEnergy(config: HbmCtrlV2Config): HbmCommandEnergy {
  const banks = config.sids * config.bankGroups * config.banksPerGroup;
  const energy = hbmCommandEnergy(HBM_POWER[config.preset], config.timing, banks);
  return config.refresh === "per_bank" ? { ...energy, refPj: energy.refPerBankPj } : energy;
}

function portsOf(params: { readonly channels?: number; readonly pseudo_channels?: number }): number {
  return (params.channels ?? 8) * (params.pseudo_channels ?? 2);
}

/**
 * `hbm_ctrl_v1` counts bytes, not commands: a byte costs hbm3's burst energy over its 32 bytes, plus
 * one ACT and PRE per `row_bytes` (every row read whole: a lower bound), and the stack draws hbm3's
 * standby and refresh power.
 */
export const HBM_CTRL_V1_ENERGY: EnergyTable = {
  costs: costsOf(hbmV1Values({}), [
    [
      "access_pj_per_bit",
      "bytes",
      "A bit read or written: hbm3's (RD + WR) / 2 per 32-byte burst, plus TSV I/O.",
    ],
    [
      "row_pj_per_bit",
      "bytes",
      "ACT + PRE of hbm3 spread over a whole row (row_bytes): every row read whole.",
    ],
    [
      "background_mw",
      "time_ns",
      "Standby and refresh of every pseudo-channel at hbm3's IDD2N and tRFC / tREFI.",
    ],
  ]),
  values: (params) =>
    hbmV1Values(params as { channels?: number; pseudo_channels?: number; row_bytes?: number }),
};

function hbmV1Values(params: {
  readonly channels?: number;
  readonly pseudo_channels?: number;
  readonly row_bytes?: number;
}): Record<string, number> {
  const timing = HBM_PRESETS.hbm3.timing;
  const energy = hbmCommandEnergy(HBM_POWER.hbm3, timing, 16);
  const burstBits = 32 * 8;
  const rowBits = (params.row_bytes ?? 1024) * 8;
  return {
    access_pj_per_bit: (energy.rdPj + energy.wrPj) / 2 / burstBits + TSV_PJ_PER_BIT,
    row_pj_per_bit: (energy.actPj + energy.prePj) / rowBits,
    background_mw: (energy.backgroundMw + energy.refPj / timing.tREFI) * portsOf(params),
  };
}

function costsOf(values: Record<string, number>, rows: readonly [string, string, string][]): EnergyCost[] {
  return rows.map(([name, per, description]) => ({
    name,
    per,
    value: values[name] ?? 0,
    description,
    source:
      name.startsWith("io_") || name === "access_pj_per_bit" ? `${SOURCE_V2}; ${TSV_SOURCE}` : SOURCE_V2,
  }));
}
