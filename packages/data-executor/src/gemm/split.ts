/** The sizes of one GEMM of a batch: C (m x n) = op(A) (m x k) @ op(B) (k x n). */
export interface GemmShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
}

/** Rows [rowStart, rowEnd) of C of GEMM `problem` of a batch: one thread's piece of work. */
export interface GemmRowSlice {
  readonly problem: number;
  readonly rowStart: number;
  readonly rowEnd: number;
}

/**
 * The smallest batch, in flops (2 m n k summed), that {@link splitGemmRows} spreads over more
 * than one thread: 2^24, about a 200 x 200 x 200 GEMM (0.3 ms on one thread). On the reference
 * machine splitting paid from about 64^3 while the worker was awake (batches following each other
 * within half a millisecond), but waking a worker that had slept cost 0.2 to 0.5 ms, so that a
 * lone 256^3 GEMM ran slower on two threads (packages/data-executor/README.md, "GEMM speed").
 */
export const DEFAULT_MIN_SPLIT_FLOPS = 2 ** 24;

/**
 * Splits a batch of GEMMs over `threads` threads by rows of C, so that each thread gets about the
 * same work, 2 n k + n per row (the multiply-adds and the write of C).
 *
 * The batch is cut into `threads` consecutive shares: thread t gets whole GEMMs while they fit in
 * its share and the first rows of the GEMM that straddles the end of it (cut at an even row, the
 * kernel's micro-tile height), the next thread the rest. A batch of many equal GEMMs is thus
 * split by GEMMs, one big GEMM by rows. Batches under `minSplitFlops` stay whole on thread 0 (the
 * calling thread); GEMMs with m = 0 or n = 0 have no work and are left out.
 *
 * Returns one list of slices per thread (some may be empty); every row of every GEMM with work is
 * in exactly one slice.
 */
export function splitGemmRows(
  shapes: readonly GemmShape[],
  threads: number,
  minSplitFlops = DEFAULT_MIN_SPLIT_FLOPS,
): GemmRowSlice[][] {
  const plan: GemmRowSlice[][] = Array.from({ length: threads }, () => []);
  const rowCost = (shape: GemmShape) => shape.n * (2 * shape.k + 1);
  let total = 0;
  let flops = 0;
  for (const shape of shapes) {
    total += shape.m * rowCost(shape);
    flops += 2 * shape.m * shape.n * shape.k;
  }
  const split = threads > 1 && flops >= minSplitFlops;
  let thread = 0;
  let assigned = 0;
  shapes.forEach((shape, problem) => {
    const { m, n } = shape;
    if (m === 0 || n === 0) return;
    const cost = rowCost(shape);
    let row = 0;
    while (row < m) {
      let rows = m - row;
      const last = !split || thread === threads - 1;
      const end = (total * (thread + 1)) / threads; // where this thread's share ends
      if (!last) {
        const fit = Math.round((end - assigned) / cost);
        if (fit < rows) rows = Math.max(0, 2 * Math.round(fit / 2));
      }
      if (rows > 0) {
        plan[thread]!.push({ problem, rowStart: row, rowEnd: row + rows });
        row += rows;
        assigned += rows * cost;
      }
      // Move on when this GEMM was cut, or when the share is full.
      if (!last && (row < m || assigned >= end - cost / 2)) thread++;
    }
  });
  return plan;
}
