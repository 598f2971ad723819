// bench:hbm --dram-trace and --energy: the run folders and kernbench's HBM energy by component.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HbmCtrlV2Model } from "@kb/builtins";
import { MemoryHarness } from "@kb/probe";
import { expandTopology, resolveTopology } from "@kb/topology";
import { afterAll, describe, expect, it } from "vitest";
import {
  checkTraceDir,
  energyRecord,
  type HbmEnergy,
  kernbenchEnergy,
  runFolder,
  startCommandLogs,
  writeDramTrace,
} from "./energy.js";
import { UsageError } from "./options.js";

const dir = mkdtempSync(join(tmpdir(), "kb-dram-trace-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One hbm3 stack (8 channels x 2 PCs) on hbm_ctrl_v2, closed page, no refresh. */
function harness(): MemoryHarness {
  const topology = resolveTopology({
    name: "t",
    cube: {
      hbm: {
        impl: "hbm_ctrl_v2",
        preset: "hbm3",
        channels: 8,
        pseudo_channels: 2,
        params: { refresh: "none", page_policy: "closed" },
      },
    },
  });
  return new MemoryHarness(expandTopology(topology));
}

describe("bench:hbm's HBM energy and DRAMPower traces", () => {
  it("kernbench's energy of one 32 B read: ACT + PRE, one RD, the standby of 16 PCs and the active span", () => {
    const h = harness();
    const model = h.memory.model as HbmCtrlV2Model;
    h.request("read", 0, 32);
    h.machine.run();
    const end = h.machine.env.now;
    const e = kernbenchEnergy(model, end);
    // hbm3 (docs/energy.md): ACT 711.5625 pJ, PRE 446.875 pJ, RD 313.5 pJ; 33 mW per PC standby;
    // active standby 2.2 mW over the bank's open span (ACT to its auto-precharge, 28.75 ns).
    expect(e?.act_pre_j).toBeCloseTo((711.5625 + 446.875) * 1e-12, 15);
    expect(e?.rd_wr_j).toBeCloseTo(313.5e-12, 15);
    expect(e?.ref_j).toBe(0);
    expect(e?.background_j).toBeCloseTo((33 * 16 * end + 2.2 * 28.75) * 1e-12, 15);
    const own = e as HbmEnergy;
    const record = energyRecord(own, { ...own, total_j: own.total_j / 1.02 }, end);
    expect(record.deviation_pct).toBeCloseTo(2, 9);
  });

  it("--dram-trace writes memspec.json and one trace per PC into the run's folder, and replaces an older one", () => {
    const h = harness();
    const model = h.memory.model as HbmCtrlV2Model;
    const logs = startCommandLogs(model);
    h.request("read", 0, 32);
    h.machine.run();
    const folder = runFolder("hbm3", "idle-hit", "read");
    writeFileSync(join(dir, "stale"), "");
    const target = writeDramTrace(dir, folder, model, logs ?? [], h.machine.env.now);
    expect(target).toBe(join(dir, "hbm3", "idle-hit-read"));
    const files = readdirSync(target).sort();
    expect(files).toHaveLength(17);
    expect(files.slice(0, 3)).toEqual(["memspec.json", "pc0.csv", "pc1.csv"]);
    expect(
      readFileSync(join(target, "pc0.csv"), "utf8")
        .split("\n")
        .map((l) => l.split(",")[1]),
    ).toEqual(["ACT", "RD", "PRE", "END", undefined]);
    writeDramTrace(dir, folder, model, logs ?? [], h.machine.env.now);
    expect(readdirSync(join(dir, "hbm3"))).toEqual(["idle-hit-read"]); // no temporary folder left
  });

  it("--dram-trace refuses a file where its folder should be", () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    expect(() => checkTraceDir(file)).toThrow(UsageError);
    expect(() => checkTraceDir(join(dir, "new-folder"))).not.toThrow();
    expect(existsSync(join(dir, "new-folder"))).toBe(false);
  });
});
