import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import embedding from "../embedding.js";
import { runTutorial } from "./run-tutorial.js";

describe("embedding lookup: a gather by loaded ids", { timeout: 30_000 }, () => {
  // 100 ids in blocks of 16: 7 programs, the last holds 4; rows of D = 24 in blocks of 32.
  test.each([
    ["f32", "default"],
    ["f16", "ref-cube"],
  ])("%s on %s.yaml: out PASSes phase 2, every gathered tile as phase 2 copied it", async (dtype, name) => {
    const params = { n_ids: 100, V: 50, D: 24, BLOCK_N: 16, BLOCK_D: 32, dtype };
    const { outputs, phases, dmaBytes } = await runTutorial(embedding, params, name);
    expect(outputs).toEqual([["out", true, 0]]);
    // 7 programs x (the ids and the gathered rows).
    expect(phases).toMatchObject({ observed: 14, compared: 14, differing: 0, unmatched: 0 });
    // The ids once (i32), then each looked-up row's 24 elements gathered and stored once: the
    // masked-off ids and columns never move.
    expect(dmaBytes).toBe(100 * 4 + 2 * 100 * 24 * DTYPE_BYTES[dtype as Dtype]);
  });
});
