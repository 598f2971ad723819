// The pieces a masked DMA moves (see `DmaMask`): runs of masked-on bytes of a tile, grouped into
// strided blocks. Phase 1 (`@kb/tl`) reads and writes device memory piece by piece and the
// PE_DMA times the same pieces, so both see the same bytes move.

/**
 * One strided block of a masked copy: `rows` rows of `bytes` bytes, at `srcOffset` /
 * `dstOffset` from the copy's source / destination address, rows `srcStride` / `dstStride` bytes
 * apart (equal to `bytes` when `rows` is 1).
 */
export interface MaskPiece {
  readonly srcOffset: number;
  readonly dstOffset: number;
  readonly rows: number;
  readonly bytes: number;
  readonly srcStride: number;
  readonly dstStride: number;
}

/**
 * Why `runs` is not a valid mask of a copy of `rows` rows of `rowBytes` bytes (see `DmaMask`), or
 * null when it is.
 */
export function maskRunsProblem(runs: readonly number[], rows: number, rowBytes: number): string | null {
  if (runs.length % 2 !== 0) return `mask.runs has ${runs.length} numbers; it holds [offset, bytes] pairs.`;
  const tileBytes = rows * rowBytes;
  let end = 0;
  for (let i = 0; i < runs.length; i += 2) {
    const offset = runs[i] as number;
    const bytes = runs[i + 1] as number;
    if (!Number.isInteger(offset) || !Number.isInteger(bytes) || bytes < 1 || offset < end) {
      return `mask run ${i / 2} [${offset}, ${bytes}] must be whole numbers, at least 1 byte, after the previous run's end (${end}).`;
    }
    end = offset + bytes;
    const rowEnd = rows === 1 ? tileBytes : (Math.floor(offset / rowBytes) + 1) * rowBytes;
    if (end > rowEnd) {
      return `mask run ${i / 2} [${offset}, ${bytes}] runs past ${rows === 1 ? "the tile's" : "its row's"} end (byte ${rowEnd}).`;
    }
  }
  return null;
}

/**
 * Groups a valid mask's runs (see {@link maskRunsProblem}) into strided pieces: consecutive runs
 * of the same length, equally spaced at both the source and the destination, are one piece (a
 * column mask over a 2-D tile is one piece of shorter rows, a row mask one piece of fewer rows, a
 * 1-D tail one shorter block). Offsets of the tile (row `r`, byte `c`) are `r * stride + c` on
 * each side.
 */
export function maskPieces(
  runs: readonly number[],
  rowBytes: number,
  srcStride: number,
  dstStride: number,
): MaskPiece[] {
  const pieces: MaskPiece[] = [];
  const at = (i: number, stride: number): number => {
    const offset = runs[2 * i] as number;
    return Math.floor(offset / rowBytes) * stride + (offset % rowBytes);
  };
  const count = runs.length / 2;
  let first = 0;
  while (first < count) {
    const bytes = runs[2 * first + 1] as number;
    const src = at(first, srcStride);
    const dst = at(first, dstStride);
    let last = first;
    let srcStep = 0;
    let dstStep = 0;
    while (last + 1 < count && runs[2 * (last + 1) + 1] === bytes) {
      const nextSrc = at(last + 1, srcStride) - at(last, srcStride);
      const nextDst = at(last + 1, dstStride) - at(last, dstStride);
      if (last > first && (nextSrc !== srcStep || nextDst !== dstStep)) break;
      srcStep = nextSrc;
      dstStep = nextDst;
      last++;
    }
    const rows = last - first + 1;
    pieces.push({
      srcOffset: src,
      dstOffset: dst,
      rows,
      bytes,
      srcStride: rows === 1 ? bytes : srcStep,
      dstStride: rows === 1 ? bytes : dstStep,
    });
    first = last + 1;
  }
  return pieces;
}
