import {
  type CompositeGemmCommand,
  type CompositeMathCommand,
  type EpilogueOp,
  MATH_OPS,
  type MathOpInfo,
  mathOutputShape,
  PUBLIC_MATH_OPS,
} from "@kb/spec";
import { DTYPE_BYTES, type Dtype, formatShape } from "@kb/tensor";
import { checkAccess, hex, type MemoryScope, mistypedTensorAt, type TypedTensor } from "./device-access.js";
import type { TensorHandle } from "./handles.js";
import type { CompositeOptions, EpilogueSpec } from "./options.js";
import type { ErrorSource } from "./validate.js";

// The commands of `tl.composite` (ADR-0046 D3.3): a tiled GEMM or math pipeline that streams its
// operands from device memory, with the checks the PE scheduler would otherwise fail later.

/** Elementwise ops an epilogue may name (those it cannot apply are refused with a reason). */
const EPILOGUE_OPS: ReadonlySet<string> = new Set(
  PUBLIC_MATH_OPS.filter((name) => MATH_OPS[name]?.shape === "elementwise"),
);

/** A composite's command and the bytes it writes at its output (pending in phase 1: it computes). */
export interface CompositeBuild {
  readonly command: CompositeGemmCommand | CompositeMathCommand;
  readonly outBytes: number;
}

/**
 * The command of `tl.composite(op, a, b, options)` writing to the device address `out`; `a` and
 * `b` are this kernel's handles (checked by the caller). Throws `TL_INVALID_CALL` for operands the
 * op cannot stream or whose element type differs from the tensor at their address.
 */
export function compositeCommand(
  tl: MemoryScope,
  op: "gemm" | "math",
  a: TensorHandle,
  b: TensorHandle | null | undefined,
  out: number,
  options: CompositeOptions,
): CompositeBuild {
  if (op === "gemm") return gemmCommand(tl, a, b, out, options);
  if (op === "math") return mathCommand(tl, a, b, out, options);
  throw tl._error("TL_INVALID_CALL", `tl.composite: unknown op ${JSON.stringify(op)}; use "gemm" or "math".`);
}

function gemmCommand(
  tl: MemoryScope,
  a: TensorHandle,
  b: TensorHandle | null | undefined,
  out: number,
  options: CompositeOptions,
): CompositeBuild {
  if (b === null || b === undefined) throw tl._error("TL_INVALID_CALL", 'tl.composite("gemm") needs b.');
  const epilogue = epilogueOps(tl, options.epilogue ?? []);
  if (a.shape.length !== 2 || b.shape.length !== 2 || a.shape[1] !== b.shape[0]) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.composite("gemm"): needs (M, K) x (K, N), got ${formatShape(a.shape)} x ${formatShape(b.shape)}.`,
    );
  }
  if (a.dtype !== b.dtype) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.composite("gemm"): operand dtypes differ: a is ${a.dtype}, b is ${b.dtype}; both operands of a GEMM share one element type (cast one on the host, or tl.ref it with its own dtype).`,
    );
  }
  const [m, k] = a.shape as [number, number];
  const n = b.shape[1] as number;
  const tile = options.tileShape;
  const aAddress = streamed(tl, a, true);
  const bAddress = streamed(tl, b, true);
  checkStreamed(tl, "operand a", aAddress, m * k, a.dtype, refFix);
  checkStreamed(tl, "operand b", bAddress, k * n, b.dtype, refFix);
  const outDtype = options.outDtype ?? a.dtype;
  checkStreamed(
    tl,
    "output",
    out,
    m * n,
    outDtype,
    (t) =>
      `Pass outDtype: "${t.dtype}" (the output is rounded to it once), or allocate the output as ${outDtype}.`,
  );
  const command: CompositeGemmCommand = {
    kind: "composite_gemm",
    a: aAddress,
    b: bAddress,
    c: out,
    m,
    n,
    k,
    dtype: a.dtype,
    ...(options.accDtype !== undefined ? { dtypeAcc: options.accDtype } : {}),
    ...(options.outDtype !== undefined ? { dtypeOut: options.outDtype } : {}),
    ...(tile !== undefined ? { tile: { m: tile[0], n: tile[1], k: tile[2] } } : {}),
    ...(epilogue.length > 0 ? { epilogue } : {}),
    ...(a.transposed ? { transposeA: true } : {}),
    ...(b.transposed ? { transposeB: true } : {}),
    async: true,
  };
  return { command, outBytes: m * n * DTYPE_BYTES[outDtype] };
}

function mathCommand(
  tl: MemoryScope,
  a: TensorHandle,
  b: TensorHandle | null | undefined,
  out: number,
  options: CompositeOptions,
): CompositeBuild {
  const mathOp = options.mathOp;
  const info = mathOp === undefined ? undefined : MATH_OPS[mathOp];
  if (mathOp === undefined || info === undefined || info.internal) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.composite("math") needs mathOp, one of ${PUBLIC_MATH_OPS.join(", ")}; got ${JSON.stringify(mathOp)}.`,
    );
  }
  const inputs = b === null || b === undefined ? [a] : [a, b];
  checkMathOperands(tl, mathOp, info, inputs.length, options.scalars ?? []);
  for (const input of inputs) {
    if (formatShape(input.shape) !== formatShape(a.shape) || input.dtype !== a.dtype) {
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.composite("math"): inputs must match, got ${inputs.map((h) => h.describe()).join(" and ")}.`,
      );
    }
  }
  const cols = a.shape[a.shape.length - 1] as number;
  const rows = a.size / cols;
  const addresses = inputs.map((input) => streamed(tl, input, false));
  addresses.forEach((address, i) => {
    checkStreamed(tl, `input ${i}`, address, a.size, a.dtype, refFix);
  });
  const outCols = mathOutputShape(info, [rows, cols], 1)[1] as number;
  checkStreamed(
    tl,
    "output",
    out,
    rows * outCols,
    a.dtype,
    (t) =>
      `A composite math op writes its inputs' dtype (${a.dtype}); allocate the output as ${a.dtype}, or cast the inputs on the host to ${t.dtype}.`,
  );
  const command: CompositeMathCommand = {
    kind: "composite_math",
    op: mathOp,
    inputs: addresses,
    out,
    rows,
    cols,
    dtype: a.dtype,
    ...(options.scalars !== undefined ? { scalars: [...options.scalars] } : {}),
    ...(options.tileRows !== undefined ? { tileRows: options.tileRows } : {}),
    async: true,
  };
  return { command, outBytes: rows * outCols * DTYPE_BYTES[a.dtype] };
}

