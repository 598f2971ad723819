import type { Tracer } from "@kb/components";
import { isKbError, KbError } from "@kb/errors";
import { MemorySink, type OpLogSink, type OpRecord } from "@kb/oplog";
import type { Bench, BenchCheck, BenchOutcome } from "./bench.js";
import type { HostPlan } from "./host-progress.js";
import { isPromiseLike, type ReferenceProgress } from "./reference-progress.js";
import type { Simulator } from "./simulator.js";

// The parts of runBenchCore (run-bench-core.ts) that are not the orchestration itself: progress,
// phase 2's op log, the bench's own errors.

/** What a run reports as it goes (`runBenchCore`, `runBench` of `@kb/runtime/node`). */
export type RunProgress =
  | { readonly stage: "build" }
  /**
   * Phase 1, every 4096 trace records at most and at each `sim.progress` call: simulated time,
   * DES events so far and the host program's position in its plan (null until it states one).
   */
  | {
      readonly stage: "phase1";
      readonly simTimeNs: number;
      readonly events: number;
      readonly plan: HostPlan | null;
    }
  | { readonly stage: "phase2"; readonly done: number; readonly total: number }
  | { readonly stage: "reference"; readonly reference: ReferenceProgress }
  | { readonly stage: "compare" };

/**
 * The op log phase 2 replays, and how it is kept: in memory ({@link memoryPhase2Log}, any
 * platform), or spilled to a temporary file on Node (`runBench` of `@kb/runtime/node`).
 */
export interface Phase2OpLog {
  /** Gets every op record of phase 1. */
  readonly sink: OpLogSink;
  /** Records written so far. */
  count(): number;
  /** The records in id order, once the logger is closed. */
  records(): Iterable<OpRecord>;
  /** Releases what it holds (a temporary file); called once the run ended, failed or not. */
  dispose(): void;
}

/** Phase 2's op log in memory (a `MemorySink`): the records stay until the run's result is dropped. */
export function memoryPhase2Log(): Phase2OpLog & { readonly kept: readonly OpRecord[] } {
  const sink = new MemorySink();
  return {
    sink,
    kept: sink.records,
    count: () => sink.records.length,
    records: () => sink.records,
    dispose: () => {},
  };
}

/** An op-log sink writing to two sinks (phase 2's and the caller's). */
export function teeSink(first: OpLogSink, second: OpLogSink): OpLogSink {
  return {
    write(record) {
      first.write(record);
      second.write(record);
    },
    async close() {
      await first.close?.();
      await second.close?.();
    },
    abort() {
      first.abort?.();
      second.abort?.();
    },
  };
}

/**
 * Runs the bench's own code. A plain error thrown there (not a `KbError`) that `isUserError` says
 * the bench's code threw becomes `RUNTIME_INVALID` with its stack, located at `file` when given;
 * any other stays as it is (an internal error).
 */
export async function runUserCode(
  bench: Bench,
  sim: Simulator,
  params: Record<string, unknown>,
  file: string | undefined,
  isUserError: ((error: unknown) => boolean) | undefined,
): Promise<BenchOutcome | undefined> {
  try {
    sim.useBenchParams(params);
    return (await bench.run(sim, params)) ?? undefined;
  } catch (error) {
    if (isKbError(error) || isUserError?.(error) !== true) throw error;
    throw new KbError("RUNTIME_INVALID", `bench "${bench.name}" threw: ${errorText(error)}`, {
      ...(file !== undefined ? { context: { file } } : {}),
      cause: error,
    });
  }
}

/**
 * `outcome` with each check's reference wrapped: a reference that throws (or rejects) something
 * other than a `KbError` is a `RUNTIME_INVALID` `reference of <bench> threw: <message> at
 * <file:line:col>`, located at the deepest frame of the stack in the bench's file (else the top
 * frame), not a crash of kb.
 */
export function withReferenceErrors(
  outcome: BenchOutcome | undefined,
  bench: string,
  file: string | undefined,
): BenchOutcome | undefined {
  if (outcome?.check === undefined) return outcome;
  const check: Record<string, BenchCheck> = {};
  for (const [name, original] of Object.entries(outcome.check)) {
    const fail = (error: unknown): never => {
      if (isKbError(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      const where = throwLocation(error, file);
      throw new KbError(
        "RUNTIME_INVALID",
        `reference of ${bench} threw: ${message}${where === null ? "" : ` at ${where}`} (check "${name}"). A reference computes the expected output on the host; fix it, or leave --verify out.`,
        { ...(file !== undefined ? { context: { file } } : {}), cause: error },
      );
    };
    check[name] = {
      ...original,
      reference: (context) => {
        try {
          const result = original.reference(context);
          return isPromiseLike(result) ? Promise.resolve(result).catch(fail) : result;
        } catch (error) {
          return fail(error);
        }
      },
    };
  }
  return { ...outcome, check };
}

/** `file:line:col` of the first stack frame in `file` (a path), else of the top frame; null without a stack. */
function throwLocation(error: unknown, file: string | undefined): string | null {
  if (!(error instanceof Error) || error.stack === undefined) return null;
  const frames = [...error.stack.matchAll(/^\s+at (?:.*? \()?(.+?):(\d+):(\d+)\)?$/gm)].map((match) => ({
    path: (match[1] as string).replace(/^file:\/\//, ""),
    line: match[2],
    col: match[3],
  }));
  const frame = frames.find((candidate) => file !== undefined && candidate.path === file) ?? frames[0];
  return frame === undefined ? null : `${frame.path}:${frame.line}:${frame.col}`;
}

/** A thrown value as text: a KbError's message, an Error's stack (it points into the user's file). */
function errorText(error: unknown): string {
  if (isKbError(error)) return error.message;
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

/**
 * A tracer between the machine and the trace recorder that reports phase 1's progress every 4096
 * records. It adds no simulation events, so a run's results are the same with or without it.
 */
export class ProgressTap implements Tracer {
  private sim: Simulator | null = null;
  private calls = 0;
  /** Only when the tracer behind it takes them (each is a component's hot path otherwise). */
  readonly counter?: NonNullable<Tracer["counter"]>;

  constructor(
    private readonly inner: Tracer | null,
    private readonly onProgress: (progress: RunProgress) => void,
  ) {
    const counter = inner?.counter;
    if (counter !== undefined) this.counter = counter.bind(inner);
  }

  /**
   * With no tracer behind it (or one that reads only flows), the progress needs no particular
   * record: it counts those it is given, so it reads only flows too (it reports every 4096 of
   * them then).
   */
  get flowsOnly(): boolean {
    return this.inner === null || this.inner.flowsOnly === true;
  }

  start(sim: Simulator): void {
    this.sim = sim;
    this.onProgress({ stage: "phase1", simTimeNs: 0, events: 0, plan: null });
    sim.plan.listener = (plan) =>
      this.onProgress({
        stage: "phase1",
        simTimeNs: sim.now,
        events: sim.machine.env.processedEventCount,
        plan,
      });
  }

  record(...args: Parameters<Tracer["record"]>): void {
    this.inner?.record(...args);
    if ((++this.calls & 4095) !== 0 || this.sim === null) return;
    this.onProgress({
      stage: "phase1",
      simTimeNs: args[1],
      events: this.sim.machine.env.processedEventCount,
      plan: this.sim.plan.latest,
    });
  }

  onFlush(hook: () => void): void {
    this.inner?.onFlush?.(hook);
  }
}
