import { describe, expect, test } from "vitest";
import { gpipeBubble, gpipeOrder, pipelineTimeline } from "../lib/llm/pipeline-schedule.js";

// The pipeline's schedule and clock on hand-computed cases (no simulator).

const pairs = (tasks: readonly { stage: number; microBatch: number }[]) =>
  tasks.map((t) => [t.stage, t.microBatch]);
const slots = (list: readonly { stage: number; microBatch: number; startNs: number; endNs: number }[]) =>
  list.map((s) => [s.stage, s.microBatch, s.startNs, s.endNs]);

describe("GPipe's forward schedule", () => {
  test("2 stages x 2 micro-batches: tick 0 (0,0); tick 1 (0,1) (1,0); tick 2 (1,1)", () => {
    expect(pairs(gpipeOrder(2, 2))).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
    ]);
  });

  test("3 stages x 2 micro-batches: m + pp - 1 = 4 ticks, each stage's micro-batches in order", () => {
    expect(pairs(gpipeOrder(3, 2))).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
      [2, 0],
      [2, 1],
    ]);
  });

  test("the bubble formula (pp-1)/(m+pp-1): 1/3 for 2 x 2, 3/11 for 4 stages x 8 micro-batches, 0 for one stage", () => {
    expect(gpipeBubble(2, 2)).toBeCloseTo(1 / 3, 12);
    expect(gpipeBubble(4, 8)).toBeCloseTo(3 / 11, 12);
    expect(gpipeBubble(1, 5)).toBe(0);
  });
});

/** A slot [stage, microBatch, startNs, endNs]. */
const at = (stage: number, microBatch: number, startNs: number, endNs: number) => ({
  stage,
  microBatch,
  startNs,
  endNs,
});

describe("the pipeline's timeline from its simulated tasks", () => {
  test("equal stages and free transfers give GPipe's bubble exactly: 2 x 2 of 10 ns, makespan 30, bubble 10 ns = 1/3", () => {
    // Stage 0: [0,10] [10,20]; stage 1 waits for micro-batch 0: [10,20] [20,30].
    const t = pipelineTimeline(2, 2, {
      forwards: [at(0, 0, 0, 10), at(0, 1, 10, 20), at(1, 0, 10, 20), at(1, 1, 20, 30)],
      sends: [at(0, 0, 10, 10), at(0, 1, 20, 20)],
    });
    expect(t.makespanNs).toBe(30);
    expect(t.microBatchEndNs).toEqual([20, 30]);
    expect(t.stages.map((s) => [s.busyNs, s.bubbleNs, s.idleInSpanNs])).toEqual([
      [20, 10, 0],
      [20, 10, 0],
    ]);
    expect(t.stages[0]?.bubble).toBeCloseTo(gpipeBubble(2, 2), 12);
  });

  test("the clock starts at the first forward, and tasks come back in GPipe's issue order", () => {
    // The same run 1000 ns into the simulation, with 1 ns sends, reported in completion order.
    const t = pipelineTimeline(2, 2, {
      forwards: [at(1, 1, 1022, 1032), at(0, 1, 1011, 1021), at(1, 0, 1011, 1021), at(0, 0, 1000, 1010)],
      sends: [at(0, 1, 1021, 1022), at(0, 0, 1010, 1011)],
    });
    expect(slots(t.forwards)).toEqual([
      [0, 0, 0, 10],
      [0, 1, 11, 21],
      [1, 0, 11, 21],
      [1, 1, 22, 32],
    ]);
    expect(slots(t.sends)).toEqual([
      [0, 0, 10, 11],
      [0, 1, 21, 22],
    ]);
    expect(t.microBatchEndNs).toEqual([21, 32]);
    // Stage 0: busy 20 of 32, idle 1 ns inside its span (its first send); stage 1 likewise.
    expect(t.stages.map((s) => [s.firstStartNs, s.lastEndNs, s.busyNs, s.idleInSpanNs, s.bubbleNs])).toEqual([
      [0, 21, 20, 1, 12],
      [11, 32, 20, 1, 12],
    ]);
    expect(t.stages[1]?.bubble).toBeCloseTo(12 / 32, 12);
  });

  test("a slow middle stage makes the last stage wait inside its span: 3 stages of 1, 5, 1 ns", () => {
    // Stage 1: [1,6] [6,11]; stage 2: [6,7], then waits 4 ns for micro-batch 1: [11,12].
    const t = pipelineTimeline(3, 2, {
      forwards: [
        at(0, 0, 0, 1),
        at(0, 1, 1, 2),
        at(1, 0, 1, 6),
        at(1, 1, 6, 11),
        at(2, 0, 6, 7),
        at(2, 1, 11, 12),
      ],
      sends: [],
    });
    expect(t.makespanNs).toBe(12);
    expect(t.stages.map((s) => [s.firstStartNs, s.lastEndNs, s.busyNs, s.idleInSpanNs, s.bubbleNs])).toEqual([
      [0, 2, 2, 0, 10],
      [1, 11, 10, 0, 2],
      [6, 12, 2, 4, 10],
    ]);
  });
});
