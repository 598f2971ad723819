// Indexed DMA copies (`DmaIndexed`): a gather (`tl.load` through an offsets tensor) or a scatter
// (`tl.store` through one) moves a list of runs, each from its own source offset to its own
// destination offset. The PE_DMA moves each run as one descriptor (a piece of the formula in
// docs/latency-model.md, "Gathers and scatters"), and phase 2 copies the same runs in order.

/** One run of an indexed copy: `bytes` bytes from `src + srcOffset` to `dst + dstOffset`. */
export interface IndexedRun {
  readonly srcOffset: number;
  readonly dstOffset: number;
  readonly bytes: number;
}

/** The runs of an indexed copy's `[srcOffset, dstOffset, bytes, ...]` triples, in order. */
export function indexedRuns(runs: readonly number[]): IndexedRun[] {
  const out: IndexedRun[] = [];
  for (let i = 0; i + 2 < runs.length; i += 3)
    out.push({
      srcOffset: runs[i] as number,
      dstOffset: runs[i + 1] as number,
      bytes: runs[i + 2] as number,
    });
  return out;
}

/**
 * Why `runs` is not a valid indexed copy of a `tileBytes` tile (see `DmaIndexed`) whose TCM side
 * is the destination (`tcmDst`, a gather) or the source (a scatter), or null when it is.
 */
export function indexedRunsProblem(
  runs: readonly number[],
  tileBytes: number,
  tcmDst: boolean,
): string | null {
  if (runs.length % 3 !== 0)
    return `indexed.runs has ${runs.length} numbers; it holds [srcOffset, dstOffset, bytes] triples.`;
  for (const [i, run] of indexedRuns(runs).entries()) {
    const { srcOffset, dstOffset, bytes } = run;
    if (![srcOffset, dstOffset, bytes].every(Number.isInteger) || bytes < 1) {
      return `indexed run ${i} [${srcOffset}, ${dstOffset}, ${bytes}] must be whole numbers, at least 1 byte.`;
    }
    const tileOffset = tcmDst ? dstOffset : srcOffset;
    if (tileOffset < 0 || tileOffset + bytes > tileBytes) {
      return `indexed run ${i} [${srcOffset}, ${dstOffset}, ${bytes}] leaves the ${tileBytes}-byte TCM tile at its ${tcmDst ? "destination" : "source"} side.`;
    }
  }
  return null;
}
