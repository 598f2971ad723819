import type { KbError, KbErrorCode } from "@kb/errors";
import { broadcastShapes, MATH_OPS, MATH_SHAPES } from "@kb/spec";
import { DTYPES, type Dtype, formatShape, isDtype, isFloatDtype, shapeSize } from "@kb/tensor";
import { TensorHandle } from "./handles.js";
import type { DotOptions, Pointer } from "./options.js";

// Checks of a tl call's arguments. They throw errors located at the kernel instance (and the
// call's line) that the context builds, so they take it as an `ErrorSource`.

/** What checks need of the context: located errors (`TLContext._error`). */
export interface ErrorSource {
  _error(code: KbErrorCode, detail: string, cause?: unknown): KbError;
}

/** The device address `ptr` names (a number, or a device tensor's `address`). */
export function pointerAddress(tl: ErrorSource, ptr: Pointer, call: string): number {
  const address = typeof ptr === "number" ? ptr : ptr?.address;
  if (typeof address !== "number" || !Number.isInteger(address) || address < 0) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: expected a device address (a number, or a device tensor with .address), got ${String(ptr)}.`,
    );
  }
  return address;
}

/** A shape: a non-empty list of positive integers. */
export function checkShape(tl: ErrorSource, call: string, shape: readonly number[]): void {
  if (
    !Array.isArray(shape) ||
    shape.length === 0 ||
    shape.some((size) => !Number.isInteger(size) || size < 1)
  ) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: shape must be a non-empty list of positive integers, got ${JSON.stringify(shape)}.`,
    );
  }
}

/** One of the element types of @kb/tensor. */
export function checkDtype(tl: ErrorSource, call: string, dtype: Dtype): void {
  if (!isDtype(dtype)) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: unknown dtype ${JSON.stringify(dtype)}; use ${DTYPES.join(", ")}.`,
    );
  }
}

/** An IPCQ direction: a non-empty string (the topology names them). */
export function checkDirection(tl: ErrorSource, call: string, direction: string): void {
  if (typeof direction !== "string" || direction.length === 0) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: direction must be a non-empty string, got ${String(direction)}.`,
    );
  }
}

/** A grid axis of `programId` / `numPrograms`. */
export function checkAxis(tl: ErrorSource, axis: number, call: string): 0 | 1 | 2 {
  if (axis !== 0 && axis !== 1 && axis !== 2) {
    throw tl._error("TL_INVALID_CALL", `tl.${call}(${axis}): axis must be 0 (PE), 1 (cube) or 2 (SIP).`);
  }
  return axis;
}

