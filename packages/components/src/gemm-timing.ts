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
