/**
 * The host references' matrix product: a cache-blocked, register-blocked f64 kernel,
 * `C[rows] += A[rows] @ B`, shared by `matmul` and `attention` of `reference.ts`. The blocking and
 * packing are here in TypeScript; the innermost loops are 128-bit WebAssembly SIMD on pairs of f64
 * (`blocked-matmul-wasm.ts`, assembled there without a toolchain).
 *
 * Numerics: every element of C is `c + a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + ...` in f64, the
 * products taken in index order p = 0, 1, ..., K-1, each product and each sum rounded to f64 (no
 * fused multiply-add, like JS's `c += a * b`). The blocking only changes which elements are
 * computed when, never the order of an element's sum: the result is bit for bit the naive
 * `i-p-j` triple loop's (benches/test/blocked-matmul.test.ts checks it).
 *
 * Blocking (GotoBLAS's loop order, sized for a 32 KiB L1 and a 1 MiB L2): B is packed once into
 * panels of {@link NR} columns, `[K][NR]` each, so that the 4 values of row p of a panel are
 * adjacent; rows of A go {@link ROW_BLOCK} at a time and K {@link DEPTH_BLOCK} at a time, the
 * `ROW_BLOCK x DEPTH_BLOCK` block of A packed into strips of {@link MR} rows (`[DEPTH_BLOCK][MR]`,
 * 256 KiB: it stays in L2) while one panel's `DEPTH_BLOCK x NR` slice (8 KiB: L1) meets every
 * strip; the `MR x NR` micro-kernel keeps its 16 sums in 8 `f64x2` locals. Rows and columns past
 * the edge of A or B are packed as zeros, and their sums are never copied out. A block of C's
 * rows is copied into the kernel's memory before its K loop and back after it.
 *
 * Independent of the phase-2 executor (`@kb/data-executor`'s GEMMs): nothing of its code, another
 * precision (f64 sums, not f32), another tile (4 x 4 f64, not 2 x 16 f32) and another order of
 * the sums (K in order).
 */
import { instantiateKernel, type KernelInstance } from "./blocked-matmul-wasm.js";

/** Rows of the micro-kernel's tile of C. */
const MR = 4;
/** Columns of the micro-kernel's tile of C (and of a packed panel of B). */
const NR = 4;
/** Rows of A per outer block: the unit of progress; the packed A block is `ROW_BLOCK x DEPTH_BLOCK`. */
export const ROW_BLOCK = 128;
/** Depth (K) per block: a panel slice of B is `DEPTH_BLOCK x NR` f64, 8 KiB. */
const DEPTH_BLOCK = 256;
const F64 = 8;
const PAGE = 65536;
/** WebAssembly's 32-bit memories end at 4 GiB (65536 pages). */
const MAX_PAGES = 65536;

/** A 2-D f64 matrix in a buffer: element `[i, j]` is `data[offset + i * rowStride + j * colStride]`. */
export interface MatrixView {
  readonly data: Float64Array;
  readonly offset: number;
  readonly rowStride: number;
  readonly colStride: number;
}

/**
 * B `[K, N]` packed by {@link packColumns} into a WebAssembly memory of its own, with room for
 * one block of A and one of C: panels of {@link NR} columns, `[K][NR]` f64 each (zeros past N),
 * from byte 0; then the A block (strips of MR rows, `[kc][MR]` each); then the C block
 * (`ROW_BLOCK` rows of `panels * NR` f64).
 */
export interface PackedColumns {
  readonly depth: number;
  readonly columns: number;
  readonly panels: number;
  readonly memory: Float64Array;
  readonly kernel: KernelInstance;
  /** Byte addresses of the A and C blocks. */
  readonly aAt: number;
  readonly cAt: number;
}

/**
 * Packs `b` (`depth` rows, `columns` columns) for {@link multiplyRows}, into a new memory of
 * `(depth + ROW_BLOCK) * columns` f64 and a bit (freed with the result). Throws a RangeError when
 * that is past WebAssembly's 4 GiB.
 */
