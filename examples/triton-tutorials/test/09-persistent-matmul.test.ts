import { describe, expect, test } from "vitest";
import matmul03 from "../03-matmul.js";
import persistent, { computePid } from "../09-persistent-matmul.js";
import { runTutorial } from "./run-tutorial.js";

/** The tutorial through the runtime API, phase 2 and the load comparison included (run-tutorial.ts). */
const run = (params: Record<string, unknown>, topologyName = "default") =>
  runTutorial(persistent, params, topologyName);

// 200 x 136 x 328 in 64-blocks: 4 x 3 = 12 tiles, 6 K steps each, every edge ragged (the last row
// block 8 rows, the last column block 8 columns, the last K step 8 deep), on 5 programs: programs
// 0 and 1 take 3 tiles (p, p + 5, p + 10), programs 2 to 4 take 2.
const RAGGED = {
  M: 200,
  N: 136,
  K: 328,
  BLOCK_SIZE_M: 64,
  BLOCK_SIZE_N: 64,
  BLOCK_SIZE_K: 64,
  GROUP_SIZE_M: 2,
};

describe("tutorial 09: persistent matmul, NUM_SMS programs looping over the tiles", {
  timeout: 120_000,
}, () => {
  test("_compute_pid walks a group of GROUP_SIZE_M row blocks column by column, as Triton's", () => {
    // 4 x 3 blocks, groups of 2 row blocks: num_pid_in_group = 2 * 3 = 6 tiles per group.
    const order = Array.from({ length: 12 }, (_, tile) => computePid(tile, 6, 4, 2));
    expect(order).toEqual([
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 1],
      [0, 2],
      [1, 2],
      [2, 0],
      [3, 0],
      [2, 1],
      [3, 1],
      [2, 2],
      [3, 2],
    ]);
    // 5 row blocks in groups of 2: the last group has one row block and walks its row.
    expect(Array.from({ length: 3 }, (_, i) => computePid(12 + i, 6, 5, 2))).toEqual([
      [4, 0],
      [4, 1],
      [4, 2],
    ]);
  });

  test.each([
    ["f32", 1, "default"],
    ["f16", 3, "ref-cube"],
    ["bf16", 1, "default"],
    ["bf16", 3, "ref-cube"],
  ] as const)(
    "%s, STAGES %i on %s.yaml, ragged edges: C PASSes phase 2 and phase 1 observed every load as phase 2 copied it",
    async (dtype, STAGES, name) => {
      const { outputs, phases, dots } = await run({ ...RAGGED, NUM_SMS: 5, STAGES, dtype }, name);
      expect(outputs).toEqual([["C", true, 0]]);
      // 12 tiles x 6 K steps: a dot and two loads (A's block, B's block) each.
      expect(dots).toBe(72);
      expect(phases).toMatchObject({ observed: 144, compared: 144, differing: 0, unmatched: 0 });
    },
  );

  test("one program per tile in row-major order (NUM_SMS = tiles, GROUP_SIZE_M = 1) is tutorial 03's kernel: the same launch to the picosecond", async () => {
    // 256 x 256 x 256 in 64-blocks: 16 tiles of 4 K steps on default.yaml's 16 PEs, two stages.
    const shape = { M: 256, N: 256, K: 256, dtype: "f16" };
    const blocks03 = { BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 64, STAGES: 2 };
    const blocks09 = { BLOCK_SIZE_M: 64, BLOCK_SIZE_N: 64, BLOCK_SIZE_K: 64, STAGES: 2 };
    const t03 = await runTutorial(matmul03, { ...shape, ...blocks03 });
    const t09 = await run({ ...shape, ...blocks09, NUM_SMS: 16, GROUP_SIZE_M: 1 });
    expect([t03.report.pass, t09.report.pass]).toEqual([true, true]);
    expect(t09.launchNs).toBeCloseTo(t03.launchNs, 3);
    expect(t09.dmaBytes).toBe(t03.dmaBytes);
  });
});
