import * as ref from "./reference/index.js";

// Offsets and masks of the evaluator's gathers, scatters and atomics (evaluate.ts,
// round3-evaluate.ts), as the kernels compute them.

/** i32 offsets `rowIds[r] * cols + columns[j]`, `[rowIds.length, columns.length]`. */
export function rowOffsets(
  rowIds: ArrayLike<number>,
  cols: number,
  columns: ArrayLike<number>,
): ref.RefTensor {
  const offsets = new Float64Array(rowIds.length * columns.length);
  for (let r = 0; r < rowIds.length; r++)
    for (let j = 0; j < columns.length; j++)
      offsets[r * columns.length + j] = (rowIds[r] as number) * cols + (columns[j] as number);
  return ref.tensor(offsets, [rowIds.length, columns.length], "i32");
}

/** i32 offsets `(row0 + r) * cols + columns[j]` of the block's rows, `[rows, columns.length]`. */
export function blockOffsets(
  row0: number,
  rows: number,
  cols: number,
  columns: ArrayLike<number>,
): ref.RefTensor {
  return rowOffsets(
    Array.from({ length: rows }, (_, r) => row0 + r),
    cols,
    columns,
  );
}

/** The mask `j < on` of a `[rows, cols]` tile (1 on, 0 off). */
export function columnMask(rows: number, cols: number, on: number): ref.RefTensor {
  const mask = Array.from({ length: rows * cols }, (_, e) => (e % cols < on ? 1 : 0));
  return ref.tensor(mask, [rows, cols], "i32");
}
