import { describe, expect, test } from "vitest";
import wideIntegers from "../wide-integers.js";
import { runTutorial } from "./run-tutorial.js";

describe("wide integers: exact i64 / u64 past 2^53 in a kernel", { timeout: 60_000 }, () => {
  test.each(["default", "ref-cube"])(
    "%s.yaml: 2^60 + 1 + i plus 2^60 + 3 is 2^61 + 4 + i exactly, u64 wraps, both phases agree",
    async (name) => {
      const { outputs, phases } = await runTutorial(wideIntegers, { n: 128, BLOCK: 32 }, name);
      // Compared as stored integers: 2^61 + 4 + i differs from its double 2^61 + i rounded.
      expect(outputs).toEqual([
        ["out", true, 0],
        ["out2", true, 0],
        ["total", true, 0], // 4 x (2^60 + 1) = 2^62 + 4, added atomically
        ["wrap", true, 0],
      ]);
      // 4 programs x (2 loads, x and u, and the old value of the atomic), each phase 2's bytes.
      expect(phases).toMatchObject({ observed: 12, compared: 12, differing: 0, unmatched: 0 });
    },
  );
});
