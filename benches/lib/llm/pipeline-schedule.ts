// The pipeline's schedule and its timeline (pure: no simulator). kb's host program is a single
// stream (each launch runs after the previous one ends), so llama-pp simulates every task (a
// micro-batch's pass through one stage's layers, or one stage-to-stage transfer) on the machine,
// one after another in the schedule's issue order, and this module places the measured durations
// on the pipeline's clock: a task starts when its stage is free and its input has arrived.

/** One forward of the schedule: micro-batch `microBatch` through the layers of stage `stage`. */
export interface PipelineTask {
  readonly stage: number;
  readonly microBatch: number;
}

/**
 * GPipe's forward schedule (Huang et al. 2019) for `pp` stages and `m` micro-batches, in the
 * order the host program issues it: clock tick `t = 0 .. m + pp - 2`, and at tick `t` each stage
 * `s` with a micro-batch `t - s` in `0 .. m - 1`, stages in ascending order. Every stage takes the
 * micro-batches in order (m after m - 1), and micro-batch m reaches stage s after stage s - 1.
 * Without a backward pass there is no other order worth naming: 1F1B interleaves one forward with
 * one backward to bound the activations kept for the backward, so for inference it is GPipe.
 */
export function gpipeOrder(pp: number, m: number): PipelineTask[] {
  const tasks: PipelineTask[] = [];
  for (let t = 0; t < m + pp - 1; t++) {
    for (let stage = 0; stage < pp; stage++) {
      const microBatch = t - stage;
      if (microBatch >= 0 && microBatch < m) tasks.push({ stage, microBatch });
    }
  }
  return tasks;
}

/** GPipe's bubble fraction with equal stage times and free transfers: `(pp - 1) / (m + pp - 1)`. */
export function gpipeBubble(pp: number, m: number): number {
  return (pp - 1) / (m + pp - 1);
}

/** The measured durations (ns) of the tasks, as simulated one at a time. */
export interface TaskDurations {
  /** `compute[s][mb]`: micro-batch mb through stage s's layers (first launch start to last launch end). */
  readonly compute: readonly (readonly number[])[];
  /** `send[s][mb]`: stage s's output of micro-batch mb to stage s + 1 (s < pp - 1). */
  readonly send: readonly (readonly number[])[];
}

/** A task on the pipeline's clock (ns from the first task's start). */
export interface Slot extends PipelineTask {
  readonly startNs: number;
  readonly endNs: number;
}

/** One stage over the whole run. */
export interface StageSummary {
  readonly stage: number;
  readonly firstStartNs: number;
  readonly lastEndNs: number;
  /** Time its forwards ran. */
  readonly busyNs: number;
  /** Idle time between its first start and its last end (waiting for an input). */
  readonly idleInSpanNs: number;
  /** Idle time over the whole run: the makespan less its busy time. */
  readonly bubbleNs: number;
  /** `bubbleNs / makespanNs`, to set beside {@link gpipeBubble}. */
  readonly bubble: number;
}

/** The schedule placed on the pipeline's clock. */
export interface PipelineTimeline {
  /** The forwards in issue order. */
  readonly forwards: readonly Slot[];
  /** The transfers in issue order; `stage` is the sender. */
  readonly sends: readonly Slot[];
  readonly stages: readonly StageSummary[];
  /** `microBatchEndNs[mb]`: when micro-batch mb leaves the last stage. */
  readonly microBatchEndNs: readonly number[];
  /** When the last micro-batch leaves the last stage. */
  readonly makespanNs: number;
}

/**
 * Places the tasks of {@link gpipeOrder} on the clock. A forward of micro-batch mb on stage s
 * starts at `max(end of mb - 1 on s, arrival of mb at s)` (arrival 0 on stage 0) and lasts
 * `compute[s][mb]`. The transfer of mb from s to s + 1 starts at `max(end of mb on s, end of the
 * transfer of mb - 1 on that link)`, lasts `send[s][mb]`, and is mb's arrival at s + 1: a posted
 * isend / irecv pair, so stage s goes on with mb + 1 while it runs (the transfer's own kernels are
 * counted in the send time, not in either stage's busy time).
 */
export function pipelineTimeline(pp: number, m: number, durations: TaskDurations): PipelineTimeline {
  const stageFree = new Array<number>(pp).fill(0);
  const linkFree = new Array<number>(pp).fill(0);
  const arrival: number[][] = Array.from({ length: pp }, () => new Array<number>(m).fill(0));
  const forwards: Slot[] = [];
  const sends: Slot[] = [];
  const microBatchEndNs = new Array<number>(m).fill(0);
  for (const { stage, microBatch } of gpipeOrder(pp, m)) {
    const startNs = Math.max(stageFree[stage] as number, arrival[stage]?.[microBatch] as number);
    const endNs = startNs + (durations.compute[stage]?.[microBatch] as number);
    stageFree[stage] = endNs;
    forwards.push({ stage, microBatch, startNs, endNs });
    if (stage === pp - 1) {
      microBatchEndNs[microBatch] = endNs;
      continue;
    }
    const sendStart = Math.max(endNs, linkFree[stage] as number);
    const sendEnd = sendStart + (durations.send[stage]?.[microBatch] as number);
    linkFree[stage] = sendEnd;
    (arrival[stage + 1] as number[])[microBatch] = sendEnd;
    sends.push({ stage, microBatch, startNs: sendStart, endNs: sendEnd });
  }
  const makespanNs = Math.max(0, ...microBatchEndNs);
  const stages = Array.from({ length: pp }, (_, stage): StageSummary => {
    const mine = forwards.filter((slot) => slot.stage === stage);
    const firstStartNs = Math.min(...mine.map((slot) => slot.startNs));
    const lastEndNs = Math.max(...mine.map((slot) => slot.endNs));
    const busyNs = mine.reduce((sum, slot) => sum + slot.endNs - slot.startNs, 0);
    const bubbleNs = makespanNs - busyNs;
    return {
      stage,
      firstStartNs,
      lastEndNs,
      busyNs,
      idleInSpanNs: lastEndNs - firstStartNs - busyNs,
      bubbleNs,
      bubble: makespanNs > 0 ? bubbleNs / makespanNs : 0,
    };
  });
  return { forwards, sends, stages, microBatchEndNs, makespanNs };
}
