import { DTYPE_BYTES, Tensor } from "@kb/tensor";
import { type MemoryScope, readMemory } from "./device-access.js";
import type { TensorHandle } from "./handles.js";
import { pendingIn } from "./kernel-memory.js";

// What phase 1 knows of a handle's values (its `data`), and the transposes of them.

/**
 * The values of `handle` as phase 1 knows them now, or null when it does not: a constant's before
 * it is written to TCM, else (runner mode) the bytes at its TCM address unless a compute result
 * wrote them (pending). Views read their bytes as they are now, so a write through another view
 * of the same tensor is seen.
 */
export function valuesOf(tl: MemoryScope, handle: TensorHandle): Tensor | null {
  if (handle.space !== "tcm") return null;
  const root = handle._root ?? handle;
  if (root.origin === "constant" && !root._materialised && !handle._materialised) return handle._data;
  const memory = tl.memory;
  if (memory === null) return handle.origin === "constant" ? handle._data : null;
  if (memory.isPending === undefined && handle.origin === "compute") return null;
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
