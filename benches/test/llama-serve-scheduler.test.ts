import { describe, expect, it } from "vitest";
import { percentile, requestLatencies, summarize } from "../lib/serve/metrics.js";
import { runScheduler, type ServeRequest, type StepRecord } from "../lib/serve/scheduler.js";

// Hand-computed traces: every step takes 100 ns (a constant step time), so the times below follow
// from the scheduler's decisions alone.
const constant = () => 100;
const request = (
  id: number,
  arrivalNs: number,
  promptTokens: number,
  outputTokens: number,
): ServeRequest => ({
  id,
  arrivalNs,
  promptTokens,
  outputTokens,
});
const shape = (step: StepRecord) => ({
  at: step.startNs,
  items: step.items.map((i) => `${i.request}:${i.kind}@${i.pos0}+${i.tokens}`),
  blocks: step.usedBlocks,
  finished: step.finished,
});

describe("llama-serve scheduler", () => {
  it("admits by arrival within the token budget, chunks a long prompt, decodes with the batch of each step, frees blocks on completion and jumps to the next arrival when idle", async () => {
    // A: prompt 6 in chunks of 4 (4 then 2); B: prompt 3, one output token (done at its prefill's
    // end); C arrives at 150, during step 1, so step 2 admits it; D arrives when all is done.
    const requests = [
      request(0, 0, 6, 2),
      request(1, 0, 3, 1),
      request(2, 150, 2, 3),
      request(3, 1000, 1, 1),
    ];
    const run = await runScheduler(
      requests,
      { maxBatchTokens: 8, chunk: 4, blockTokens: 4, kvBlocks: 8 },
      constant,
    );
    expect(run.steps.map(shape)).toEqual([
      // A 4 tokens (1 block), B 3 (1 block): 7 of 8 tokens.
      { at: 0, items: ["0:prefill@0+4", "1:prefill@0+3"], blocks: 2, finished: [1] },
      // A's second chunk: positions 4..5 need a second block; B's freed.
      { at: 100, items: ["0:prefill@4+2"], blocks: 2, finished: [] },
      // Decodes first, then the admitted prefill: A's 7th position fits its 2 blocks, C takes 1.
      { at: 200, items: ["0:decode@6+1", "2:prefill@0+2"], blocks: 3, finished: [0] },
      { at: 300, items: ["2:decode@2+1"], blocks: 1, finished: [] },
      { at: 400, items: ["2:decode@3+1"], blocks: 1, finished: [2] },
      { at: 1000, items: ["3:prefill@0+1"], blocks: 1, finished: [3] },
    ]);
    expect(run.steps.map((s) => s.admitted)).toEqual([[0, 1], [], [2], [], [], [3]]);
    expect(run.preemptions).toBe(0);
    expect(requestLatencies(run)).toEqual([
      { id: 0, ttftNs: 200, tpotNs: 100, e2eNs: 300 },
      { id: 1, ttftNs: 100, tpotNs: null, e2eNs: 100 },
      { id: 2, ttftNs: 150, tpotNs: 100, e2eNs: 350 },
      { id: 3, ttftNs: 100, tpotNs: null, e2eNs: 100 },
    ]);
  });

  it("cuts a chunk to the budget left by the earlier sequences", async () => {
    const run = await runScheduler(
      [request(0, 0, 6, 1), request(1, 0, 3, 1)],
      { maxBatchTokens: 5, chunk: 4, blockTokens: 4, kvBlocks: 8 },
      constant,
    );
    expect(run.steps.map(shape).slice(0, 2)).toEqual([
      { at: 0, items: ["0:prefill@0+4", "1:prefill@0+1"], blocks: 2, finished: [] },
      { at: 100, items: ["0:prefill@4+2", "1:prefill@1+2"], blocks: 3, finished: [0, 1] },
    ]);
  });

  it("preempts the newest sequence when a decode needs a block of a full cache, and recomputes its prompt and generated tokens later", async () => {
    // 2 blocks of 2 tokens. Step 0: A (prompt 2) and B (prompt 1) take one block each. Step 1: A's
    // decode writes position 2, a third position: a new block, none free: B, the newest, is
    // preempted (its block freed) and waits at the queue's head. B comes back once A finishes,
    // prefilling 2 positions (its prompt and the token it had generated).
    const run = await runScheduler(
      [request(0, 0, 2, 3), request(1, 0, 1, 3)],
      { maxBatchTokens: 8, chunk: 8, blockTokens: 2, kvBlocks: 2 },
      constant,
    );
    expect(run.steps.map(shape)).toEqual([
      { at: 0, items: ["0:prefill@0+2", "1:prefill@0+1"], blocks: 2, finished: [] },
      { at: 100, items: ["0:decode@2+1"], blocks: 2, finished: [] },
      { at: 200, items: ["0:decode@3+1"], blocks: 2, finished: [0] },
      { at: 300, items: ["1:prefill@0+2"], blocks: 1, finished: [] },
      { at: 400, items: ["1:decode@2+1"], blocks: 2, finished: [1] },
    ]);
    expect(run.steps.map((s) => s.preempted)).toEqual([[], [1], [], [], []]);
    expect(run.steps.map((s) => s.admitted)).toEqual([[0, 1], [], [], [1], []]);
    expect(run.preemptions).toBe(1);
    expect(run.requests.map((r) => r.preemptions)).toEqual([0, 1]);
    // B's first token came at 100 (before the preemption); it finishes at 500.
    expect(requestLatencies(run)[1]).toEqual({ id: 1, ttftNs: 100, tpotNs: 200, e2eNs: 500 });
  });

  it("preempts a sequence itself when it is the newest, and admits it again when blocks free", async () => {
    // 3 blocks of 2: A and B (prompt 2) take one each; A's decode takes the third; B's needs a
    // fourth: B is the newest, so it is preempted (not A) and waits for 2 blocks (prompt 2 + 1
    // generated = 3 positions) until A finishes.
    const run = await runScheduler(
      [request(0, 0, 2, 3), request(1, 0, 2, 3)],
      { maxBatchTokens: 8, chunk: 8, blockTokens: 2, kvBlocks: 3 },
      constant,
    );
    expect(run.steps.map(shape)).toEqual([
      { at: 0, items: ["0:prefill@0+2", "1:prefill@0+2"], blocks: 2, finished: [] },
      { at: 100, items: ["0:decode@2+1"], blocks: 2, finished: [] },
      { at: 200, items: ["0:decode@3+1"], blocks: 2, finished: [0] },
      { at: 300, items: ["1:prefill@0+3"], blocks: 2, finished: [] },
      { at: 400, items: ["1:decode@3+1"], blocks: 2, finished: [1] },
    ]);
    expect(run.steps[1]?.preempted).toEqual([1]);
  });

  it("refuses a request the whole cache cannot hold, naming it and the limits", async () => {
    await expect(
      runScheduler(
        [request(0, 0, 8, 2)],
        { maxBatchTokens: 8, chunk: 8, blockTokens: 4, kvBlocks: 2 },
        constant,
      ),
    ).rejects.toThrow(/request 0 needs 9 KV positions .*\(kvBlocks 2 x blockTokens 4 = 8\)/);
  });
});

