// The step of the differential tester for `tl.dotScaled` (issue 39: fp8, fp4 and block scales):
// operands of a narrow float format drawn from exact values, e8m0 scales per 32 elements along K
// (an i8 input of bytes 126, 127 and 128: 0.5, 1 and 2) or, for nvfp4 (e2m1 x e2m1), f8e4m3
// scales per 16 (values 0.5 to 2 in quarters), the weight maybe stored transposed, with
// or without a `tl.zeros` accumulator. Drawn by `buildProgram` for kind 30; its source (codegen)
// and its value (evaluate) are here too, from packages/tl/README.md's "dotScaled".

import { type BuildContext, COLS, type RawStep } from "./build-context.js";
import { pick } from "./pick.js";
import type { Dtype, Program, Step, ValueType } from "./program.js";
import * as ref from "./reference/index.js";
import { q, rowsOf } from "./source-text.js";

/** The kind of the step drawn here (after round 3's 27 to 29). */
export const SCALED_KIND = 30;

const FORMATS: readonly { readonly format: ref.ScaledFormat; readonly dtype: Dtype }[] = [
  { format: "e4m3", dtype: "f8e4m3" },
  { format: "e5m2", dtype: "f8e5m2" },
  { format: "e2m1", dtype: "f4e2m1" },
];
/** Scale bytes as i8 elements: 126, 127 and 128 (-128), scales 0.5, 1 and 2. */
const SCALE_ELEMENTS = [126, 127, -128];
/** nvfp4's f8e4m3 scale values: products with the operands stay multiples of 1/16 (sums exact). */
const NV_SCALE_VALUES = [0.5, 0.75, 1, 1.25, 1.5, 2];
/** Operand values: multiples of 1/2 in [-2, 2], exact in every format (sums exact in f32). */
const OPERAND_VALUES = [-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2];

/** The `tl.dotScaled` step. */
export type DotScaledStep = Extract<Step, { kind: "dotScaled" }>;

/** An input of `values` drawn from `choices` (never NaN or infinite: the sums stay exact). */
function input(
  ctx: BuildContext,
  shape: readonly [number, number],
  dtype: Dtype,
  split: boolean,
  transposed: boolean,
  choices: readonly number[],
): number {
  const values = Array.from(
    { length: shape[0] * shape[1] },
    () => choices[pick(ctx.random() * choices.length, choices.length)] as number,
  );
  ctx.inputs.push({ name: `X${ctx.inputs.length}`, shape, dtype, split, transposed, values });
  return ctx.inputs.length - 1;
}

/**
 * nvfp4's f8e4m3 scales `[lines, blocks]` (blocks even): one draw per pair of blocks, as many
 * draws as the e8m0 scales' `[lines, blocks / 2]` (the programs drawn after stay those of earlier
 * seeds), the pair's second scale the next value of {@link NV_SCALE_VALUES} (never the first's:
 * a GEMM that read one scale per 32 would differ).
 */
function nvScaleInput(ctx: BuildContext, shape: readonly [number, number], split: boolean): number {
  const values: number[] = [];
  for (let i = 0; i < (shape[0] * shape[1]) / 2; i++) {
    const at = pick(ctx.random() * NV_SCALE_VALUES.length, NV_SCALE_VALUES.length);
    values.push(NV_SCALE_VALUES[at] as number, NV_SCALE_VALUES[(at + 1) % NV_SCALE_VALUES.length] as number);
  }
  ctx.inputs.push({
    name: `X${ctx.inputs.length}`,
    shape,
    dtype: "f8e4m3",
    split,
    transposed: false,
    values,
  });
  return ctx.inputs.length - 1;
}

/**
 * Draws `tl.dotScaled(a, aScale, fmtA, b, bScale, fmtB, acc?)` of new inputs: `choice.a` modulo 3
 * picks A's format, and B's is that many formats further on for `floor(choice.a / 3)` modulo 3
 * (0: the same format; 1 and 2: a mixed-format GEMM such as e4m3 x e2m1). An e2m1 x e2m1 GEMM
 * is nvfp4 (f8e4m3 scales per 16) when `floor(choice.a / 9)` is odd.
 */
