// The presets and params of hbm_ctrl_v2: the derived parts (hbm2e, hbm3e) follow their stated
// rule, every timing can be overridden, and `kb components list` has a description for every
// parameter.
import { describe, expect, it } from "vitest";
import { BUILTIN_COMPONENTS } from "../default-registry.js";
import { hbmCtrlV2 } from "./hbm-ctrl-v2.js";
import { hbmCtrlV2Config, hbmCtrlV2Params, TIMING_PARAMS } from "./params.js";
import { HBM_PRESETS } from "./presets.js";

const topology = {
  channels: 16,
  pseudo_channels: 2,
  pc_bw_gbs: 25.6,
  access_latency_ns: 40,
  interleave_bytes: 256,
  flit_bytes: 64,
  capacity_bytes: 2 ** 34,
};

describe("hbm_ctrl_v2 presets", () => {
  it("hbm2 is Ramulator's HBM2_2000Mbps at tCK 1 ns, with RD->WR = nCL + nBL + 2 - nCWL", () => {
    const t = HBM_PRESETS.hbm2.timing;
    expect(t).toMatchObject({
      tCK: 1,
      tBL: 2,
      tCL: 14,
      tCWL: 5,
      tRCD_RD: 14,
      tRCD_WR: 12,
      tRP: 14,
      tRAS: 34,
    });
    expect(t).toMatchObject({
      tRC: 48,
      tWR: 16,
      tRTP: 5,
      tCCD_S: 2,
      tCCD_L: 4,
      tRRD_S: 4,
      tRRD_L: 4,
      tFAW: 15,
    });
    expect(t).toMatchObject({
      tWTR_S: 6,
      tWTR_L: 8,
      tRTW: 13,
      tRFC: 350,
      tREFI: 3900,
      tRFCpb: 160,
      tREFIpb: 122,
    });
    expect(t).toMatchObject({ actCmd: 2, preCmd: 1, colCmd: 1, frontend: 1 });
  });

  it("hbm2e: 3.2 Gb/s, tCK 0.625; bus clock counts kept, analog timings rounded up to whole clocks", () => {
    const t = HBM_PRESETS.hbm2e.timing;
    expect(t.tCK).toBe(0.625);
    // Clock counts: nBL 2, nCCD_S 2, nCCD_L 4 at 0.625 ns.
    expect([t.tBL, t.tCCD_S, t.tCCD_L, t.colCmd, t.frontend]).toEqual([1.25, 1.25, 2.5, 0.625, 0.625]);
    // 14 ns / 0.625 = 22.4 -> 23 clocks = 14.375; 5 / 0.625 = 8 -> 5; 48 / 0.625 = 76.8 -> 77 = 48.125.
    expect(t.tCL).toBeCloseTo(14.375, 9);
    expect(t.tCWL).toBeCloseTo(5, 9);
    expect(t.tRC).toBeCloseTo(48.125, 9);
    expect(t.tREFI).toBeCloseTo(3900, 9);
    // RD->WR recomputed: tCL + tBL + 2 tCK - tCWL = 14.375 + 1.25 + 1.25 - 5 = 11.875.
    expect(t.tRTW).toBeCloseTo(11.875, 9);
  });

  it("hbm3e: 9.6 Gb/s, tCK 1/2.4 ns; 32 B per burst in 2 clocks (38.4 GB/s per pseudo-channel)", () => {
    const t = HBM_PRESETS.hbm3e.timing;
    const ck = 1 / 2.4;
    expect(t.tCK).toBeCloseTo(ck, 12);
    expect(t.tBL).toBeCloseTo(2 * ck, 12);
    expect(32 / t.tBL).toBeCloseTo(38.4, 9);
    // tCL 12.5 ns = 30 clocks exactly; tRCD_RD 19.375 ns = 46.5 clocks -> 47 = 19.5833.
    expect(t.tCL).toBeCloseTo(12.5, 9);
    expect(t.tRCD_RD).toBeCloseTo(47 * ck, 9);
    expect(t.tCCD_L).toBeCloseTo(4 * ck, 12);
    expect(t.tCCD_R).toBeCloseTo(3 * ck, 12);
  });

  it("every preset keeps its clock counts and never shortens an analog timing", () => {
    for (const [name, base] of [
      ["hbm2e", "hbm2"],
      ["hbm3e", "hbm3"],
    ] as const) {
      const fast = HBM_PRESETS[name].timing;
      const slow = HBM_PRESETS[base].timing;
      for (const key of ["tRCD_RD", "tRP", "tRAS", "tRC", "tWR", "tFAW", "tRFC"] as const) {
        expect(fast[key], `${name}.${key}`).toBeGreaterThanOrEqual(slow[key] - 1e-9);
        expect(fast[key] - slow[key], `${name}.${key}`).toBeLessThan(fast.tCK);
      }
      expect(fast.tBL / fast.tCK).toBeCloseTo(slow.tBL / slow.tCK, 9);
    }
  });
});

describe("hbm_ctrl_v2 params", () => {
  it("the topology's preset selects the timing (hbm3 when none) and every timing param overrides it", () => {
    expect(hbmCtrlV2Config(hbmCtrlV2Params.parse(topology)).timing.tCK).toBe(0.625);
    expect(hbmCtrlV2Config(hbmCtrlV2Params.parse({ ...topology, preset: "hbm2" })).timing.tCK).toBe(1);
    const overrides = Object.fromEntries(Object.keys(TIMING_PARAMS).map((param, i) => [param, 100 + i]));
    const config = hbmCtrlV2Config(hbmCtrlV2Params.parse({ ...topology, preset: "hbm2", ...overrides }));
    Object.values(TIMING_PARAMS).forEach((key, i) => {
      expect(config.timing[key], key).toBe(100 + i);
    });
  });

  it("defaults: Ramulator's queues (32 + 32 bursts, 80% / 20% watermarks), all-bank refresh, open page", () => {
    const config = hbmCtrlV2Config(hbmCtrlV2Params.parse(topology));
    expect(config).toMatchObject({
      preset: "hbm3",
      readQueue: 32,
      writeQueue: 32,
      writeHigh: 0.8,
      writeLow: 0.2,
      refresh: "all_bank",
      closedPage: false,
      maxPending: 32,
      predictBytes: 2048,
    });
    expect(config.horizon).toBeCloseTo(2.5, 9); // 4 tCK
  });

  it("is a built-in, not analytic, and describes every parameter (kb components list)", () => {
    expect(BUILTIN_COMPONENTS).toContain(hbmCtrlV2);
    expect(hbmCtrlV2.analytic).toBeUndefined();
    const shape = (hbmCtrlV2.params as unknown as { shape: Record<string, { description?: string }> }).shape;
    const missing = Object.entries(shape)
      .filter(([, schema]) => !schema.description)
      .map(([key]) => key);
    expect(missing).toEqual([]);
    for (const key of ["read_queue", "write_queue", "write_high", "write_low", "refresh", "page_policy"]) {
      expect(Object.keys(shape)).toContain(key);
    }
    for (const key of Object.keys(TIMING_PARAMS)) expect(Object.keys(shape)).toContain(key);
  });
});
