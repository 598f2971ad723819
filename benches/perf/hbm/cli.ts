// `pnpm bench:hbm`: the memory-fidelity table (see README.md beside this file). Its command line
// is options.ts's, its runs runs.ts's, its records record.ts's and its tables tables.ts's.
import { performance } from "node:perf_hooks";
import type { KbPlugin } from "@kb/components";
import { writeJson } from "../report.js";
import { type BenchConfig, configNames, loadConfig } from "./configs.js";
import { checkTraceDir, energyTable, loadDrampower } from "./energy.js";
import { type Options, parseOptions, SCRIPT, USAGE, UsageError, userDir } from "./options.js";
import { type BenchRecord, gitCommit } from "./record.js";
import { loadReference, type ReferenceTable } from "./reference.js";
import { runFidelity, runWholeMachines, type TraceSource, traceSources } from "./runs.js";
import { printRows, printSummary, printWholeMachine } from "./tables.js";
import { fidelityDir } from "./trace.js";

export { SCRIPT, USAGE } from "./options.js";
export type { BenchRecord } from "./record.js";

async function loadPluginList(entries: readonly string[]): Promise<KbPlugin[]> {
  if (entries.length === 0) return [];
  const { loadPlugins } = await import("@kb/components/node");
  return loadPlugins(entries, { from: [userDir(), process.cwd()], relativeTo: userDir() });
}

/** Runs the bench with command-line `argv` (without node and the script); returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let options: Options | null;
  try {
    options = parseOptions(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${SCRIPT}: ${error.message}\n\nRun with --help for usage.\n`);
    return 2;
  }
  if (options === null) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const started = performance.now();
  const plugins = await loadPluginList(options.plugins);
  let configs: BenchConfig[];
  try {
    configs = (options.configs.length > 0 ? options.configs : configNames()).map((name) =>
      loadConfig(name, options.tck, userDir()),
    );
  } catch (error) {
    process.stderr.write(`${SCRIPT}: ${(error as Error).message}\n`);
    return 2;
  }
  const dir = fidelityDir(options.fidelity);
  const reference: ReferenceTable = loadReference(dir);
  let sources: TraceSource[];
  try {
    sources = traceSources(options, dir);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${SCRIPT}: ${error.message}\n`);
    return 2;
  }

  if (options.dramTrace !== undefined) {
    try {
      checkTraceDir(options.dramTrace);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${SCRIPT}: ${error.message}\n`);
      return 2;
    }
  }
  const context = {
    options,
    plugins,
    commit: gitCommit(),
    failures: [] as string[],
    drampower: loadDrampower(),
  };
  const rows: BenchRecord[] = runFidelity(configs, sources, reference, context);
  if (rows.length > 0) {
    process.stdout.write("\n");
    printRows(rows);
    printSummary(rows);
  }
  const energyRows = rows.flatMap((row) =>
    row.energy === undefined ? [] : [{ key: `${row.config} ${row.pattern} ${row.mix}`, energy: row.energy }],
  );
  if (options.energy && energyRows.length > 0) {
    process.stdout.write(`\nHBM core energy (hbm_ctrl_v2), kernbench / DRAMPower 5 (drampower.json)\n`);
    process.stdout.write(energyTable(energyRows));
  }

  if (options.wholeMachine) {
    const wholeRows = runWholeMachines(configs, dir, context);
    if (wholeRows.length > 0) printWholeMachine(wholeRows);
    rows.push(...wholeRows);
  }
  if (options.json !== undefined) writeJson(options.json, rows);
  process.stdout.write(`\nwall time ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  if (context.failures.length > 0) {
    for (const failure of context.failures) process.stderr.write(`${SCRIPT}: ${failure}\n`);
    return 1;
  }
  return 0;
}
