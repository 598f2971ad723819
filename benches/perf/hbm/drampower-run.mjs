#!/usr/bin/env node
// Runs DRAMPower 5's CLI on every run folder `pnpm bench:hbm --dram-trace DIR` wrote and prints
// drampower.json (the figures `bench:hbm --energy` compares with; docs/energy.md says how
// DRAMPower was built):
//
//   node benches/perf/hbm/drampower-run.mjs --cli /tmp/drampower/build/bin/cli --dir DIR \
//     --commit <DRAMPower commit> > benches/perf/hbm/drampower.json
//
// Per run (`<config>/<pattern>-<mix>/`), DRAMPower runs once per pseudo-channel trace (pc<p>.csv)
// with the run's memspec.json; its core energy is summed over them, J, by component: ACT and PRE,
// RD and WR, refresh, background (precharged and active standby).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { cli: { type: "string" }, dir: { type: "string" }, commit: { type: "string" } },
});
if (values.cli === undefined || values.dir === undefined) {
  process.stderr.write("usage: drampower-run.mjs --cli PATH --dir DIR [--commit SHA]\n");
  process.exit(2);
}
const out = mkdtempSync(join(tmpdir(), "kb-drampower-"));
// The CLI's configuration: the traces carry their data (zeros), no toggling-rate model.
const cliConfig = join(out, "config.json");
writeFileSync(cliConfig, JSON.stringify({ useToggleRate: false, simconfig: {} }));
const sum = (bank, keys) => keys.reduce((total, key) => total + (bank[key] ?? 0), 0);
const runs = {};
for (const config of readdirSync(values.dir).sort()) {
  const configDir = join(values.dir, config);
  if (!statSync(configDir).isDirectory()) continue;
  for (const run of readdirSync(configDir).sort()) {
    const runDir = join(configDir, run);
    if (run.includes(".tmp-") || !statSync(runDir).isDirectory()) continue;
    const cut = run.lastIndexOf("-");
    const key = `${config} ${run.slice(0, cut)} ${run.slice(cut + 1)}`;
    const energy = { act_pre_j: 0, rd_wr_j: 0, ref_j: 0, background_j: 0, total_j: 0 };
    for (const trace of readdirSync(runDir).filter((name) => /^pc\d+\.csv$/.test(name))) {
      const json = join(out, "result.json");
      execFileSync(
        values.cli,
        ["-c", cliConfig, "-m", join(runDir, "memspec.json"), "-t", join(runDir, trace), "-j", json],
        {
          stdio: ["ignore", "ignore", "inherit"],
        },
      );
      const core = JSON.parse(readFileSync(json, "utf8")).CoreEnergy;
      for (const bank of core.BankEnergy) {
        energy.act_pre_j += sum(bank, ["ACT", "PRE", "PRE_RDA", "PRE_WRA"]);
        energy.rd_wr_j += sum(bank, ["RD", "WR", "RDA", "WRA"]);
        energy.ref_j += sum(bank, ["REF_AB", "REF_PB", "REF_SB", "REF_2B", "REF_DB"]);
        energy.background_j += sum(bank, ["BG_ACT", "BG_PRE"]);
      }
      energy.ref_j += core.E_refab ?? 0;
      energy.background_j += sum(core, ["E_bg_act_shared", "E_PDNA", "E_PDNP", "E_sref", "E_dsm"]);
    }
    energy.total_j = energy.act_pre_j + energy.rd_wr_j + energy.ref_j + energy.background_j;
    runs[key] = energy;
    process.stderr.write(`${key}: ${(energy.total_j * 1e6).toFixed(2)} uJ\n`);
  }
}
rmSync(out, { recursive: true, force: true });
const result = {
  tool: "DRAMPower 5 CLI (tukl-msd/DRAMPower), DDR4 core model, one rank per pseudo-channel",
  commit: values.commit ?? null,
  unit: "J",
  runs,
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
