import type { Tracer } from "@kb/components";
import { isKbError, KbError } from "@kb/errors";
import { MemorySink, type OpLogSink, type OpRecord } from "@kb/oplog";
import type { Bench, BenchOutcome } from "./bench.js";
import type { ReferenceProgress } from "./reference-progress.js";
import type { Simulator } from "./simulator.js";

// The parts of runBenchCore (run-bench-core.ts) that are not the orchestration itself: progress,
// phase 2's op log, the bench's own errors.

/** What a run reports as it goes (`runBenchCore`, `runBench` of `@kb/runtime/node`). */
export type RunProgress =
  | { readonly stage: "build" }
  /** Phase 1, every 4096 trace records at most: simulated time and DES events so far. */
  | { readonly stage: "phase1"; readonly simTimeNs: number; readonly events: number }
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
    return (await bench.run(sim, params)) ?? undefined;
  } catch (error) {
    if (isKbError(error) || isUserError?.(error) !== true) throw error;
    throw new KbError("RUNTIME_INVALID", `bench "${bench.name}" threw: ${errorText(error)}`, {
      ...(file !== undefined ? { context: { file } } : {}),
      cause: error,
    });
  }
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

  constructor(
    private readonly inner: Tracer | null,
    private readonly onProgress: (progress: RunProgress) => void,
  ) {}

  start(sim: Simulator): void {
    this.sim = sim;
    this.onProgress({ stage: "phase1", simTimeNs: 0, events: 0 });
  }

  record(...args: Parameters<Tracer["record"]>): void {
    this.inner?.record(...args);
    if ((++this.calls & 4095) !== 0 || this.sim === null) return;
    this.onProgress({
      stage: "phase1",
      simTimeNs: args[1],
      events: this.sim.machine.env.processedEventCount,
    });
  }

  counter(name: string, tNs: number, componentId: string, value: number): void {
    this.inner?.counter?.(name, tNs, componentId, value);
  }

  onFlush(hook: () => void): void {
    this.inner?.onFlush?.(hook);
  }
}
