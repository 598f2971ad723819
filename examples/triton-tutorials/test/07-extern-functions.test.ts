import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import externFunctions from "../07-extern-functions.js";
import { runTutorial } from "./run-tutorial.js";

describe("tutorial 07: libdevice asin", { timeout: 30_000 }, () => {
  // 1000 elements in blocks of 64: 16 programs, the last holds 40.
  test.each([
    ["f32", "default"],
    ["f16", "default"],
    ["bf16", "ref-cube"],
  ])("%s on %s.yaml: y = asin(x) PASSes phase 2, the phases agree", async (dtype, name) => {
    const { outputs, phases, dmaBytes } = await runTutorial(
      externFunctions,
      { n_elements: 1000, BLOCK_SIZE: 64, dtype },
      name,
    );
    expect(outputs).toEqual([["y", true, 0]]);
    expect(phases).toMatchObject({ observed: 16, compared: 16, differing: 0, unmatched: 0 });
    // x read and y written once: 2 x 1000 elements.
    expect(dmaBytes).toBe(2 * 1000 * DTYPE_BYTES[dtype as Dtype]);
  });
});