/**
 * The HBM address a composite can stream `handle` from: a ref, or the source of a load that read
 * contiguous rows. Composite GEMMs read a transposed operand as such (`transposeA/B`); other
 * composites refuse one (`transposedOk` false).
 */
function streamed(tl: ErrorSource, handle: TensorHandle, transposedOk: boolean): number {
  if (handle.transposed && !transposedOk) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.composite: ${handle.describe()} is a transposed view (tl.trans); only a composite GEMM streams a transposed operand.`,
    );
  }
  if (handle.space === "hbm") return handle.address;
  if (handle.source !== null && handle.sourceStride !== null) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.composite: ${handle.describe()} was loaded with stride ${handle.sourceStride} from 0x${handle.source.toString(16)}; composite ops stream contiguous matrices from device memory, so they cannot read it again there. Pass a tl.ref of a contiguous matrix, or use tl.dot on the loaded tiles.`,
    );
  }
  if (handle.source !== null && handle.rowStride === handle.shape[handle.shape.length - 1])
    return handle.source;
  throw tl._error(
    "TL_INVALID_CALL",
    `tl.composite: ${handle.describe()} from tl.${handle.op} is not in device memory; composite ops stream their operands from HBM (use tl.ref).`,
  );
}

/** What to do about an operand of another element type than the tensor it streams from. */
function refFix(tensor: TypedTensor): string {
  return `Reference it with its own dtype: tl.ref(ptr, shape, "${tensor.dtype}").`;
}

/** Checks a contiguous operand or output of a composite: inside an allocation, of its element type. */
function checkStreamed(
  tl: MemoryScope,
  role: string,
  address: number,
  elements: number,
  dtype: Dtype,
  fix: (tensor: TypedTensor) => string,
): void {
  const memory = tl.memory;
  if (memory === null) return;
  checkAccess(tl, memory, address, elements * DTYPE_BYTES[dtype], `tl.composite ${role} at ${hex(address)}`);
  const t = mistypedTensorAt(memory, address, dtype);
  if (t !== null) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.composite ${role} is ${dtype} but ${t} holds ${t.dtype}: its bytes would be reinterpreted. ${fix(t)}`,
    );
  }
}

function epilogueOps(tl: ErrorSource, steps: readonly EpilogueSpec[]): EpilogueOp[] {
  return steps.map((step, i) => {
    const op = step?.op;
    if (typeof op !== "string" || !EPILOGUE_OPS.has(op)) {
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.composite epilogue[${i}]: unknown op ${JSON.stringify(op)}; elementwise ops: ${[...EPILOGUE_OPS].join(", ")}.`,
      );
    }
    // A step applies to the accumulator alone, or with `scalar` as its second operand.
    const info = MATH_OPS[op] as MathOpInfo;
    if (info.arity === 2 && !(info.scalar && typeof step.scalar === "number")) {
      throw tl._error("TL_INVALID_CALL", `tl.composite epilogue[${i}] (${op}): a binary op needs "scalar".`);
    }
    if (info.arity > 2 || info.params.length > 0) {
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.composite epilogue[${i}] (${op}): not available as an epilogue step.`,
      );
    }
    if (step.scope !== undefined && step.scope !== "k_tile" && step.scope !== "output_tile") {
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.composite epilogue[${i}] (${op}): scope must be "k_tile" or "output_tile", got ${JSON.stringify(step.scope)}.`,
      );
    }
    return {
      op,
      ...(step.scope !== undefined ? { scope: step.scope } : {}),
      ...(step.scalar !== undefined ? { scalar: step.scalar } : {}),
    };
  });
}

/** A composite math op gets the tensors and scalars it needs (the scheduler would refuse it later). */
function checkMathOperands(
  tl: ErrorSource,
  op: string,
  info: MathOpInfo,
  tensors: number,
  scalars: readonly number[],
): void {
  const fail = (why: string) => {
    throw tl._error("TL_INVALID_CALL", `tl.composite("math", { mathOp: "${op}" }): ${why}`);
  };
  const { arity, params } = info;
  if (scalars.some((value) => typeof value !== "number")) fail("scalars must be numbers.");
  if (arity > 2) fail("takes three tensors and cannot run as a composite; use tl.load and the tl call.");
  if (params.length > 0 && (tensors !== arity || scalars.length !== params.length)) {
    fail(
      `needs one input and scalars [${params.join(", ")}], got ${tensors} input(s) and ${scalars.length} scalar(s).`,
    );
  }
  if (arity === 2 && !(tensors === 2 || (info.scalar && tensors === 1 && scalars.length >= 1))) {
    fail(`needs b or a scalar (scalars: [value]), got ${tensors} input(s) and ${scalars.length} scalar(s).`);
  }
  if (arity === 1 && tensors !== 1) fail(`takes one input, got ${tensors}.`);
}
