// Views of packages/tl/README.md ("Memory, constants and views") as host operations that build
// the tensor a view means: no rounding, values only move.

import { invalid } from "./dtype.js";
import { checkShape, formatShape, fromRounded, type RefTensor, sizeOf } from "./tensor.js";

/**
 * `tl.trans(x)`: the transpose over the last two dims, `out[..., i, j] = x[..., j, i]` (what a GEMM
 * operand made with `tl.trans` means). Needs rank >= 2.
 */
export function transpose(x: RefTensor): RefTensor {
  const rank = x.shape.length;
  if (rank < 2) throw invalid("transpose", `needs at least 2 dimensions, got ${formatShape(x.shape)}.`);
  const rows = x.shape[rank - 2] as number;
  const cols = x.shape[rank - 1] as number;
  const batch = x.data.length / (rows * cols);
  const out = new Float64Array(x.data.length);
  for (let b = 0; b < batch; b++) {
    const base = b * rows * cols;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) out[base + c * rows + r] = x.data[base + r * cols + c] as number;
    }
  }
  const shape = [...x.shape.slice(0, rank - 2), cols, rows];
  return fromRounded(out, shape, x.dtype);
}

/**
 * `tl.view(x, start, shape)`: elements `[start, start + size(shape))` of `x` in row-major order,
 * laid out as `shape`.
 */
export function view(x: RefTensor, start: number, shape: readonly number[]): RefTensor {
  checkShape("view", shape);
  const size = sizeOf(shape);
  if (!Number.isInteger(start) || start < 0 || start + size > x.data.length) {
    throw invalid(
      "view",
      `elements [${start}, ${start + size}) are not within ${formatShape(x.shape)} (${x.data.length} elements).`,
    );
  }
  return fromRounded(x.data.slice(start, start + size), shape, x.dtype);
}

/**
 * The `rows x cols` block of the row-major 2-D `x` whose first element is `x[row, col]`: what
 * `tl.load(ptr of x[row, col], [rows, cols], dtype, { stride: x.shape[1] })` reads.
 */
export function block(x: RefTensor, row: number, col: number, rows: number, cols: number): RefTensor {
  if (x.shape.length !== 2) throw invalid("block", `needs a 2-D tensor, got ${formatShape(x.shape)}.`);
  const [height, width] = x.shape as [number, number];
  checkShape("block", [rows, cols]);
  if (
    !Number.isInteger(row) ||
    !Number.isInteger(col) ||
    row < 0 ||
    col < 0 ||
    row + rows > height ||
    col + cols > width
  ) {
    throw invalid(
      "block",
      `rows [${row}, ${row + rows}) x columns [${col}, ${col + cols}) are not within ${formatShape(x.shape)}.`,
    );
  }
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out[r * cols + c] = x.data[(row + r) * width + col + c] as number;
  }
  return fromRounded(out, [rows, cols], x.dtype);
}
