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

describe("the pipeline's clock", () => {
  test("equal stages and free transfers give GPipe's bubble exactly: 2 x 2 of 10 ns, makespan 30, bubble 10 ns = 1/3", () => {
    const t = pipelineTimeline(2, 2, {
      compute: [
        [10, 10],
        [10, 10],
      ],
      send: [[0, 0]],
    });
    // Stage 0: [0,10] [10,20]; stage 1 waits for micro-batch 0: [10,20] [20,30].
    expect(slots(t.forwards)).toEqual([
      [0, 0, 0, 10],
      [0, 1, 10, 20],
      [1, 0, 10, 20],
      [1, 1, 20, 30],
    ]);
    expect(t.makespanNs).toBe(30);
    expect(t.stages.map((s) => [s.busyNs, s.bubbleNs, s.idleInSpanNs])).toEqual([
      [20, 10, 0],
      [20, 10, 0],
    ]);
    expect(t.stages[0]?.bubble).toBeCloseTo(gpipeBubble(2, 2), 12);
  });

  test("a 1 ns transfer delays stage 1 by 1 ns per micro-batch it waits for: makespan 31, bubbles 11/31", () => {
    const t = pipelineTimeline(2, 2, {
      compute: [
        [10, 10],
        [10, 10],
      ],
      send: [[1, 1]],
    });
    // Sends: mb 0 [10,11] (after stage 0's first forward), mb 1 [20,21]; stage 1: [11,21] [21,31].
    expect(slots(t.sends)).toEqual([
      [0, 0, 10, 11],
      [0, 1, 20, 21],
    ]);
    expect(slots(t.forwards.filter((s) => s.stage === 1))).toEqual([
      [1, 0, 11, 21],
      [1, 1, 21, 31],
    ]);
    expect(t.microBatchEndNs).toEqual([21, 31]);
    expect(t.stages.map((s) => s.bubbleNs)).toEqual([11, 11]);
    expect(t.stages[1]?.bubble).toBeCloseTo(11 / 31, 12);
  });

  test("a slow middle stage makes the last stage wait inside its span: 3 stages of 1, 5, 1 ns", () => {
    const t = pipelineTimeline(3, 2, {
      compute: [
        [1, 1],
        [5, 5],
        [1, 1],
      ],
      send: [
        [0, 0],
        [0, 0],
      ],
    });
    // Stage 1: [1,6] [6,11]; stage 2: [6,7], then waits 4 ns for micro-batch 1: [11,12].
    expect(slots(t.forwards.filter((s) => s.stage === 2))).toEqual([
      [2, 0, 6, 7],
      [2, 1, 11, 12],
    ]);
    expect(t.makespanNs).toBe(12);
    expect(t.stages.map((s) => [s.firstStartNs, s.lastEndNs, s.busyNs, s.idleInSpanNs, s.bubbleNs])).toEqual([
      [0, 2, 2, 0, 10],
      [1, 11, 10, 0, 2],
      [6, 12, 2, 4, 10],
    ]);
  });

  test("a transfer waits for the link: the second send starts when the first one ends", () => {
    // Stage 0 forwards of 1 ns, sends of 5 ns: mb 1's send waits for mb 0's (ends 6) and ends 11.
    const t = pipelineTimeline(2, 2, {
      compute: [
        [1, 1],
        [1, 1],
      ],
      send: [[5, 5]],
    });
    expect(slots(t.sends)).toEqual([
      [0, 0, 1, 6],
      [0, 1, 6, 11],
    ]);
    expect(t.microBatchEndNs).toEqual([7, 12]);
  });
});
