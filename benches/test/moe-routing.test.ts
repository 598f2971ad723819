import { describe, expect, test } from "vitest";
import { checkMoeSplit, MOE_PRESETS } from "../lib/llm/moe-config.js";
import { dispatchPlan } from "../lib/llm/moe-plan.js";
import { applyCapacity, expertCapacity, routeTokens } from "../lib/llm/moe-routing.js";

// Four tokens, four experts, top-2, with logits chosen so the softmax is hand-computable:
// ln 3 against three zeros gives probabilities 3/6, 1/6, 1/6, 1/6.
const ln3 = Math.log(3);
const logits = [
  [2, 1, 0, 0], // t0: e0 then e1, weights e / (e + 1) and 1 / (e + 1)
  [0, ln3, 0, 0], // t1: e1 (3/6), then the tie of 1/6 goes to the lowest index, e0: 3/4, 1/4
  [0, 0, 0, ln3], // t2: e3, then e0: 3/4, 1/4
  [ln3, 0, 0, 0], // t3: e0, then e1: 3/4, 1/4
].flat();

describe("MoE routing (Mixtral's softmax, top-2, renormalised; GShard's capacity)", () => {
  const routes = routeTokens(logits, 4, 2);

  test("each token gets its two most probable experts and weights that sum to 1", () => {
    expect(routes.map((r) => r.experts)).toEqual([
      [0, 1],
      [1, 0],
      [3, 0],
      [0, 1],
    ]);
    const e = Math.E;
    expect(routes[0]?.weights[0]).toBeCloseTo(e / (e + 1), 12);
    expect(routes[0]?.weights[1]).toBeCloseTo(1 / (e + 1), 12);
    for (const r of routes.slice(1)) {
      expect(r.weights[0]).toBeCloseTo(0.75, 12);
      expect(r.weights[1]).toBeCloseTo(0.25, 12);
    }
  });

  test("at capacity factor 1.0 each expert keeps ceil(4 x 2 / 4) = 2: first choices before second ones", () => {
    expect(expertCapacity(4, 4, 2, 1.0)).toBe(2);
    expect(expertCapacity(4, 4, 2, 1.25)).toBe(3);
    expect(expertCapacity(4, 4, 2, null)).toBe(4);
    const outcome = applyCapacity(routes, 4, 2);
    // First choices: t0 -> e0, t1 -> e1, t2 -> e3, t3 -> e0 (e0 full). Second choices: t0 -> e1
    // (e1 full), t1 -> e0 dropped, t2 -> e0 dropped, t3 -> e1 dropped.
    expect(outcome.kept).toEqual([
      [true, true],
      [true, false],
      [true, false],
      [true, false],
    ]);
    expect(outcome.routed).toEqual([4, 3, 0, 1]);
    expect(outcome.computed).toEqual([2, 2, 0, 1]);
    expect(outcome.dropped).toBe(3);
    // No capacity: nothing dropped.
    expect(applyCapacity(routes, 4, expertCapacity(4, 4, 2, null)).dropped).toBe(0);
  });

  test("the dispatch over ep = 2 groups: counts per destination, expert runs, where each choice comes back", () => {
    const plan = dispatchPlan(routes, applyCapacity(routes, 4, 2), 4, 2);
    const [g0, g1] = plan.groups;
    // Group 0 routes t0, t1 (experts 0, 1 are its own); group 1 routes t2, t3.
    expect(g0?.sendIds).toEqual([0, 0, 1]); // to group 0: e0 <- t0; e1 <- t0, t1
    expect(g0?.sendCounts).toEqual([3, 0]);
    expect(g1?.sendIds).toEqual([3, 2]); // to group 0: e0 <- t3; to group 1: e3 <- t2
    expect(g1?.sendCounts).toEqual([1, 1]);
    expect(g0?.recvCounts).toEqual([3, 1]);
    expect(g0?.segments).toEqual([
      { expert: 0, start: 0, count: 1 },
      { expert: 1, start: 1, count: 2 },
      { expert: 0, start: 3, count: 1 },
    ]);
    expect(g1?.recvCounts).toEqual([0, 1]);
    expect(g1?.segments).toEqual([{ expert: 1, start: 0, count: 1 }]);
    // [token x choice] -> send row, and whether it is kept.
    expect(g0?.positions).toEqual([0, 1, 2, 0]);
    expect(g0?.keep).toEqual([1, 1, 1, 0]);
    expect(g1?.positions).toEqual([1, 0, 0, 0]);
    expect(g1?.keep).toEqual([1, 0, 1, 0]);
  });

  test("ep must divide the experts and tp the expert width", () => {
    expect(() => checkMoeSplit(MOE_PRESETS.tiny, 3, 1)).toThrow(
      /ep=3 does not divide the 8 experts.*1, 2, 4, 8/,
    );
    expect(() => checkMoeSplit(MOE_PRESETS.tiny, 2, 3)).toThrow(
      /tp=3 does not divide the expert width \(256\)/,
    );
    expect(() => checkMoeSplit(MOE_PRESETS.tiny, 4, 2)).not.toThrow();
  });
});
