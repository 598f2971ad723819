import { isKbError } from "@kb/errors";
import { evaluate, pastEvaluatorRange } from "./evaluate.js";
import { expectedRefusal, type Program } from "./program.js";
import * as ref from "./reference/index.js";
import { runOnMachine } from "./run.js";

/** Why a program failed the differential check. */
export interface Failure {
  /**
   * `mismatch`: an output differs beyond its dtype's tolerance; `phases`: a tile a kernel loaded
   * in phase 1 differs from what phase 2 copied for the same op; `command-list`: command-list
   * mode issued other commands than runner mode; `error`: the run threw.
   */
  readonly kind: "mismatch" | "phases" | "command-list" | "error";
  /** One line: the output and its first differing element, or the error. */
  readonly summary: string;
}

/** Options of {@link check}. */
export interface CheckOptions {
  /** The evaluator (default: the independent one); tests pass a wrong one to see the check fail. */
  readonly evaluate?: (program: Program) => readonly ref.RefTensor[];
}

/** The outcome of one program. */
export interface Verdict {
  readonly failure: Failure | null;
  /** The evaluator's outputs (null when the evaluator itself refused the program). */
  readonly expected: readonly ref.RefTensor[] | null;
  /** Op-log records phase 2 replayed (0 when the run failed). */
  readonly ops: number;
  /** Tiles loaded in phase 1 compared with phase 2 op by op. */
  readonly loadsCompared: number;
  /** Kernel instances whose command-list run was compared with runner mode. */
  readonly commandLists?: number;
  /** True when outputs differed but the evaluator's 64-bit integers had left its exact range (not counted). */
  readonly pastRange?: boolean;
}

/**
 * Runs `program` through phase 1 and phase 2 and compares every output with the independent
 * evaluator: a difference beyond the dtype tolerance (NaN agreeing with NaN) or any error is a
 * failure. Programs are valid by construction, so a `KbError` is a failure too: it means the
 * simulator refused what its documentation allows.
 */
export async function check(program: Program, options: CheckOptions = {}): Promise<Verdict> {
  if (expectedRefusal(program) !== null) return checkRefused(program);
  let expected: readonly ref.RefTensor[];
  try {
    expected = (options.evaluate ?? evaluate)(program);
  } catch (error) {
    return {
      failure: { kind: "error", summary: `the evaluator refused the program: ${text(error)}` },
      expected: null,
      ops: 0,
      loadsCompared: 0,
    };
  }
  let run: Awaited<ReturnType<typeof runOnMachine>>;
  try {
    run = await runOnMachine(program);
  } catch (error) {
    return {
      failure: { kind: "error", summary: `the run failed: ${text(error)}` },
      expected,
      ops: 0,
      loadsCompared: 0,
    };
  }
  if (run.commandListDifference !== null) {
    return {
      failure: { kind: "command-list", summary: run.commandListDifference },
      expected,
      ops: run.ops,
      loadsCompared: run.phases.compared,
    };
  }
  if (run.phases.firstDifference !== null || run.phases.unmatched > 0) {
    return {
      failure: { kind: "phases", summary: run.phasesText },
      expected,
      ops: run.ops,
      loadsCompared: run.phases.compared,
    };
  }
  for (const [i, output] of program.outputs.entries()) {
    const actualTensor = run.outputs[i];
    const wanted = expected[i] as ref.RefTensor;
    if (actualTensor === undefined) continue;
    const actual: ref.RefTensor = {
      shape: actualTensor.shape,
      // The generator makes outputs of its own dtypes only (never i1), as `output.dtype` says.
      dtype: actualTensor.dtype as ref.RefTensor["dtype"],
      data: actualTensor.toFloat64Array(),
    };
    const agreement = ref.sameWithin(actual, wanted, output.dtype);
    // The evaluator is f64: past 2^53 its 64-bit integers are rounded where phase 2's are exact,
    // so a mismatch of such a program is not a finding (packages/tl-fuzz/README.md, "Limits").
    if (!agreement.ok && pastEvaluatorRange(expected)) {
      return { failure: null, expected, ops: run.ops, loadsCompared: run.phases.compared, pastRange: true };
    }
    if (!agreement.ok) {
      const first = agreement.first;
      const where =
        first === undefined
          ? (agreement.problem ?? "")
          : `first at [${first.index.join(", ")}]: phase 2 ${first.actual}, evaluator ${first.expected}`;
      return {
        failure: {
          kind: "mismatch",
          summary: `${output.name} (${output.dtype} [${output.shape.join(", ")}]): ${agreement.mismatches} of ${wanted.data.length} elements differ beyond the ${output.dtype} tolerance; ${where}`,
        },
        expected,
        ops: run.ops,
        loadsCompared: run.phases.compared,
      };
    }
  }
  return {
    failure: null,
    expected,
    ops: run.ops,
    loadsCompared: run.phases.compared,
    commandLists: run.commandListsCompared,
  };
}

/**
 * A program whose last step uses an accumulator a dot consumed: the run must fail with
 * `TL_INVALID_CALL` naming that `tl.dot` and the kernel's line; running to the end, or failing
 * otherwise, is a failure.
 */
async function checkRefused(program: Program): Promise<Verdict> {
  const refusal = expectedRefusal(program);
  const wanted = `TL_INVALID_CALL naming the tl.dot of v${refusal?.dot} (step ${program.steps.length - 1} uses its consumed accumulator)`;
  const verdict = (summary: string | null): Verdict => ({
    failure: summary === null ? null : { kind: "error", summary },
    expected: null,
    ops: 0,
    loadsCompared: 0,
  });
  try {
    await runOnMachine(program);
  } catch (error) {
    if (
      isKbError(error) &&
      error.code === "TL_INVALID_CALL" &&
      error.context.line !== undefined &&
      /is the accumulator of tl\.dot at .*:\d+:\d+, which took its bytes/.test(error.detail)
    )
      return verdict(null);
    return verdict(`expected ${wanted}; the run failed otherwise: ${text(error)}`);
  }
  return verdict(`expected ${wanted}; the run completed without an error`);
}

function text(error: unknown): string {
  if (isKbError(error)) return error.message;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
