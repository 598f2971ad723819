import { broadcastShapes, type DmaMask, evaluateMath, type MaskPiece, maskPieces } from "@kb/spec";
import { DTYPE_BYTES, type Dtype, formatShape, Tensor } from "@kb/tensor";
import { checkBlockAccess, type MemoryScope, readMemory, writeMemory } from "./device-access.js";
import type { TensorHandle } from "./handles.js";
import { blockPending, type KernelMemory, type MemoryBlock, markBlockPending } from "./kernel-memory.js";
import { checkOwned } from "./validate.js";
import { constantValuesOf } from "./values.js";

// Masked loads and stores (Triton's `mask` / `other`): which elements of a tile move, as runs of
// the packed tile for the DMA command and as strided pieces for phase 1's reads and writes. The
// PE_DMA groups the runs into the same pieces (`maskPieces` of @kb/spec), so both phases and the
// timing see the same bytes move; masked-off addresses are never checked, read or written.

/** A tile's masked-on parts: the DMA command's mask, and its pieces at the device side. */
export interface MaskedBlock {
  readonly mask: DmaMask;
  /** `srcOffset`/`srcStride`: the device side; `dstOffset`/`dstStride`: the packed tile. */
  readonly pieces: readonly MaskPiece[];
  /** Bytes of the whole packed tile. */
  readonly tileBytes: number;
}

/**
 * The masked-on parts of a `tl.${call}` of `shape` `dtype` elements moved as `block`, or null when
 * there is no mask or it is on everywhere (then the copy is an unmasked one, byte for byte).
 * `other` is a load's value of masked-off elements (default 0; null for a store). Throws
 * `TL_INVALID_CALL` for a mask that is not an `i1` handle of this kernel broadcastable to `shape`,
 * or whose values phase 1 does not know from constants.
 */
export function maskedBlock(
  tl: MemoryScope,
  call: string,
  mask: TensorHandle | undefined,
  other: number | undefined | null,
  shape: readonly number[],
  dtype: Dtype,
  block: MemoryBlock,
): MaskedBlock | null {
  if (mask === undefined) {
    if (other !== undefined && other !== null) {
      throw tl._error("TL_INVALID_CALL", `tl.${call}: other (${other}) needs a mask; pass { mask, other }.`);
    }
    return null;
  }
  checkOwned(tl, call, mask);
  const joint = broadcastShapes([mask.shape, shape]);
  if (mask.dtype !== "i1" || joint === null || formatShape(joint) !== formatShape(shape)) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: the mask must be an i1 tile broadcastable to the tile's shape ${formatShape(shape)}; got ${mask.describe()}. Build it with a comparison, e.g. mask = await tl.lt(offsets, n).`,
    );
  }
  if (other !== undefined && other !== null && typeof other !== "number") {
    throw tl._error("TL_INVALID_CALL", `tl.${call}: other must be a number, got ${String(other)}.`);
  }
  const values = constantValuesOf(tl, mask);
  if (values === null) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: the mask ${mask.describe()} derives from loaded data, so phase 1 does not know its values; a mask decides which bytes the DMA moves and must be computed from tl.arange, tl.full, program ids and scalars (mask = await tl.lt(offsets, n)). To select by data, load unmasked and use tl.where.`,
    );
  }
  const on = evaluateMath("copy", [{ values: values.toFloat64Array(), shape: mask.shape }], shape, null, {
    scalars: [],
  });
  const size = DTYPE_BYTES[dtype];
  if (block.rows > 1 && block.stride < block.rowBytes) checkApart(tl, call, on, shape, block.stride / size);
  const tileBytes = block.rows * block.rowBytes;
  const runs = maskRuns(on, size, block.rows === 1 ? on.length : block.rowBytes / size);
  if (runs.length === 2 && runs[0] === 0 && runs[1] === tileBytes) return null;
  const fill = other === null ? undefined : Array.from(Tensor.fromArray([other ?? 0], [1], dtype).bytes);
  return {
    mask: fill === undefined ? { runs } : { runs, fill },
    pieces: maskPieces(runs, block.rowBytes, block.stride, block.rowBytes),
    tileBytes,
  };
}

/**
 * A tile wider than its rows' spacing (`stride` elements < the row length, Triton's
 * `BLOCK = next_power_of_2(N)` over rows N apart): its masked-on elements must be distinct
 * device elements, so every masked-on byte moves once and a masked-off column never does.
 */
function checkApart(
  tl: MemoryScope,
  call: string,
  on: Float64Array,
  shape: readonly number[],
  stride: number,
): void {
  const cols = shape[1] as number;
  const seen = new Map<number, number>();
  for (let i = 0; i < on.length; i++) {
    if (on[i] === 0) continue;
    const row = Math.floor(i / cols);
    const at = row * stride + (i % cols);
    const other = seen.get(at);
    if (other !== undefined) {
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.${call}: with rows ${stride} elements apart (stride ${stride} < the tile's ${cols} columns), the masked-on elements at row ${Math.floor(other / cols)}, column ${other % cols} and row ${row}, column ${i % cols} are the same device element. Mask off the columns from ${stride} on (cols < ${stride}), as Triton's BLOCK = next_power_of_2(N) kernels do with mask = cols < N.`,
      );
    }
    seen.set(at, i);
  }
}

