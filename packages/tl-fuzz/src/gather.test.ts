import { describe, expect, it } from "vitest";
import { buildProgram, type RawStep } from "./build.js";
import { check } from "./check.js";
import { kernelSource } from "./codegen.js";
import { evaluate } from "./evaluate.js";
import * as ref from "./reference/index.js";

describe("gathers in the differential tester", () => {
  it("the evaluator's gather: element i of memory at offsets[i], other where the mask is off", () => {
    const memory = ref.tensor([10, 11, 12, 13], [2, 2], "f32");
    const offsets = ref.tensor([3, 0, 3, 1], [4], "i32");
    expect([...ref.gather(memory, offsets).data]).toEqual([13, 10, 13, 11]);
    const mask = ref.tensor([1, 0, 1, 0], [4], "i32"); // the evaluator holds masks as 0 and 1
    expect([...ref.gather(memory, offsets, mask, 0.1).data]).toEqual([
      13,
      Math.fround(0.1),
      13,
      Math.fround(0.1),
    ]);
  });

  it("a drawn gather step loads its i32 columns and gathers them through offsets; phase 2, phase 1 and the evaluator agree", async () => {
    // A load of an f32 input of 7 columns (kind 0 draws a new input: b = 4 -> 7 columns, c = 0 ->
    // f32), then a gather of 5 of its columns (kind 18, c = 3 -> 5) and the automatic stores.
    const steps: RawStep[] = [
      { kind: 0, a: 0, b: 4, c: 0, d: 0 },
      { kind: 18, a: 0, b: 0, c: 3, d: 0 },
    ];
    const program = buildProgram({
      seed: 5,
      rows: 9,
      blockRows: 3,
      pes: 1,
      persistent: false,
      special: false,
      steps,
    });
    expect(program.steps.map((step) => step.kind)).toEqual(["load", "gather", "store"]);
    const index = program.inputs[1];
    expect(index).toMatchObject({ shape: [1, 5], dtype: "i32", split: false });
    expect(index?.values.every((j) => j >= 0 && j < 7)).toBe(true);
    expect(kernelSource(program)).toContain(
      '{ offsets: await tl.add(await tl.mul(tl.expandDims(await tl.add(tl.arange(0, rows), b * BR), 1), 7), await tl.load(X1, [1, 5], "i32")) }',
    );
    // The output's row r, column j is the input's element (r, idx[j]).
    const [out] = evaluate(program);
    const input = program.inputs[0];
    const idx = index?.values ?? [];
    expect([...(out?.data ?? [])].slice(0, 5)).toEqual(idx.map((j) => input?.values[j]));
    const verdict = await check(program);
    expect(verdict.failure).toBeNull();
    // 3 blocks: the X0 loads, the index loads and the gathers are compared op by op.
    expect(verdict.loadsCompared).toBe(9);
  });
});