export function packColumns(b: MatrixView, depth: number, columns: number): PackedColumns {
  const panels = Math.ceil(columns / NR);
  const aAt = panels * depth * NR * F64;
  const cAt = aAt + ROW_BLOCK * DEPTH_BLOCK * F64;
  const bytes = cAt + ROW_BLOCK * panels * NR * F64;
  const pages = Math.max(1, Math.ceil(bytes / PAGE));
  if (pages > MAX_PAGES) {
    throw new RangeError(
      `matmul reference: B [${depth}, ${columns}] packed with a block of C takes ${bytes} bytes, more than the 4 GiB of a WebAssembly memory. Use smaller shapes.`,
    );
  }
  const wasmMemory = new WebAssembly.Memory({ initial: pages });
  const memory = new Float64Array(wasmMemory.buffer);
  const { data, offset, rowStride, colStride } = b;
  for (let panel = 0; panel < panels; panel++) {
    const j0 = panel * NR;
    const width = Math.min(NR, columns - j0);
    let to = panel * depth * NR;
    for (let p = 0; p < depth; p++) {
      const from = offset + p * rowStride + j0 * colStride;
      for (let jj = 0; jj < width; jj++) memory[to + jj] = data[from + jj * colStride]!;
      to += NR;
    }
  }
  return { depth, columns, panels, memory, kernel: instantiateKernel(wasmMemory), aAt, cAt };
}

/**
 * `C[i, :] += A[i, :] @ B` for the rows `i` in `[rowStart, rowEnd)` of `a` (`K = b.depth`
 * columns) and `c` (`b.columns` columns); other rows of C are not touched. Calls
 * `onProgress(fraction)` after each block of rows and K (every `ROW_BLOCK * DEPTH_BLOCK * N`
 * multiply-adds) with the fraction of this call's work done, nondecreasing; 1 after the last
 * unless there was no work (no rows, or K = 0).
 */
export function multiplyRows(
  a: MatrixView,
  rowStart: number,
  rowEnd: number,
  b: PackedColumns,
  c: MatrixView,
  onProgress?: (fraction: number) => void,
): void {
  const { depth, columns, panels, memory, kernel, aAt, cAt } = b;
  const cRow = panels * NR; // f64 per row of the C block
  for (let i0 = rowStart; i0 < rowEnd; i0 += ROW_BLOCK) {
    const rows = Math.min(ROW_BLOCK, rowEnd - i0);
    const strips = Math.ceil(rows / MR);
    copyRows(c, i0, rows, columns, memory, cAt / F64, cRow, true);
    for (let p0 = 0; p0 < depth; p0 += DEPTH_BLOCK) {
      const kc = Math.min(DEPTH_BLOCK, depth - p0);
      packRows(a, i0, rows, p0, kc, memory, aAt / F64);
      kernel.block(aAt, p0 * NR * F64, cAt, strips, panels, kc, depth * NR * F64, cRow * F64);
      if (onProgress !== undefined) {
        const done = i0 + rows === rowEnd && p0 + kc === depth;
        onProgress(done ? 1 : (i0 - rowStart + (rows * (p0 + kc)) / depth) / (rowEnd - rowStart));
      }
    }
    copyRows(c, i0, rows, columns, memory, cAt / F64, cRow, false);
  }
}

/**
 * Packs rows `[i0, i0 + rows)`, columns `[p0, p0 + kc)` of `a` into strips of MR rows, `[kc][MR]`
 * each, at `out[at]` (rows past the last are zeros).
 */
function packRows(
  a: MatrixView,
  i0: number,
  rows: number,
  p0: number,
  kc: number,
  out: Float64Array,
  at: number,
): void {
  const { data, offset, rowStride, colStride } = a;
  const strips = Math.ceil(rows / MR);
  for (let strip = 0; strip < strips; strip++) {
    const height = Math.min(MR, rows - strip * MR);
    const base = at + strip * kc * MR;
    if (height < MR) out.fill(0, base, base + kc * MR);
    for (let ii = 0; ii < height; ii++) {
      let from = offset + (i0 + strip * MR + ii) * rowStride + p0 * colStride;
      let to = base + ii;
      for (let p = 0; p < kc; p++) {
        out[to] = data[from]!;
        from += colStride;
        to += MR;
      }
    }
  }
}

/**
 * Copies rows `[i0, i0 + rows)` of `c` (`columns` wide) into the C block at `block[at]` (rows
 * `blockRow` f64 apart), or back when `inward` is false.
 */
function copyRows(
  c: MatrixView,
  i0: number,
  rows: number,
  columns: number,
  block: Float64Array,
  at: number,
  blockRow: number,
  inward: boolean,
): void {
  const { data, offset, rowStride, colStride } = c;
  for (let i = 0; i < rows; i++) {
    let outer = offset + (i0 + i) * rowStride;
    let inner = at + i * blockRow;
    const end = inner + columns;
    if (inward) {
      for (; inner < end; inner++, outer += colStride) block[inner] = data[outer]!;
    } else {
      for (; inner < end; inner++, outer += colStride) data[outer] = block[inner]!;
    }
  }
}