/** `[offset, bytes, ...]` of the runs of non-zero `on` elements, none crossing a row of `cols`. */
function maskRuns(on: Float64Array, size: number, cols: number): number[] {
  const runs: number[] = [];
  let start = -1;
  for (let i = 0; i <= on.length; i++) {
    const set = i < on.length && on[i] !== 0;
    if (start >= 0 && (!set || i % cols === 0)) {
      runs.push(start * size, (i - start) * size);
      start = -1;
    }
    if (set && start < 0) start = i;
  }
  return runs;
}

/** The device block of `piece` (its rows at the device side). */
function deviceBlock(piece: MaskPiece): MemoryBlock {
  return { rows: piece.rows, rowBytes: piece.bytes, stride: piece.srcStride };
}

/** Checks the masked-on bytes at `address` are in live allocations (masked-off ones are not checked). */
export function checkMaskedAccess(
  tl: MemoryScope,
  memory: KernelMemory,
  address: number,
  masked: MaskedBlock,
  what: string,
): void {
  for (const piece of masked.pieces)
    checkBlockAccess(tl, memory, address + piece.srcOffset, deviceBlock(piece), what);
}

/**
 * Lands a completed masked load from `src` in TCM at `dst`: `other` where the mask is off, the
 * device bytes where it is on. Returns the tile's bytes, or null (the tile pending) when a
 * masked-on byte is pending in phase 1.
 */
export function landMaskedLoad(
  tl: MemoryScope,
  memory: KernelMemory,
  src: number,
  masked: MaskedBlock,
  dst: number,
): Uint8Array | null {
  const { pieces, tileBytes } = masked;
  if (pieces.some((piece) => blockPending(memory, src + piece.srcOffset, deviceBlock(piece)))) {
    memory.markPending?.(dst, tileBytes);
    return null;
  }
  const tile = new Uint8Array(tileBytes);
  const fill = masked.mask.fill ?? [0];
  for (let i = 0; i < tileBytes; i++) tile[i] = fill[i % fill.length] as number;
  const what = `tl.load at 0x${src.toString(16)}`;
  for (const piece of pieces) {
    for (let row = 0; row < piece.rows; row++) {
      const bytes = readMemory(tl, memory, src + piece.srcOffset + row * piece.srcStride, piece.bytes, what);
      tile.set(bytes, piece.dstOffset + row * piece.dstStride);
    }
  }
  memory.write(dst, tile, `tl.load into TCM 0x${dst.toString(16)}`);
  return tile;
}

/**
 * Phase 1 of a masked store of the packed tile `bytes` (null: pending) at `dst`: the masked-on
 * bytes are written (or marked pending); masked-off device bytes are left as they are.
 */
export function storeMasked(
  tl: MemoryScope,
  memory: KernelMemory,
  dst: number,
  masked: MaskedBlock,
  bytes: Uint8Array | null,
  what: string,
): void {
  for (const piece of masked.pieces) {
    if (bytes === null) {
      markBlockPending(memory, dst + piece.srcOffset, deviceBlock(piece));
      continue;
    }
    for (let row = 0; row < piece.rows; row++) {
      const at = dst + piece.srcOffset + row * piece.srcStride;
      const from = piece.dstOffset + row * piece.dstStride;
      writeMemory(tl, memory, at, bytes.subarray(from, from + piece.bytes), what);
    }
  }
}
