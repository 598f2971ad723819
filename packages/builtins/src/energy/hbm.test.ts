import { describe, expect, it } from "vitest";
import { hbmCtrlV2Params } from "../hbm-v2/params.js";
import { HBM_PRESETS } from "../hbm-v2/presets.js";
import { HBM_CTRL_V1_ENERGY, HBM_CTRL_V2_ENERGY, HBM_POWER, hbmCommandEnergy } from "./hbm.js";

// DRAMPower's core formulas on the presets' currents, by hand (mA x V x ns = pJ; docs/energy.md).

const GEOMETRY = {
  channels: 4,
  pseudo_channels: 2,
  pc_bw_gbs: 16,
  access_latency_ns: 40,
  interleave_bytes: 256,
  flit_bytes: 64,
  capacity_bytes: 2 ** 34,
};

describe("HBM command energy", () => {
  it("hbm3: VDD 1.1 V, tRAS 28.125, tRP 16.25, tBL 1.25, tRFC 350 ns", () => {
    const energy = hbmCommandEnergy(HBM_POWER.hbm3, HBM_PRESETS.hbm3.timing, 16);
    expect(energy.actPj).toBeCloseTo(1.1 * (55 - 32) * 28.125, 9); // 711.5625
    expect(energy.prePj).toBeCloseTo(1.1 * (55 - 30) * 16.25, 9); // 446.875
    expect(energy.rdPj).toBeCloseTo(1.1 * (260 - 32) * 1.25, 9); // 313.5
    expect(energy.wrPj).toBeCloseTo(1.1 * (250 - 32) * 1.25, 9); // 299.75
    expect(energy.refPj).toBeCloseTo(1.1 * (200 - 32) * 350, 6); // 64680
    expect(energy.refPerBankPj).toBeCloseTo((1.1 * (200 - 32) * 200) / 16, 6); // tRFCpb 200 ns
    expect(energy.backgroundMw).toBeCloseTo(33, 9);
    // A row-hit read: 313.5 pJ per 32 bytes, 1.22 pJ/bit in the core.
    expect(energy.rdPj / 256).toBeCloseTo(1.2246, 4);
  });

  it("hbm_ctrl_v2's table follows the node's preset, refresh and pseudo-channels", () => {
    const values = HBM_CTRL_V2_ENERGY.values?.(hbmCtrlV2Params.parse({ ...GEOMETRY, preset: "hbm2" })) ?? {};
    expect(values.act_pj).toBeCloseTo(1.2 * (60 - 42) * 34, 9); // 734.4
    expect(values.pre_pj).toBeCloseTo(1.2 * (60 - 40) * 14, 9); // 336
    expect(values.rd_pj).toBeCloseTo(1.2 * (202 - 42) * 2, 9); // 384
    expect(values.wr_pj).toBeCloseTo(1.2 * (190 - 42) * 2, 9); // 355.2
    expect(values.ref_pj).toBeCloseTo(1.2 * (250 - 42) * 350, 6); // 87360
    expect(values.background_mw).toBeCloseTo(1.2 * 40 * 8, 9); // 8 pseudo-channels: 384 mW
    expect(values.active_pj).toBeCloseTo(1.2 * (42 - 40), 9); // pJ per ns of active_ns: 2.4 mW
    const overridden = hbmCtrlV2Params.parse({ ...GEOMETRY, preset: "hbm2", t_ras_ns: 40 });
    expect(HBM_CTRL_V2_ENERGY.values?.(overridden).act_pj).toBeCloseTo(1.2 * 18 * 40, 9);
  });

  it("hbm_ctrl_v1 charges hbm3's bursts per bit, a row per row_bytes, standby and refresh", () => {
    const values = HBM_CTRL_V1_ENERGY.values?.({ ...GEOMETRY, row_bytes: 2048 }) ?? {};
    expect(values.access_pj_per_bit).toBeCloseTo((313.5 + 299.75) / 2 / 256 + 0.25, 9);
    expect(values.row_pj_per_bit).toBeCloseTo((711.5625 + 446.875) / (2048 * 8), 9);
    // 8 pseudo-channels x (33 mW + 64680 pJ every 3900 ns).
    expect(values.background_mw).toBeCloseTo(8 * (33 + 64680 / 3900), 6);
  });

  it("every built-in cost's default is the value its defaults give", () => {
    const defaults = HBM_CTRL_V2_ENERGY.values?.(
      hbmCtrlV2Params.parse({ ...GEOMETRY, channels: 8, pc_bw_gbs: 25.6 }),
    );
    for (const cost of HBM_CTRL_V2_ENERGY.costs) expect(defaults?.[cost.name]).toBeCloseTo(cost.value, 9);
  });
});
