import { describe, expect, it } from "vitest";
import { buildProgram, type RawProgram, type RawStep } from "./build.js";
import { check } from "./check.js";
import { kernelSource } from "./codegen.js";

// The tester's `useConsumed` step (issue 33, point 2): a kernel that reads the accumulator a
// tl.dot consumed, instead of the dot's result, must be refused with TL_INVALID_CALL naming the
// dot; a run that completes (the accumulator read as zeros, as before) is a failure.

const step = (kind: number, a = 0, b = 0, c = 0, d = 0): RawStep => ({ kind, a, b, c, d });

/** One block of 2 rows: load f32 [2, 8], dot it with a weight into `acc`, then use `acc` again. */
function program(accChoice: 1 | 2): RawProgram {
  return {
    seed: 1,
    rows: 1, // 1 + 1 rows
    blockRows: 1, // 1 + 1 rows per block
    pes: 0,
    persistent: false,
    special: false,
    steps: [
      step(0, 0, 5, 0), // load f32 [rows, 8]
      // With an earlier value as accumulator: a first dot (no acc, f32 [rows, 8]) to add into.
      ...(accChoice === 2 ? [step(12, 0, 5, 0, 0)] : []),
      step(12, 0, 5, 0, accChoice === 1 ? 1 : 5), // dot into tl.zeros, or into the earlier dot's result
      step(19, 0, 0, 0), // tl.exp of the consumed accumulator
    ],
  };
}

describe("the tester's consumed-accumulator step", () => {
  it("a use of a consumed tl.zeros accumulator is refused, as the tester expects", async () => {
    const built = buildProgram(program(1));
    expect(built.steps.map((s) => s.kind)).toEqual(["load", "load", "dot", "useConsumed"]);
    expect(kernelSource(built)).toContain("await tl.exp(acc2); // consumed by the dot of v2: refused");
    const verdict = await check(built);
    expect(verdict.failure).toBeNull();
  });

  it("a use of an earlier result consumed as { acc } is refused too", async () => {
    const built = buildProgram(program(2));
    expect(built.steps.map((s) => s.kind)).toEqual(["load", "load", "dot", "load", "dot", "useConsumed"]);
    expect(kernelSource(built)).toContain("await tl.dot(v0, v3, { acc: v2 });");
    expect(kernelSource(built)).toContain("await tl.exp(v2); // consumed by the dot of v4: refused");
    expect((await check(built)).failure).toBeNull();
  });

  it("a run that does not refuse it is a failure saying what was expected", async () => {
    // The dot without its accumulator: the last step then names no consumed handle (`acc2` is
    // never made), so the run fails otherwise than the tester expects.
    const built = buildProgram(program(1));
    const last = built.steps.at(-1);
    if (last?.kind !== "useConsumed") throw new Error("expected the useConsumed step last");
    const fooled = {
      ...built,
      steps: built.steps.map((s, i) => (i === last.dot && s.kind === "dot" ? { ...s, acc: null } : s)),
    };
    const source = kernelSource(fooled);
    expect(source).not.toContain("tl.zeros");
    const verdict = await check(fooled);
    expect(verdict.failure?.kind).toBe("error");
    expect(verdict.failure?.summary).toContain("expected TL_INVALID_CALL naming the tl.dot of v2");
  });
});