describe("llama-serve percentiles", () => {
  it("interpolates linearly between the closest ranks (numpy's default)", () => {
    const values = [40, 10, 30, 20, 50]; // sorted: 10 20 30 40 50, ranks 0..4
    expect(percentile(values, 50)).toBe(30); // rank 2
    expect(percentile(values, 90)).toBeCloseTo(46, 12); // rank 3.6: 40 + 0.6 x 10
    expect(percentile(values, 99)).toBeCloseTo(49.6, 12); // rank 3.96
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it("summarises a run: percentiles of each latency, throughput over the span, peak occupancy", async () => {
    const run = await runScheduler(
      [request(0, 0, 6, 2), request(1, 0, 3, 1), request(2, 150, 2, 3)],
      { maxBatchTokens: 8, chunk: 4, blockTokens: 4, kvBlocks: 8 },
      constant,
    );
    const summary = summarize(run, 8);
    // TTFT 200, 100, 150 -> p50 150; E2E 300, 100, 350 -> p50 300; TPOT 100 and 100.
    expect(summary.ttft.p50).toBe(150);
    expect(summary.e2e.p50).toBe(300);
    expect(summary.tpot).toEqual({ p50: 100, p90: 100, p99: 100 });
    // 6 output tokens and 11 prompt tokens over 0..500 ns.
    expect(summary.outputTokensPerS).toBeCloseTo(6e9 / 500, 6);
    expect(summary.totalTokensPerS).toBeCloseTo(17e9 / 500, 6);
    expect(summary.peakKvOccupancy).toBe(3 / 8);
    expect(summary.steps).toBe(5);
  });
});
