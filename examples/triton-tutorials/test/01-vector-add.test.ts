import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import vectorAdd from "../01-vector-add.js";
import { runTutorial } from "./run-tutorial.js";

/** The tutorial through the runtime API, phase 2 and the load comparison included (run-tutorial.ts). */
const run = (params: Record<string, unknown>, topologyName = "default") =>
  runTutorial(vectorAdd, params, topologyName);

describe("tutorial 01: vector add with a masked tail", { timeout: 30_000 }, () => {
  // 1000 elements in blocks of 64: 16 programs, the last holds 40 (1000 = 15 x 64 + 40).
  test.each([
    ["f32", "default"],
    ["f16", "default"],
    ["bf16", "ref-cube"],
  ])(
    "%s on %s.yaml: output PASSes phase 2, phase 1 observed every load as phase 2 copied it",
    async (dtype, name) => {
      const { report, phases, dmaBytes } = await run({ n_elements: 1000, BLOCK_SIZE: 64, dtype }, name);
      expect(report.outputs.map((output) => [output.name, output.pass, output.mismatches])).toEqual([
        ["output", true, 0],
      ]);
      // 16 programs x (x and y).
      expect(phases).toMatchObject({ observed: 32, compared: 32, differing: 0, unmatched: 0 });
      // The DMAs move x, y and output once: 3 x 1000 elements, not 3 x 16 x 64 (the last block's
      // 24 masked-off elements never move).
      expect(dmaBytes).toBe(3 * 1000 * DTYPE_BYTES[dtype as Dtype]);
    },
  );
});
