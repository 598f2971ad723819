import { describe, expect, test } from "vitest";
import backward from "../05-layer-norm-backward.js";
import { runTutorial } from "./run-tutorial.js";

// 12 rows of 100 columns (BLOCK_SIZE_N 128, 28 masked off), 4 partial rows: rows r, r + 4, r + 8
// share lock r. Each program spins on tl.atomicCas until it holds its lock, so programs of one
// group add into their partial row one after another.
const SMALL = { M: 12, N: 100, GROUP_SIZE_M: 4, BLOCK_SIZE_M: 4, BLOCK_SIZE_N: 64 };

describe("tutorial 05 backward: dX, dW, dB with a spin lock per group of rows", { timeout: 120_000 }, () => {
  test.each([
    ["f32", "default"],
    ["f16", "ref-cube"],
    ["bf16", "default"],
  ] as const)("%s on %s.yaml: dx, dw, db PASS phase 2 and the phases agree", async (dtype, name) => {
    const { outputs, phases, atomics } = await runTutorial(backward, { ...SMALL, dtype }, name);
    expect(outputs).toEqual([
      ["db", true, 0],
      ["dw", true, 0],
      ["dx", true, 0],
    ]);
    expect(phases).toMatchObject({ differing: 0, unmatched: 0 });
    // 12 programs: one count exchange for each of the 4 first holders of a lock, one release each;
    // at least one failed attempt a program waiting for its lock.
    expect(atomics.xchg).toBe(4 + 12);
    expect(atomics.cas).toBeGreaterThan(12);
  });
});
