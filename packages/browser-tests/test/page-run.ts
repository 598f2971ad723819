import { MemorySink, OpLogger } from "@kb/oplog";
import {
  type Bench,
  parseBenchParams,
  type RunResults,
  replay,
  Simulator,
  verificationJson,
  verifyOutcome,
} from "@kb/runtime";
import gemm from "../../../benches/gemm.js";
import vectorAdd from "../../../benches/vector-add.js";

// The page script of the Chromium test, bundled for the browser with the benches: a run with
// verification through the library calls `kb run --verify --json` makes (apps/cli/src/run-command.ts:
// the machine of the topology, the bench, `sim.results`, phase 2 from the op log, the verification),
// with the topology as YAML text and the op log in memory, printed as the CLI prints it.

const benches: Record<string, Bench> = { gemm, "vector-add": vectorAdd };

/** The results JSON of `bench` with `params` (as `--param key=value` strings), verified. */
export async function runVerified(
  benchName: string,
  topologyText: string,
  rawParams: Record<string, string>,
): Promise<string> {
  const bench = benches[benchName];
  if (bench === undefined) throw new Error(`no bench ${benchName} in the page; add it to page-run.ts`);
  const params = parseBenchParams(bench, rawParams) as Record<string, unknown>;
  const sink = new MemorySink();
  const logger = new OpLogger(sink);
  const sim = await Simulator.fromTopology(topologyText, { opLogger: logger });
  const outcome = (await bench.run(sim, params as never)) ?? undefined;
  let results: RunResults = sim.results(bench.name, params);
  if (outcome?.report !== undefined) {
    const { title, columns, rows } = outcome.report;
    results = { ...results, report: { title, columns: [...columns], rows: rows.map((row) => [...row]) } };
  }
  await logger.close();
  const phase2 = replay(sim.hostWrites, sink.records);
  const report = await verifyOutcome(outcome, phase2.store, {
    firstNonFinite: phase2.executor.firstNonFinite,
  });
  results = { ...results, verification: verificationJson(report) };
  return `${JSON.stringify(results, null, 2)}\n`;
}

(globalThis as { kbRunVerified?: typeof runVerified }).kbRunVerified = runVerified;
