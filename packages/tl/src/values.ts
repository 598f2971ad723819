import type { MathScalar } from "@kb/spec";
import { computeMath, DTYPE_BYTES, type Dtype, isFloatDtype, Tensor } from "@kb/tensor";
import { type MemoryScope, readMemory, writeMemory } from "./device-access.js";
import type { TensorHandle } from "./handles.js";
import { pendingIn } from "./kernel-memory.js";

// What phase 1 knows of a handle's values (its `data`), and the transposes of them.
//
// Known math results: a math op whose operands all derive from constants (`tl.arange`,
// `tl.full`, `tl.zeros`, and math results of those, through views) is computed in phase 1 too,
// by the op table's evaluation and phase 2's rounding (`evaluateMath`, `Tensor.fromArray`), so an
// index vector or a mask built from `tl.arange` and program ids has values a kernel (and a masked
// load) can use. The PE_MATH command is issued and timed all the same. Results of loaded data stay
// pending: phase 1 does not redo a kernel's data work.

/** Math results phase 1 computed (and views and reshapes of them). */
const knownResults = new WeakSet<TensorHandle>();

// Index arithmetic: an integer math op (integer operands, integer result) whose operands phase 1
// holds (constants, loaded integer tiles, earlier index results) is computed in phase 1 too, so
// offsets built from loaded ids (`ids * stride + cols`, `ids % M`) are known when a gather or
// scatter needs them. These results are not constants: masks of plain loads still refuse them.
const indexResults = new WeakSet<TensorHandle>();

/** True for an op phase 1 evaluates as index arithmetic: integer operands and result. */
function indexArithmetic(inputs: readonly TensorHandle[], dtype: Dtype): boolean {
  return !isFloatDtype(dtype) && inputs.every((input) => !isFloatDtype(input.dtype));
}

/**
 * The values of `handle` when phase 1 knows them for addressing (a gather's offsets or mask): a
 * constant's, a known math result's, or an integer tile's whose bytes phase 1 holds (a loaded
 * tile of bytes no compute result wrote, an index arithmetic result); null otherwise.
 */
export function indexValuesOf(tl: MemoryScope, handle: TensorHandle): Tensor | null {
  if (fromConstants(handle)) return valuesOf(tl, handle);
  return isFloatDtype(handle.dtype) ? null : valuesOf(tl, handle);
}

/** True when `handle` derives from constants only: a constant, a known math result, or a view of one. */
function fromConstants(handle: TensorHandle): boolean {
  const root = handle._root ?? handle;
  return root.origin === "constant" || knownResults.has(handle) || knownResults.has(root);
}

/** Marks `derived` (a view, reshape or transpose of `source`) known when `source` is a known result. */
export function deriveKnown(source: TensorHandle, derived: TensorHandle): void {
  for (const results of [knownResults, indexResults])
    if (results.has(source) || (source._root !== null && results.has(source._root))) results.add(derived);
}

/**
 * The result of the math op `op` when phase 1 knows every operand from constants (see above),
 * evaluated as phase 2 does; null otherwise (the result is pending).
 */
export function knownMathResult(
  tl: MemoryScope,
  op: string,
  inputs: readonly TensorHandle[],
  shapeOut: readonly number[],
  dtype: Dtype,
  axis: number | null,
  scalars: readonly MathScalar[],
  scalarIndex: number | undefined,
): Tensor | null {
  const operands = [];
  const index = indexArithmetic(inputs, dtype);
  for (const input of inputs) {
    const values = index ? indexValuesOf(tl, input) : constantValuesOf(tl, input);
    if (values === null) return null;
    operands.push(values);
  }
  return computeMath(op, operands, shapeOut, dtype, axis, scalars, scalarIndex);
}

/**
 * The values of `handle` when it derives from constants only (see above), so that both phases
 * and command-list mode know them; null otherwise (a loaded tile, a result of loaded data).
 */
export function constantValuesOf(tl: MemoryScope, handle: TensorHandle): Tensor | null {
  return fromConstants(handle) ? valuesOf(tl, handle) : null;
}

/**
 * Records that `out` holds `values`, computed in phase 1 from `inputs`: its TCM bytes in runner
 * mode, its data. It is a constant-derived result when every input is, else an index result.
 */
export function noteKnownResult(
  tl: MemoryScope,
  out: TensorHandle,
  values: Tensor,
  inputs: readonly TensorHandle[],
): void {
  if (inputs.every(fromConstants)) knownResults.add(out);
  else indexResults.add(out);
  out._data = values;
  const memory = tl.memory;
  if (memory !== null)
    writeMemory(tl, memory, out.address, values.bytes, `tl.${out.op} in TCM (known in phase 1)`);
}

/**
 * The values of `handle` as phase 1 knows them now, or null when it does not: a constant's before
 * it is written to TCM, else (runner mode) the bytes at its TCM address unless a compute result
 * wrote them (pending). Views read their bytes as they are now, so a write through another view
 * of the same tensor is seen. Without a memory (command-list mode), only constants and known math
 * results have values.
 */
export function valuesOf(tl: MemoryScope, handle: TensorHandle): Tensor | null {
  if (handle.space !== "tcm") return null;
  const root = handle._root ?? handle;
  if (root.origin === "constant" && !root._materialised && !handle._materialised) return handle._data;
  const memory = tl.memory;
  if (memory === null || (memory.isPending === undefined && handle.origin === "compute"))
    return handle.origin === "constant" || knownResults.has(handle) || indexResults.has(handle)
      ? handle._data
      : null;
  if (pendingIn(memory, handle.address, handle.nbytes)) return null;
  const bytes = readMemory(tl, memory, handle.address, handle.nbytes, `${handle.describe()}.data`);
  if (!handle.transposed) return new Tensor(handle.shape, handle.dtype, bytes);
  return transpose(new Tensor(swapLast(handle.shape), handle.dtype, bytes));
}

/** True when the handle's known values are all zeros (a `tl.zeros` never written over). */
export function isZeros(handle: TensorHandle): boolean {
  const data = handle._data;
  if (data === null) return false;
  for (let i = 0; i < data.size; i++) if (data.getFlat(i) !== 0) return false;
  return true;
}

/** `shape` with its last two dimensions swapped. */
export function swapLast(shape: readonly number[]): number[] {
  const swapped = [...shape];
  const last = swapped.length - 1;
  [swapped[last - 1], swapped[last]] = [swapped[last] as number, swapped[last - 1] as number];
  return swapped;
}

/** `tensor` with its last two dimensions swapped, bytes moved (a batch of matrix transposes). */
export function transpose(tensor: Tensor): Tensor {
  const shape = [...tensor.shape];
  const rank = shape.length;
  const rows = shape[rank - 2] as number;
  const cols = shape[rank - 1] as number;
  const batch = tensor.size / (rows * cols);
  const out = Tensor.zeros([...shape.slice(0, rank - 2), cols, rows], tensor.dtype);
  const size = DTYPE_BYTES[tensor.dtype];
  for (let b = 0; b < batch; b++) {
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const from = (b * rows * cols + r * cols + c) * size;
        const to = (b * rows * cols + c * rows + r) * size;
        out.bytes.set(tensor.bytes.subarray(from, from + size), to);
      }
    }
  }
  return out;
}
