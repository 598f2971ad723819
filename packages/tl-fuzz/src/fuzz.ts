import * as fc from "fast-check";
import { rawProgram } from "./arbitrary.js";
import { buildProgram, type RawProgram } from "./build.js";
import { type CheckOptions, check, type Failure } from "./check.js";
import { reproBench } from "./codegen.js";
import type { Program } from "./program.js";

/** Options of {@link fuzz}. */
export interface FuzzOptions extends CheckOptions {
  /** Random programs to run. */
  readonly runs: number;
  /** The seed of the generator: the same seed runs the same programs. */
  readonly seed: number;
  /** Steps per program at most (default 10). */
  readonly maxSteps?: number;
  /** Called after every program with the count so far. */
  readonly onProgress?: (done: number) => void;
}

/** A failing program, shrunk, with a bench that reproduces it. */
export interface FuzzFailure {
  readonly failure: Failure;
  readonly program: Program;
  readonly raw: RawProgram;
  /** An `.mjs` bench: `kb run FILE --verify` shows the failure. */
  readonly repro: string;
  /** fast-check's replay path of the shrunk case (with the seed, runs exactly this case). */
  readonly path: string;
}

/** What a fuzzing session did. */
export interface FuzzReport {
  readonly seed: number;
  /** Programs run (including the shrinking runs of a failure). */
  readonly runs: number;
  /** Op-log records replayed, over all programs. */
  readonly ops: number;
  /** Tiles loaded in phase 1 and compared with phase 2 op by op, over all programs. */
  readonly loadsCompared: number;
  /** Kernel instances run in command-list mode too and compared with runner mode. */
  readonly commandLists: number;
  /** Steps run by kind (`load`, `dot`, `compositeGemm`, ...), over all programs. */
  readonly steps: Readonly<Record<string, number>>;
  readonly failure: FuzzFailure | null;
}

class ProgramFailed extends Error {
  constructor(readonly verdict: Failure) {
    super(verdict.summary);
  }
}

/**
 * Runs `runs` random programs through phase 1 and phase 2 and checks each against the evaluator
 * (`check`). The first failure is shrunk by fast-check to a minimal program and returned with a
 * runnable repro bench.
 */
export async function fuzz(options: FuzzOptions): Promise<FuzzReport> {
  let runs = 0;
  let ops = 0;
  let loadsCompared = 0;
  let commandLists = 0;
  const steps: Record<string, number> = {};
  const property = fc.asyncProperty(rawProgram(options.maxSteps ?? 10), async (raw) => {
    const built = buildProgram(raw);
    for (const step of built.steps) steps[step.kind] = (steps[step.kind] ?? 0) + 1;
    const verdict = await check(built, options);
    runs++;
    ops += verdict.ops;
    loadsCompared += verdict.loadsCompared;
    commandLists += verdict.commandLists ?? 0;
    options.onProgress?.(runs);
    if (verdict.failure !== null) throw new ProgramFailed(verdict.failure);
  });
  const result = await fc.check(property, { seed: options.seed, numRuns: options.runs });
  if (!result.failed || result.counterexample === null)
    return { seed: options.seed, runs, ops, loadsCompared, commandLists, steps, failure: null };
  const [raw] = result.counterexample;
  const program = buildProgram(raw);
  const verdict = await check(program, options);
  const failure = verdict.failure ?? {
    kind: "error" as const,
    summary: `did not fail again when rerun: ${String(result.errorInstance)}`,
  };
  const header = [
    `A kernel of the tl differential tester (pnpm fuzz:tl --seed ${options.seed}): ${failure.kind}.`,
    failure.summary,
    `fast-check seed ${result.seed}, path ${result.counterexamplePath ?? "-"}.`,
    "Run it: kb run THIS_FILE --verify. The references are the independent evaluator's",
    "(packages/tl-fuzz/src/reference, from packages/tl/README.md's Semantics); an element whose",
    "reference is NaN always fails --verify (NaN never matches), the tester counts NaN == NaN.",
  ];
  const expected = verdict.expected?.map((tensor) => [...tensor.data]) ?? program.outputs.map(() => []);
  return {
    seed: options.seed,
    runs,
    ops,
    loadsCompared,
    commandLists,
    steps,
    failure: {
      failure,
      program,
      raw,
      repro: reproBench(program, expected, header),
      path: result.counterexamplePath ?? "",
    },
  };
}