/** Checks a handle belongs to this kernel instance (`tl`) and is still usable. */
export function checkOwned(tl: ErrorSource, call: string, handle: TensorHandle): void {
  if (!(handle instanceof TensorHandle)) {
    throw tl._error("TL_INVALID_CALL", `tl.${call}: expected a TensorHandle, got ${String(handle)}.`);
  }
  if (handle.tl !== tl) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: ${handle.describe()} belongs to another kernel instance.`,
    );
  }
  const consumed = handle._consumedText(`tl.${call}`);
  if (consumed !== null) throw tl._error("TL_INVALID_CALL", consumed);
  const loading = handle._inFlightLoad();
  if (loading !== null)
    throw tl._error("TL_INVALID_CALL", loading._usedTooEarly(`tl.${call}: ${handle.describe()}`));
}

/**
 * Checks an operand a command reads in TCM. Only a GEMM reads a transposed view (`tl.trans`) as
 * what it means; every other command would read its bytes in stored order, so it is refused
 * unless `transposedOk`.
 */
export function checkInTcm(tl: ErrorSource, call: string, handle: TensorHandle, transposedOk: boolean): void {
  if (handle.space !== "tcm") {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: ${handle.describe()} from tl.${handle.op} is not in TCM; tl.load it first.`,
    );
  }
  if (handle.transposed && !transposedOk) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: ${handle.describe()} is a transposed view (tl.trans): its bytes are stored in the other order and only tl.dot and tl.composite("gemm") read them transposed. Load the data in the layout you need (tl.load of the transposed matrix), or keep the transpose for the GEMM.`,
    );
  }
}

/** Checks `tl.view(x, start, shape)`: a plain TCM tensor of this kernel, and elements within it. */
export function checkView(tl: ErrorSource, x: TensorHandle, start: number, shape: readonly number[]): void {
  checkOwned(tl, "view", x);
  checkShape(tl, "view", shape);
  if (x.space !== "tcm" || x.transposed || x.rowStride !== x.shape[x.shape.length - 1]) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.view: ${x.describe()} from tl.${x.op} must be a plain TCM tensor (not a ref, a transposed or a strided view).`,
    );
  }
  const size = shapeSize(shape);
  if (!Number.isInteger(start) || start < 0 || start + size > x.size) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.view: elements [${start}, ${start + size}) are not within ${x.describe()} (${x.size} elements).`,
    );
  }
}

/** Checks the `out` of a load or math op: this kernel's plain TCM tensor of the result's shape and dtype. */
export function checkOut(
  tl: ErrorSource,
  op: string,
  out: TensorHandle,
  shape: readonly number[],
  dtype: Dtype,
): void {
  checkOwned(tl, op, out);
  if (out.space !== "tcm" || out.transposed || out.rowStride !== out.shape[out.shape.length - 1]) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${op}: out ${out.describe()} from tl.${out.op} must be a plain TCM tensor (not a ref, a transposed or a strided view).`,
    );
  }
  if (formatShape(out.shape) !== formatShape(shape) || out.dtype !== dtype) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${op}: out ${out.describe()} does not match the result (${dtype} ${formatShape(shape)}).`,
    );
  }
}

/** Checks the operands and accumulator of `tl.dot(a, b, options)`; returns the output dtype. */
export function checkDot(
  tl: ErrorSource,
  a: TensorHandle,
  b: TensorHandle,
  options: DotOptions,
  mixedFormats = false,
): Dtype {
  checkOwned(tl, "dot", a);
  checkOwned(tl, "dot", b);
  if (a.shape.length !== 2 || b.shape.length !== 2) {
    throw tl._error("TL_INVALID_CALL", `tl.dot needs 2-D operands, got ${a.describe()} and ${b.describe()}.`);
  }
  const [m, k] = a.shape as [number, number];
  const [k2, n] = b.shape as [number, number];
  if (k !== k2) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dot: inner dimensions differ: ${formatShape(a.shape)} x ${formatShape(b.shape)} (${k} != ${k2}).`,
    );
  }
  if (a.dtype !== b.dtype && !mixedFormats) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dot: operand dtypes differ: ${a.dtype} and ${b.dtype}; cast one first.`,
    );
  }
  if (!isFloatDtype(a.dtype) && a.dtype !== "i8") {
    const what =
      a.dtype === "i1" ? "booleans" : a.dtype === "u32" ? "unsigned words" : "integers of that width";
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dot: PE_GEMM has no ${a.dtype} operands (${what}); cast them to i8 (or a float dtype) first.`,
    );
  }
  const acc = options.acc;
  const defaultOut: Dtype = isFloatDtype(a.dtype) ? "f32" : "i32";
  const outDtype = options.outDtype ?? acc?.dtype ?? defaultOut;
  checkDtype(tl, "dot", outDtype);
  if (!isFloatDtype(outDtype) && outDtype !== "i8" && outDtype !== "i32") {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dot: PE_GEMM writes f32, f16, bf16, i8 or i32 results, not ${outDtype}; take an i32 result and cast it afterwards.`,
    );
  }
  if (acc === undefined) return outDtype;
  checkOwned(tl, "dot", acc);
  if (!isFloatDtype(a.dtype) && acc.dtype !== "i32") {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dot: ${a.dtype} operands accumulate in i32, but the accumulator ${acc.describe()} is ${acc.dtype}. Accumulate in an i32 tensor (tl.zeros(shape, "i32")) and cast the result afterwards.`,
    );
  }
  if (acc.shape.length !== 2 || acc.shape[0] !== m || acc.shape[1] !== n) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dot: accumulator ${acc.describe()} does not match the result shape ${formatShape([m, n])}.`,
    );
  }
  if (acc.dtype !== outDtype) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dot: accumulator is ${acc.dtype} but the output dtype is ${outDtype}.`,
    );
  }
  if (acc.space !== "tcm" || acc.transposed) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dot: the accumulator ${acc.describe()} must be a plain TCM tensor.`,
    );
  }
  return outDtype;
}

/**
 * Checks the inputs of the math op `op` and returns the shape the op works on: this kernel's
 * handles of one dtype (`tl.where`'s i1 cond checked before, with its own message) the op accepts,
 * whose shapes broadcast (numpy's rules) for an elementwise op (their broadcast shape) or are the
 * one input's.
 */
export function checkMathInputs(tl: ErrorSource, op: string, inputs: readonly TensorHandle[]): number[] {
  for (const input of inputs) checkOwned(tl, op, input);
  const info = MATH_OPS[op];
  const values = op === "where" ? inputs.slice(1) : inputs;
  const first = values[0] as TensorHandle;
  if (values.some((input) => input.dtype !== first.dtype)) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${op}: operand dtypes differ: ${inputs.map((h) => h.dtype).join(", ")}; cast first.`,
    );
  }
  const accepted = info?.inputDtypes ?? null;
  if (accepted !== null && !accepted.includes(first.dtype)) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${op}: takes ${accepted.join(", ")} operands, got ${first.dtype}; compare to make a mask (tl.ne(x, 0)) or cast.`,
    );
  }
  const shape = broadcastShapes(inputs.map((input) => input.shape));
  if (shape === null) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${op}: operand shapes ${inputs.map((h) => formatShape(h.shape)).join(" and ")} do not broadcast (numpy's rules: sizes aligned at the last dimension must be equal or 1); tl.reshape or tl.expandDims one of them.`,
    );
  }
  return shape;
}

/**
 * The axis a row or reduce math op works along (`axis` may count from the end; default the
 * last), or undefined for an elementwise op.
 */
export function mathAxis(
  tl: ErrorSource,
  op: string,
  shape: readonly number[],
  axis: number | undefined,
): number | undefined {
  const info = MATH_OPS[op];
  if (info === undefined || !MATH_SHAPES[info.shape].axis) return undefined;
  const rank = shape.length;
  const a = axis ?? -1;
  if (!Number.isInteger(a) || a < -rank || a >= rank) {
    throw tl._error("TL_INVALID_CALL", `tl.${op}: axis ${a} is out of range for ${formatShape(shape)}.`);
  }
  return a < 0 ? a + rank : a;
}
