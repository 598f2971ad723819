import { parseBenchParams } from "@kb/runtime";
import { describe, expect, test } from "vitest";
import grouped, { groupTiles, parseGroupSizes } from "../08-grouped-gemm.js";
import { runTutorial } from "./run-tutorial.js";

/** The tutorial through the runtime API, phase 2 and the load comparison included (run-tutorial.ts). */
const run = (params: Record<string, unknown>, topologyName = "default") =>
  runTutorial(grouped, params, topologyName);

// Three GEMMs of different shapes in 64 x 64 x 32 blocks: 256x128x64 (4 x 2 = 8 tiles of 2 K
// steps), 128x64x128 (2 tiles of 4 K steps), 64x64x64 (1 tile of 2 K steps): 11 tiles, 26 K steps.
const SMALL = {
  sizes: "256x128x64,128x64x128,64x64x64",
  BLOCK_SIZE_M: 64,
  BLOCK_SIZE_N: 64,
  BLOCK_SIZE_K: 32,
};
const STEPS = 8 * 2 + 2 * 4 + 1 * 2;

/**
 * The loads of the launch: every program loads each GEMM's sizes (group_size loads), each tile
 * its GEMM's leading dimensions and three pointers (4 loads), each K step a block of A and of B.
 */
const loads = (programs: number) => programs * 3 + 11 * 4 + 2 * STEPS;

describe("tutorial 08: a group of GEMMs in one launch, described by device tensors", {
  timeout: 120_000,
}, () => {
  test("the group's tiles: the sum of each GEMM's cdiv(M, BLOCK_SIZE_M) x cdiv(N, BLOCK_SIZE_N)", () => {
    const sizes = parseGroupSizes(SMALL.sizes);
    expect(sizes).toEqual([
      { M: 256, N: 128, K: 64 },
      { M: 128, N: 64, K: 128 },
      { M: 64, N: 64, K: 64 },
    ]);
    expect(groupTiles(sizes, { NUM_SM: 1, ...SMALL })).toBe(11);
  });

  test.each([
    ["f32", 16, "default"],
    ["f16", 3, "ref-cube"],
    ["bf16", 16, "default"],
    ["bf16", 3, "ref-cube"],
  ] as const)(
    "%s, NUM_SM %i on %s.yaml: every C_g PASSes phase 2, and phase 1 observed every load (tables included) as phase 2 copied it",
    async (dtype, NUM_SM, name) => {
      const { outputs, phases, dots } = await run({ ...SMALL, NUM_SM, dtype }, name);
      expect(outputs).toEqual([
        ["C0", true, 0],
        ["C1", true, 0],
        ["C2", true, 0],
      ]);
      expect(dots).toBe(STEPS);
      expect(phases).toMatchObject({ observed: loads(NUM_SM), compared: loads(NUM_SM), differing: 0 });
    },
  );

  test("a GEMM that is not a whole number of blocks is a bad param naming it and the blocks (Triton's kernel assumes full tiles)", () => {
    const error = (() => {
      try {
        parseBenchParams(grouped, { ...SMALL, sizes: "256x128x64,100x64x128" });
      } catch (thrown) {
        return thrown as { code: string; message: string };
      }
      return null;
    })();
    expect(error?.code).toBe("RUNTIME_INVALID");
    expect(error?.message).toContain(
      "sizes: GEMM 1 (100x64x128) must be a whole number of 64x64x32 blocks, as Triton's grouped kernel assumes full tiles",
    );
  });
});
