import {
  broadcastShapes,
  DTYPE_BYTES,
  type Dtype,
  MATH_OPS,
  MATH_SHAPES,
  type MathCommand,
  type MathScalar,
  mathOutputShape,
} from "@kb/spec";
import type { OpSpec, StageParams } from "./message.js";
import {
  dtypeBytes,
  type Feed,
  fetchComputeStore,
  invalid,
  ownTcm,
  type PeEngines,
  positiveInt,
  singleFeed,
  stage,
} from "./plan-support.js";

// The feed of a PE_MATH command, and the math op records composite MATH tiles share.

/** Checks a math op's name and operand count; returns its info. */
export function mathInfo(where: string, op: string, operands: number, scalars: number) {
  const info = MATH_OPS[op];
  if (info === undefined) {
    throw invalid(where, `unknown math op "${op}"; known ops: ${Object.keys(MATH_OPS).join(", ")}.`);
  }
  const withScalar = info.scalar && operands === info.arity - 1 && scalars >= 1;
  if (operands !== info.arity && !withScalar) {
    throw invalid(where, `math op "${op}" takes ${info.arity} tensor operand(s), got ${operands}.`);
  }
  if (info.params.length > 0 && scalars !== info.params.length) {
    throw invalid(where, `${op} needs scalars [${info.params.join(", ")}].`);
  }
  return info;
}

export function mathOp(
  op: string,
  inputs: readonly number[],
  inputShape: readonly number[],
  out: number,
  outShape: readonly number[],
  dtype: Dtype,
  axis: number | null,
  scalars: readonly MathScalar[] | undefined,
  inputDtype?: Dtype,
  operands: MathOperands = {},
): OpSpec {
  const params: Record<string, unknown> = {
    op,
    input_addrs: [...inputs],
    input_shapes: inputs.map((_, i) => [...(operands.inputShapes?.[i] ?? inputShape)]),
    dst_addr: out,
    shape_out: [...outShape],
    dtype,
    axis,
    addr_space: "tcm",
  };
  if (scalars !== undefined && scalars.length > 0) params.scalars = [...scalars];
  if (inputDtype !== undefined && inputDtype !== dtype) params.input_dtype = inputDtype;
  if (operands.inputDtypes !== undefined) params.input_dtypes = [...operands.inputDtypes];
  if (operands.scalarIndex !== undefined) params.scalar_index = operands.scalarIndex;
  return { kind: "math", name: op, params };
}

/** What a math command says of its operands beyond one shape and one dtype (broadcasting, `where`'s i1 cond, a scalar first). */
type MathOperands = Pick<MathCommand, "inputShapes" | "inputDtypes" | "scalarIndex">;

/**
 * Checks the per-operand fields of a math command: `inputShapes` (elementwise ops only) broadcast
 * to `shape`, `inputDtypes` name a dtype per operand, `scalarIndex` is an operand the scalar may
 * stand for.
 */
function checkOperands(where: string, command: MathCommand, elementwise: boolean, withScalar: boolean): void {
  const { inputShapes, inputDtypes, scalarIndex } = command;
  if (inputShapes !== undefined) {
    if (!elementwise || inputShapes.length !== command.inputs.length)
      throw invalid(where, "inputShapes needs an elementwise op and one shape per input.");
    const joint = broadcastShapes([...inputShapes, command.shape]);
    if (joint === null || joint.join() !== command.shape.join()) {
      throw invalid(
        where,
        `inputShapes ${inputShapes.map((shape) => `[${shape.join(", ")}]`).join(", ")} do not broadcast to shape [${command.shape.join(", ")}].`,
      );
    }
  }
  if (inputDtypes !== undefined) {
    if (inputDtypes.length !== command.inputs.length)
      throw invalid(where, "inputDtypes needs one dtype per input.");
    for (const [i, dtype] of inputDtypes.entries()) dtypeBytes(where, `inputDtypes[${i}]`, dtype);
  }
  if (
    scalarIndex !== undefined &&
    !(withScalar && Number.isInteger(scalarIndex) && scalarIndex >= 0 && scalarIndex <= command.inputs.length)
  ) {
    throw invalid(
      where,
      `scalarIndex ${scalarIndex} must name an operand the op's scalar stands for (0 to ${command.inputs.length}).`,
    );
  }
}

export function mathFeed(id: string, where: string, command: MathCommand, engines: PeEngines): Feed {
  const info = mathInfo(where, command.op, command.inputs.length, command.scalars?.length ?? 0);
  dtypeBytes(where, "dtype", command.dtype);
  if (command.shape.length === 0) throw invalid(where, "shape must have at least one dimension.");
  for (const [i, size] of command.shape.entries()) positiveInt(where, `shape[${i}]`, size);
  for (const [i, address] of command.inputs.entries()) ownTcm(where, engines, address, `inputs[${i}]`);
  ownTcm(where, engines, command.out, "out");
  const rank = command.shape.length;
  const axis = MATH_SHAPES[info.shape].axis ? (command.axis ?? rank - 1) : null;
  if (axis !== null && (axis < -rank || axis >= rank))
    throw invalid(where, `axis ${axis} is out of range for rank ${rank}.`);
  const realAxis = axis === null ? null : axis < 0 ? axis + rank : axis;
  const withScalar = info.scalar && command.inputs.length === info.arity - 1;
  checkOperands(where, command, info.shape === "elementwise", withScalar);
  const other = command.scalars?.[0] ?? -1;
  if (info.shape === "swap" && !(Number.isInteger(other) && other >= 0 && other < rank))
    throw invalid(where, `${command.op}'s dim1 ${other} is out of range for rank ${rank}.`);
  // Elementwise: the output's elements (the operands broadcast to `shape`).
  const elements = command.shape.reduce((a, b) => a * b, 1);
  const outShape = mathOutputShape(info, command.shape, realAxis, command.scalars?.map(Number));
  const reduceLength = realAxis === null ? 0 : (command.shape[realAxis] as number);
  const op = mathOp(
    command.op,
    command.inputs,
    command.shape,
    command.out,
    outShape,
    command.dtype,
    realAxis,
    command.scalars,
    command.inputDtype,
    command,
  );
  if (command.inputDtype !== undefined) dtypeBytes(where, "inputDtype", command.inputDtype);
  const params: StageParams = { type: "math", op: command.op, elements, dtype: command.dtype, reduceLength };
  // Each operand fetched from TCM at its own shape and dtype (a broadcast one once), the result stored.
  let fetchBytes = 0;
  for (const [i] of command.inputs.entries()) {
    const shape = command.inputShapes?.[i] ?? command.shape;
    const dtype = command.inputDtypes?.[i] ?? command.inputDtype ?? command.dtype;
    fetchBytes += shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
  }
  const storeBytes = outShape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[command.dtype];
  const compute = stage("math", engines.math, params, [op]);
  return singleFeed(id, (index) => ({
    tileId: index,
    stages: fetchComputeStore(engines, fetchBytes, compute, storeBytes),
  }));
}
