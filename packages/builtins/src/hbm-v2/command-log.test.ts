// --dram-trace: the DRAM commands hbm_ctrl_v2 issues, as DRAMPower 5's command trace.
import { describe, expect, it } from "vitest";
import { drampowerFiles, drampowerMemspec } from "../energy/drampower.js";
import { drampowerTrace } from "./command-log.js";
import { hbm3Harness, hbmModel, requestAt } from "./test-support.js";

const BURST = "0".repeat(64); // 32 B of zeros

describe("hbm_ctrl_v2's DRAM command trace (DRAMPower's CSV)", () => {
  it("a 64 B read, then a write to another row of its bank: ACT RD RD, PRE ACT WR, at their last clocks", () => {
    const h = hbm3Harness();
    const logs = hbmModel(h).recordCommands();
    requestAt(h, 0, "read", 0, 64); // ch0 PC0, SID 0, BG 0, bank 0, row 0: bursts at col0 0 and 1
    requestAt(h, 100, "write", 1 << 20, 32); // row 1 of the same bank
    h.machine.run();
    // By hand (hbm3, tCK 0.625 ns; Ramulator's multi-cycle rule: nominal + len(prev) - len(next),
    // ACT 1.5 CK, PRE 0.5 CK, RD/WR 1 CK; front end 1 CK):
    //   ACT at 0.625, ending 1.5625 (clock 2.5: logged 2); RD at 0.625 + tRCD_RD 19.375 + 0.9375 -
    //   0.625 = 20.3125, ending 20.9375 (clock 33); the second burst tCCD_L 2.5 ns later (clock 37);
    //   the write arrives at 100, ready 100.625: PRE at 100.625, ending 100.9375 (clock 161); ACT
    //   tRP 16.25 + 0.3125 - 0.9375 later, 116.25, ending 117.1875 (clock 187); WR tRCD_WR 9.375 +
    //   0.9375 - 0.625 later, 125.9375, ending 126.5625 (clock 202). Each gap is then the nominal
    //   constraint, as DRAMPower counts it (ACT to RD 31 = nRCDRD, PRE to ACT 26 = nRP).
    const text = drampowerTrace(logs[0] as never, hbmModel(h).config, 250);
    expect(text.split("\n")).toEqual([
      "2,ACT,0,0,0,0,0",
      `33,RD,0,0,0,0,0,${BURST}`,
      `37,RD,0,0,0,0,0,${BURST}`,
      "161,PRE,0,0,0,0,0",
      "187,ACT,0,0,0,1,0",
      `202,WR,0,0,0,1,0,${BURST}`,
      "400,END,0,0,0,0,0",
      "",
    ]);
    // Every other pseudo-channel issued nothing.
    expect(logs.slice(1).every((log) => log.length === 0)).toBe(true);
  });

  it("logs a request's bank in the flat numbering, bank groups across SIDs", () => {
    const h = hbm3Harness();
    const logs = hbmModel(h).recordCommands();
    // SID 1 (bit 15), BG 2 (bits 17:16), bank 3 (bits 19:18), row 5: flat bank (1 x 4 + 2) x 4 + 3 = 27.
    requestAt(h, 0, "read", (5 << 20) | (3 << 18) | (2 << 16) | (1 << 15), 32);
    h.machine.run();
    const lines = drampowerTrace(logs[0] as never, hbmModel(h).config, 100).split("\n");
    expect(lines.slice(0, 2)).toEqual(["2,ACT,0,6,27,5,0", `33,RD,0,6,27,5,0,${BURST}`]);
  });

  it("logs the refreshes an idle pseudo-channel slept through, and no command of a prediction", () => {
    const h = hbm3Harness({ refresh: "all_bank", predict_bytes: 64 });
    const logs = hbmModel(h).recordCommands();
    requestAt(h, 0, "read", 0, 4096); // a prediction answers it early, its commands are issued once
    requestAt(h, 10_000, "read", 0, 32); // wakes ch0 PC0: the refreshes at 3.9 and 7.8 us
    h.machine.run();
    const stats = hbmModel(h).stats(0);
    expect(stats.predictions).toBeGreaterThan(0);
    const log = logs[0];
    const count = (cmd: number) => log?.cmd.filter((c) => c === cmd).length;
    expect(count(4)).toBe(stats.refreshes);
    expect(count(0)).toBe(stats.activates);
    expect(count(1)).toBe(stats.precharges);
    expect(count(2)).toBe(stats.readBursts);
  });

  it("writes a DDR4 memspec of one pseudo-channel with the preset's currents and clocks", () => {
    const h = hbm3Harness();
    const spec = (drampowerMemspec(hbmModel(h).config) as { memspec: Record<string, Record<string, number>> })
      .memspec;
    expect(spec.memarchitecturespec).toMatchObject({
      nbrOfRanks: 1,
      nbrOfBanks: 32,
      nbrOfBankGroups: 8,
      burstLength: 8,
      dataRate: 4, // BL8 / 4 = 2 clocks = tBL
      width: 32,
    });
    expect(spec.mempowerspec).toMatchObject({ vdd: 1.1, idd0: 0.055, idd2n: 0.03, idd3n: 0.032, idd5B: 0.2 });
    expect(spec.memtimingspec).toMatchObject({ RAS: 45, RP: 26, RFC1: 560, REFI: 6240 });
    const files = drampowerFiles(hbmModel(h).config, hbmModel(h).recordCommands(), 0);
    expect(files.map((f) => f.name).slice(0, 3)).toEqual(["memspec.json", "pc0.csv", "pc1.csv"]);
    expect(files).toHaveLength(33);
  });
});
