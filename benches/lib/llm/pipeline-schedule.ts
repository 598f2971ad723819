// The pipeline's schedule and its timeline (pure: no simulator). llama-pp runs each stage as a
// host stream (Simulator.streams): stage s takes the micro-batches in GPipe's order, each after
// stage s - 1 has sent it, so the stages' launches run at the same simulated time and contend for
// the machine; this module orders the tasks and sums the measured timeline up per stage.

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
 * The pipeline's timeline from its measured tasks (simulated start and end of each forward and
 * each transfer, in any order): the clock starts at the first forward's start, the forwards and
 * sends are listed in {@link gpipeOrder}'s order, a micro-batch ends when the last stage's forward
 * of it ends, and per stage its busy time (its forwards), idle time inside its span and bubble
 * (the makespan less its busy time). A transfer's time is in neither stage's busy time.
 */
export function pipelineTimeline(
  pp: number,
  m: number,
  measured: { readonly forwards: readonly Slot[]; readonly sends: readonly Slot[] },
): PipelineTimeline {
  const t0 = Math.min(...measured.forwards.map((slot) => slot.startNs));
  const key = (slot: PipelineTask) => slot.stage * m + slot.microBatch;
  const rank = new Map(gpipeOrder(pp, m).map((task, index) => [key(task), index]));
  const onClock = (slots: readonly Slot[]) =>
    slots
      .map((slot) => ({ ...slot, startNs: slot.startNs - t0, endNs: slot.endNs - t0 }))
      .sort((a, b) => (rank.get(key(a)) as number) - (rank.get(key(b)) as number));
  const forwards = onClock(measured.forwards);
  const sends = onClock(measured.sends);
  const microBatchEndNs = new Array<number>(m).fill(0);
  for (const slot of forwards) if (slot.stage === pp - 1) microBatchEndNs[slot.microBatch] = slot.endNs;
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
