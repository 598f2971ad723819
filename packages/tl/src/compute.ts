import { MATH_OPS, type MathOpInfo, type MathScalar, mathOutputShape } from "@kb/spec";
import { type Dtype, formatShape, isFloatDtype } from "@kb/tensor";
import type { CallScope } from "./call-scope.js";
import type { CallSite } from "./call-site.js";
import type { TensorHandle } from "./handles.js";
import type { DotOptions } from "./options.js";
import { checkDot, checkMathInputs, mathAxis } from "./validate.js";
import { isZeros, knownMathResult, noteKnownResult } from "./values.js";

// The bodies of the calls that compute in TCM (compute-calls.ts and math-calls.ts declare them):
// `tl.dot` on PE_GEMM and the math ops on PE_MATH. Their results are pending in phase 1, except a
// math op's whose operands phase 1 knows from constants (values.ts, `knownMathResult`).

/** Options of one PE_MATH command (the public calls' options plus what the call itself fixes). */
export interface MathCallOptions {
  /** The target dtype of an op that takes one (`cast`). */
  target?: Dtype;
  /** Axis of a row or reduce op (default: the last). */
  axis?: number;
  /** The operand the scalar stands for, when not the last (`tl.sub(0, x)`: 0). */
  scalarIndex?: number;
  /** The shape to broadcast the operands to when larger than their own joint shape (`tl.broadcastTo`; checked by the caller). */
  broadcastTo?: readonly number[];
  out?: TensorHandle | undefined;
}

/**
 * `tl.dot(a, b, options)` made at `site`: consumes the accumulator (its handle may not be used
 * again). With `scaled` (`tl.dotScaled`, checked by its caller) the GEMM command carries the TCM
 * addresses of the operands' block scales (e8m0, or nvfp4's f8e4m3 named by `scaled.dtype`), and
 * B's dtype when it differs from A's (mixed formats, e.g. e4m3 x e2m1).
 */
export async function runDot(
  scope: CallScope,
  site: CallSite,
  a: TensorHandle,
  b: TensorHandle,
  options: DotOptions,
  scaled?: {
    readonly a?: TensorHandle | undefined;
    readonly b?: TensorHandle | undefined;
    readonly dtype?: "f8e4m3" | undefined;
  },
): Promise<TensorHandle> {
  const call = scaled !== undefined ? "dotScaled" : "dot";
  const scales = scaled ?? {};
  // tl.dotScaled may mix narrow formats (checked by its caller): B's dtype goes in the command.
  const outDtype = checkDot(scope.tl, a, b, options, call === "dotScaled");
  const [m, k] = a.shape as [number, number];
  const n = b.shape[1] as number;
  const acc = options.acc;
  const aa = await scope.inTcm("dot", a, true);
  const bb = await scope.inTcm("dot", b, true);
  const aScale = scales.a === undefined ? undefined : await scope.inTcm(call, scales.a);
  const bScale = scales.b === undefined ? undefined : await scope.inTcm(call, scales.b);
  // A whole tl.zeros never written: overwrite instead of adding (same result). A view of one is
  // written first, as its tensor is written whole: a later fill must never land on the result.
  const freshZeros =
    acc !== undefined &&
    acc._root === null &&
    acc.origin === "constant" &&
    !acc._materialised &&
    isZeros(acc);
  const accumulator = acc !== undefined && !freshZeros ? await scope.inTcm("dot", acc) : acc;
  if (acc !== undefined) {
    // The result takes the accumulator's bytes: the old handle names no value any more (Triton's
    // value semantics), and its constant is never written over them.
    acc._materialised = true;
    acc._consumedBy = { how: "accumulator", site };
  }
  const out =
    accumulator !== undefined
      ? scope.handle({
          op: "dot",
          origin: "compute",
          shape: [m, n],
          dtype: outDtype,
          space: "tcm",
          address: accumulator.address,
          scratchOffset: accumulator.scratchOffset,
        })
      : scope.scratchHandle("dot", "compute", [m, n], outDtype);
  await scope.dispatch();
  await scope.issue({
    kind: "gemm",
    a: aa.address,
    b: bb.address,
    out: out.address,
    m,
    n,
    k,
    dtype: a.dtype,
    ...(b.dtype === a.dtype ? {} : { dtypeB: b.dtype }),
    dtypeAcc: isFloatDtype(a.dtype) ? "f32" : "i32",
    dtypeOut: outDtype,
    accumulate: accumulator !== undefined && !freshZeros,
    transposeA: aa.transposed,
    transposeB: bb.transposed,
    ...(aScale === undefined ? {} : { aScale: aScale.address }),
    ...(bScale === undefined ? {} : { bScale: bScale.address }),
    ...(scales.dtype === undefined ? {} : { scaleDtype: scales.dtype }),
  });
  scope.tl.memory?.markPending?.(out.address, out.nbytes);
  return out;
}

/**
 * The math op `op` of `inputs` (and `scalars`) as one PE_MATH command; its output shape and
 * dtype follow the op's entry in the op table, elementwise operands broadcast to their joint
 * shape (the command's `shape`, with `inputShapes` when one differs). An input dtype other than
 * the output's (a cast, a comparison) goes in the command's `inputDtype`, operands of different
 * dtypes (`where`'s i1 cond) in `inputDtypes`. When phase 1 knows every operand from constants
 * the result is computed now too (same evaluation and rounding as phase 2) and is not pending.
 */
export async function runMath(
  scope: CallScope,
  op: string,
  inputs: readonly TensorHandle[],
  scalars: readonly MathScalar[],
  options: MathCallOptions,
): Promise<TensorHandle> {
  const info = MATH_OPS[op] as MathOpInfo;
  const joint = checkMathInputs(scope.tl, op, inputs);
  const shape = options.broadcastTo !== undefined ? [...options.broadcastTo] : joint;
  const first = inputs[0] as TensorHandle;
  const dtypes = inputs.map((input) => input.dtype);
  const outDtype = info.dtype(dtypes, options.target);
  const axis = mathAxis(scope.tl, op, shape, options.axis);
  const outShape = mathOutputShape(info, shape, axis ?? null, scalars.map(Number));
  const broadcast = inputs.some((input) => formatShape(input.shape) !== formatShape(shape));
  const mixed = dtypes.some((dtype) => dtype !== first.dtype);
  const known = knownMathResult(
    scope.tl,
    op,
    inputs,
    outShape,
    outDtype,
    axis ?? null,
    scalars,
    options.scalarIndex,
  );
  const tcm: TensorHandle[] = [];
  for (const input of inputs) tcm.push(await scope.inTcm(op, input));
  const out =
    options.out === undefined
      ? scope.scratchHandle(op, "compute", outShape, outDtype)
      : await scope.into(op, options.out, "compute", outShape, outDtype);
  await scope.dispatch();
  await scope.issue({
    kind: "math",
    op,
    inputs: tcm.map((h) => h.address),
    shape,
    ...(broadcast ? { inputShapes: inputs.map((input) => [...input.shape]) } : {}),
    out: out.address,
    dtype: outDtype,
    ...(axis !== undefined ? { axis } : {}),
    ...(scalars.length > 0 ? { scalars: [...scalars] } : {}),
    ...(!mixed && first.dtype !== outDtype ? { inputDtype: first.dtype } : {}),
    ...(mixed ? { inputDtypes: dtypes } : {}),
    ...(options.scalarIndex !== undefined ? { scalarIndex: options.scalarIndex } : {}),
  });
  if (known === null) scope.tl.memory?.markPending?.(out.address, out.nbytes);
  else noteKnownResult(scope.tl, out, known, inputs);
  return out;
}
