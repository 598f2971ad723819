import type { Component } from "./component.js";

/**
 * What a PE_GEMM impl states about its own timing, so that `kb probe`, the run results and the
 * perf suites use the impl's formula rather than one of their own. The built-in `pe_gemm_v1` and
 * `pe_gemm_v2` implement it; a plug-in engine may (members on its component class; see
 * `kb-plugin-systolic-gemm`), and tools read it with {@link gemmTimingOf}.
 *
 * **Gotchas**: `gemmCycles` must be what `process` charges for a tile that has the engine to
 * itself (queueing for the shared compute slot comes on top), or `kb probe` fails the impl.
 */
export interface GemmTiming {
  /** MAC array rows (R of the array utilisation `MNK / (cycles x R x C)`). */
  readonly macRows: number;
  /** MAC array columns (C). */
  readonly macCols: number;
  /** Clock, GHz: a tile takes `gemmCycles(...) / freqGhz` ns. */
  readonly freqGhz: number;
  /** Cycles one `m x n x k` GEMM of input dtype `dtype` keeps the engine busy (its closed form, fixed overhead included). */
  gemmCycles(m: number, n: number, k: number, dtype: string): number;
  /** Cycles charged so far: the sum of `gemmCycles` over the GEMM stages the engine ran. */
  readonly arrayCycles: number;
  /**
   * FLOPs so far by input dtype (`2 m n k` per GEMM stage, keyed `"f16"`, `"i8"`, ...), summing
   * to `stats.flops`. Optional: the run results attribute the FLOPs of an engine without it to
   * `"unknown"`. The built-in PE_GEMMs keep it.
   */
  readonly flopsByDtype?: Readonly<Record<string, number>>;
}

/**
 * The best GEMM rate `timing` states for input dtype `dtype`, FLOPs per ns: `2 R C freq` over
 * the fewest cycles per MAC step its `gemmCycles` charges when one dimension of a GEMM grows
 * (the marginal cost of `L` more steps along `k` with `m = R, n = C`, along `m` with `k = R, n =
 * C`, or along `n` with `k = R, m = C`: whichever the impl's dataflow streams), so fixed
 * overheads, fill and drain do not count. For `pe_gemm_v1` and `pe_gemm_v2` on their default
 * `dtype_cycles` this is `2 R C freq / dtype_cycles[dtype]` (i8 twice f16, f32 a quarter).
 */
export function gemmPeakFlopsPerNs(timing: GemmTiming, dtype: string): number {
  const rows = timing.macRows;
  const cols = timing.macCols;
  const steps = 64 * rows * cols;
  const marginal = (grow: (length: number) => number) => (grow(2 * steps) - grow(steps)) / steps;
  const cyclesPerStep = Math.min(
    marginal((k) => timing.gemmCycles(rows, cols, k, dtype)),
    marginal((m) => timing.gemmCycles(m, cols, rows, dtype)),
    marginal((n) => timing.gemmCycles(cols, n, rows, dtype)),
  );
  return cyclesPerStep > 0 ? (2 * rows * cols * timing.freqGhz) / cyclesPerStep : 0;
}

/** `component`'s {@link GemmTiming}, or null when its impl does not state one. */
export function gemmTimingOf(component: Component): GemmTiming | null {
  const timing = component as unknown as Partial<GemmTiming>;
  return typeof timing.gemmCycles === "function" &&
    typeof timing.macRows === "number" &&
    typeof timing.macCols === "number" &&
    typeof timing.freqGhz === "number" &&
    typeof timing.arrayCycles === "number"
    ? (timing as GemmTiming)
    : null;
}
