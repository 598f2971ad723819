// `bench:hbm --energy` and `--dram-trace DIR`: kernbench's HBM energy of each run by component,
// the run's DRAM command streams in DRAMPower 5's input format, and the comparison with the
// DRAMPower figures committed in drampower.json (docs/energy.md, "Checked against DRAMPower").
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  drampowerFiles,
  type HbmCommandLog,
  type HbmCtrlV2Model,
  hbmCtrlV2CommandEnergy,
} from "@kb/builtins";
import type { MemoryModel } from "@kb/components";
import { UsageError } from "./options.js";

/** HBM core energy of one run, J, by the components DRAMPower reports. */
export interface HbmEnergy {
  /** ACT and PRE. */
  act_pre_j: number;
  /** RD and WR bursts. */
  rd_wr_j: number;
  /** Refresh commands. */
  ref_j: number;
  /** Standby: precharged (IDD2N) throughout, plus active (IDD3N) while a bank is open or refreshing. */
  background_j: number;
  total_j: number;
}

/** The energy figures of a run's record. */
export interface EnergyRecord {
  kernbench: HbmEnergy;
  /** DRAMPower on the same command streams (drampower.json), or null when it has none. */
  drampower: HbmEnergy | null;
  /** kernbench / DRAMPower - 1 of the totals, percent. */
  deviation_pct: number | null;
  /** The run's end, ns (both tools' time span). */
  end_ns: number;
}

/** The command logs of `model` when it is hbm_ctrl_v2 (it can record them), else null. */
export function startCommandLogs(model: MemoryModel): readonly HbmCommandLog[] | null {
  const v2 = model as Partial<HbmCtrlV2Model>;
  return typeof v2.recordCommands === "function" ? v2.recordCommands() : null;
}

/** kernbench's HBM core energy of a run of hbm_ctrl_v2 that ended at `endNs` (the energy table's figures). */
export function kernbenchEnergy(model: MemoryModel, endNs: number): HbmEnergy | null {
  const v2 = model as Partial<HbmCtrlV2Model>;
  if (v2.config === undefined || typeof v2.stats !== "function") return null;
  const e = hbmCtrlV2CommandEnergy(v2.config);
  const total = (name: string) => v2.stats?.().find((s) => s.name === name)?.total ?? 0;
  const ports = v2.stats().find((s) => s.name === "act")?.perPort?.length ?? 0;
  const pj = {
    act_pre: total("act") * e.actPj + total("pre") * e.prePj,
    rd_wr: total("rd") * e.rdPj + total("wr") * e.wrPj,
    ref: total("ref") * e.refPj,
    background: e.backgroundMw * ports * endNs + e.activeMw * total("active_ns"),
  };
  return joules(pj);
}

function joules(pj: { act_pre: number; rd_wr: number; ref: number; background: number }): HbmEnergy {
  const j = (x: number) => x * 1e-12;
  return {
    act_pre_j: j(pj.act_pre),
    rd_wr_j: j(pj.rd_wr),
    ref_j: j(pj.ref),
    background_j: j(pj.background),
    total_j: j(pj.act_pre + pj.rd_wr + pj.ref + pj.background),
  };
}

/** A folder name for a run: `<config>/<pattern>-<mix>`, with characters a file name cannot hold replaced. */
export function runFolder(config: string, pattern: string, mix: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "_");
  return join(safe(config), `${safe(pattern)}-${safe(mix)}`);
}

/** Checks `--dram-trace DIR` before any run: a folder, or a path that can be one. */
export function checkTraceDir(dir: string): void {
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    throw new UsageError(`--dram-trace ${dir}: not a folder; give a folder (created if missing).`);
  }
}

/**
 * Writes a run's DRAMPower input (memspec.json, pc<p>.csv per pseudo-channel) into
 * `root/folder`: into a temporary folder first, renamed into place when every file is written,
 * so an error leaves no half-written run (an older run's folder is replaced).
 */
export function writeDramTrace(
  root: string,
  folder: string,
  model: MemoryModel,
  logs: readonly HbmCommandLog[],
  endNs: number,
): string {
  const v2 = model as HbmCtrlV2Model;
  const target = join(root, folder);
  const temp = `${target}.tmp-${process.pid}`;
  mkdirSync(dirname(target), { recursive: true });
  rmSync(temp, { recursive: true, force: true });
  try {
    mkdirSync(temp);
    for (const file of drampowerFiles(v2.config, logs, endNs))
      writeFileSync(join(temp, file.name), file.text);
    rmSync(target, { recursive: true, force: true });
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
  return target;
}

/** DRAMPower's figures per run (`<config> <pattern> <mix>`), J: drampower.json beside this file. */
export function loadDrampower(file = defaultDrampowerFile()): Map<string, HbmEnergy> {
  const table = new Map<string, HbmEnergy>();
  if (!existsSync(file)) return table;
  const data = JSON.parse(readFileSync(file, "utf8")) as { runs?: Record<string, HbmEnergy> };
  for (const [key, value] of Object.entries(data.runs ?? {})) table.set(key, value);
  return table;
}

function defaultDrampowerFile(): string {
  // Beside this file in the sources; from the bundle (benches/dist/perf/hbm.js), in the sources.
  const here = dirname(fileURLToPath(import.meta.url));
  const own = join(here, "drampower.json");
  return existsSync(own) ? own : join(here, "..", "..", "perf", "hbm", "drampower.json");
}

/** The energy record of a run: kernbench's figures and DRAMPower's for the same key. */
export function energyRecord(
  kernbench: HbmEnergy,
  drampower: HbmEnergy | undefined,
  endNs: number,
): EnergyRecord {
  return {
    kernbench,
    drampower: drampower ?? null,
    deviation_pct: drampower === undefined ? null : (100 * kernbench.total_j) / drampower.total_j - 100,
    end_ns: endNs,
  };
}

/** The table `--energy` prints: per run, each component in uJ, kernbench / DRAMPower. */
export function energyTable(rows: readonly { key: string; energy: EnergyRecord }[]): string {
  const uj = (x: number | undefined) => (x === undefined ? "-" : (x * 1e6).toFixed(2));
  const pair = (k: number, d: number | undefined) => `${uj(k)} / ${uj(d)}`;
  const head = [
    "run",
    "ACT+PRE uJ",
    "RD+WR uJ",
    "REF uJ",
    "background uJ",
    "total uJ (kernbench / DRAMPower)",
    "dev",
  ];
  const lines = rows.map(({ key, energy: { kernbench: k, drampower: d, deviation_pct } }) => [
    key,
    pair(k.act_pre_j, d?.act_pre_j),
    pair(k.rd_wr_j, d?.rd_wr_j),
    pair(k.ref_j, d?.ref_j),
    pair(k.background_j, d?.background_j),
    pair(k.total_j, d?.total_j),
    deviation_pct === null ? "-" : `${deviation_pct >= 0 ? "+" : ""}${deviation_pct.toFixed(2)}%`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const fmt = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join("  ");
  return `${[fmt(head), fmt(widths.map((w) => "-".repeat(w))), ...lines.map(fmt)].join("\n")}\n`;
}