export function drawDotScaled(choice: RawStep, ctx: BuildContext): void {
  const aIndex = pick(choice.a, FORMATS.length);
  const { format, dtype } = FORMATS[aIndex] as (typeof FORMATS)[number];
  const bIndex = pick(aIndex + Math.trunc(choice.a / FORMATS.length), FORMATS.length);
  const { format: bFormat, dtype: bDtype } = FORMATS[bIndex] as (typeof FORMATS)[number];
  const k = 32 * (1 + pick(choice.b, 2));
  const nv = format === "e2m1" && bFormat === "e2m1" && pick(Math.trunc(choice.a / 9), 2) === 1;
  const [scaleDtype, block]: [Dtype, number] = nv ? ["f8e4m3", 16] : ["i8", 32];
  const scales = (shape: readonly [number, number], split: boolean) =>
    nv ? nvScaleInput(ctx, shape, split) : input(ctx, shape, "i8", split, false, SCALE_ELEMENTS);
  const n = COLS[pick(choice.c, COLS.length)] as number;
  const transposed = pick(choice.d, 2) === 1;
  const a = ctx.push(
    { kind: "load", input: input(ctx, [ctx.rows, k], dtype, true, false, OPERAND_VALUES), col0: 0, cols: k },
    { rows: "block", cols: k, dtype, exact: null },
  );
  const aScale = ctx.push(
    {
      kind: "load",
      input: scales([ctx.rows, k / block], true),
      col0: 0,
      cols: k / block,
    },
    { rows: "block", cols: k / block, dtype: scaleDtype, exact: null },
  );
  const weight = input(ctx, transposed ? [n, k] : [k, n], bDtype, false, transposed, OPERAND_VALUES);
  const b = ctx.push(
    { kind: "load", input: weight, col0: 0, cols: transposed ? k : n },
    { rows: transposed ? n : k, cols: transposed ? k : n, dtype: bDtype, exact: null },
  );
  const bScale = ctx.push(
    {
      kind: "load",
      input: scales([n, k / block], false),
      col0: 0,
      cols: k / block,
    },
    { rows: n, cols: k / block, dtype: scaleDtype, exact: null },
  );
  // The weight and the scales are read only by the dot; A stays live (fp8 values for other steps).
  for (const value of [aScale, b, bScale]) ctx.live.delete(value);
  const acc = pick(choice.d * 7, 2) === 0 ? null : "zeros";
  ctx.push(
    {
      kind: "dotScaled",
      a,
      aScale,
      b,
      bScale,
      format,
      bFormat,
      acc,
      ...(nv ? { scaleDtype: "f8e4m3" } : {}),
    },
    { rows: "block", cols: n, dtype: "f32", exact: null },
  );
}

/** The kernel source of a dotScaled step `i`. */
export function dotScaledSource(program: Program, step: DotScaledStep, i: number): string {
  const weight = program.steps[step.b];
  const stored = weight?.kind === "load" ? program.inputs[weight.input] : undefined;
  const b = stored?.transposed === true ? `tl.trans(v${step.b})` : `v${step.b}`;
  const type = program.types[i] as ValueType;
  const zeros =
    step.acc === "zeros" ? `const acc${i} = tl.zeros([${rowsOf(type.rows)}, ${type.cols}], "f32"); ` : "";
  const acc = step.acc === "zeros" ? `, acc${i}` : "";
  const [fa, fb] = [q(step.format), q(step.bFormat)];
  return `${zeros}const v${i} = await tl.dotScaled(v${step.a}, v${step.aScale}, ${fa}, ${b}, v${step.bScale}, ${fb}${acc});`;
}

/** The value of a dotScaled step on a block of `rows` rows (README "dotScaled"). */
export function evaluateDotScaled(
  program: Program,
  step: DotScaledStep,
  value: (index: number) => ref.RefTensor,
  rows: number,
): ref.RefTensor {
  const weight = program.steps[step.b];
  const stored = weight?.kind === "load" ? program.inputs[weight.input] : undefined;
  const b = stored?.transposed === true ? ref.transpose(value(step.b)) : value(step.b);
  const n = b.shape[1] as number;
  const acc = step.acc === "zeros" ? ref.zeros([rows, n], "f32") : undefined;
  return ref.dotScaled(
    value(step.a),
    value(step.aScale),
    step.format,
    b,
    value(step.bScale),
    step.bFormat,
    acc,
  );
}
