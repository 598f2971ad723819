import { type Bench, importedSourceFiles, runBenchCore } from "@kb/runtime";
import gemm from "../../../benches/gemm.js";
import vectorAdd from "../../../benches/vector-add.js";

// The page script of the Chromium test, bundled for the browser with the benches: a run with
// verification through runBenchCore, the orchestration `kb run --verify --json` runs on Node
// (runBench of @kb/runtime/node is it with files), with the topology as YAML text, the bench's
// files as text and the op log in memory, printed as the CLI prints it.

const benches: Record<string, Bench> = { gemm, "vector-add": vectorAdd };

/** What the test gives the page for one run. */
export interface PageRun {
  readonly bench: string;
  /** The topology's YAML text and the name its errors are located at. */
  readonly topologyText: string;
  readonly topologyName: string;
  /** Params as `--param key=value` strings. */
  readonly params: Record<string, string>;
  /**
   * The bench's file and the files it may import (benches/lib), text by path as the playground
   * holds them (`benches/gemm.ts`, `benches/lib/params.ts`): the page finds what the bench
   * imports, whose digest is the manifest's bench digest.
   */
  readonly files: Record<string, string>;
  /** The @kb package versions the CLI's manifest records. */
  readonly packages: Record<string, string>;
}

/** The results JSON of a verified run, as `kb run --verify --json` prints it. */
export async function runVerified(run: PageRun): Promise<string> {
  const bench = benches[run.bench];
  if (bench === undefined) throw new Error(`no bench ${run.bench} in the page; add it to page-run.ts`);
  const { results } = await runBenchCore({
    bench,
    topology: run.topologyText,
    topologyName: run.topologyName,
    params: run.params,
    benchSource: importedSourceFiles(`benches/${run.bench}.ts`, (path) => run.files[path]),
    packages: run.packages,
    verify: true,
  });
  return `${JSON.stringify(results, null, 2)}\n`;
}

(globalThis as { kbRunVerified?: typeof runVerified }).kbRunVerified = runVerified;
