import { broadcastShapes, type DmaIndexed, evaluateMath } from "@kb/spec";
import { DTYPE_BYTES, type Dtype, formatShape, isFloatDtype, Tensor } from "@kb/tensor";
import {
  checkAccess,
  checkDeviceSide,
  hex,
  type MemoryScope,
  readMemory,
  writeMemory,
} from "./device-access.js";
import type { TensorHandle } from "./handles.js";
import { type KernelMemory, pendingIn } from "./kernel-memory.js";
import { checkOwned } from "./validate.js";
import { indexValuesOf } from "./values.js";

// Gathers and scatters (Triton's `tl.load(ptr + offs, mask)` / `tl.store(ptr + offs, x, mask)`):
// `tl.load(base, shape, dtype, { offsets, mask, other })` and `tl.store(base, x, { offsets, mask })`.
// Element `i` of the tile (row-major) is at `base + offsets[i] * bytes per element`. Phase 1 must
// know the offsets (and the mask) to say which bytes move: constants, loaded integer tiles and
// integer arithmetic of them (values.ts, `indexValuesOf`). Consecutive elements at consecutive
// addresses are merged into one run; the PE_DMA moves each run as one piece.

/** The runs of a gather or scatter, at the device side and in the packed tile, in element order. */
export interface IndexedBlock {
  /** `[deviceOffset, tileOffset, bytes, ...]` (device offsets from the base address). */
  readonly runs: readonly number[];
  /** The first element of each run (for error messages). */
  readonly firstElements: readonly number[];
  /** A gather's `other` as one element's bytes; undefined for a scatter. */
  readonly fill: readonly number[] | undefined;
  /** Bytes of the packed tile. */
  readonly tileBytes: number;
}

/**
 * The runs of `tl.${call}` of `shape` `dtype` elements at `base + offsets[i]` (where `mask` is on);
 * `other` is a gather's value of masked-off elements (null for a scatter). Throws
 * `TL_INVALID_CALL` for offsets that are not an integer tile of this kernel broadcastable to
 * `shape`, or whose values (or the mask's) phase 1 does not know.
 */
export function indexedBlock(
  tl: MemoryScope,
  call: string,
  offsets: TensorHandle,
  mask: TensorHandle | undefined,
  other: number | undefined | null,
  shape: readonly number[],
  dtype: Dtype,
): IndexedBlock {
  if (isFloatDtype(offsets.dtype) || offsets.dtype === "i1") {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: offsets must be an integer tile (element offsets from the base pointer, as Triton's ptr + offs); got ${offsets.describe()}. Build them with tl.arange and integer math, or load them as "i32".`,
    );
  }
  const offs = knownIndex(tl, call, "offsets", offsets, shape);
  let on: Float64Array | null = null;
  if (mask !== undefined) {
    if (mask.dtype !== "i1") {
      throw tl._error(
        "TL_INVALID_CALL",
        `tl.${call}: the mask must be an i1 tile broadcastable to ${formatShape(shape)}; got ${mask.describe()}. Build it with a comparison, e.g. mask = await tl.lt(offsets, n).`,
      );
    }
    on = knownIndex(tl, call, "mask", mask, shape);
  } else if (other !== undefined && other !== null) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: other (${other}) needs a mask; pass { offsets, mask, other }.`,
    );
  }
  if (other !== undefined && other !== null && typeof other !== "number")
    throw tl._error("TL_INVALID_CALL", `tl.${call}: other must be a number, got ${String(other)}.`);
  const size = DTYPE_BYTES[dtype];
  const runs: number[] = [];
  const firstElements: number[] = [];
  for (let i = 0; i < offs.length; i++) {
    if (on !== null && on[i] === 0) continue;
    const device = (offs[i] as number) * size;
    const last = runs.length - 3;
    const length = runs[last + 2] as number;
    if (
      last >= 0 &&
      (runs[last] as number) + length === device &&
      (runs[last + 1] as number) + length === i * size
    ) {
      runs[last + 2] = length + size;
      continue;
    }
    runs.push(device, i * size, size);
    firstElements.push(i);
  }
  // Without a mask every element is written by a run: nothing to fill.
  const fill =
    other === null || on === null ? undefined : Array.from(Tensor.fromArray([other ?? 0], [1], dtype).bytes);
  return { runs, firstElements, fill, tileBytes: offs.length * size };
}

/** The values of a gather's `offsets` or `mask`, broadcast to `shape`, or a located error. */
function knownIndex(
  tl: MemoryScope,
  call: string,
  name: string,
  handle: TensorHandle,
  shape: readonly number[],
): Float64Array {
  checkOwned(tl, call, handle);
  const joint = broadcastShapes([handle.shape, shape]);
  if (joint === null || formatShape(joint) !== formatShape(shape)) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: the ${name} ${handle.describe()} do not broadcast to the tile's shape ${formatShape(shape)}.`,
    );
  }
  const values = indexValuesOf(tl, handle);
  if (values === null) {
    const why =
      tl.memory === null
        ? "command-list mode has no loaded data, so it cannot say which bytes a gather through loaded indices moves: run the kernel on a machine (kb run)"
        : isFloatDtype(handle.dtype)
          ? "they are float values"
          : "they derive from a value phase 1 does not know (a compute result of float data, a cast of one, or bytes such a result wrote): only phase 2 computes it";
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: the ${name} ${handle.describe()} from tl.${handle.op} are not known in phase 1, which decides which bytes the DMA moves: ${why}. Compute addresses with integer math on tl.arange, program ids and loaded integer tiles (ids = await tl.load(idsPtr, [n], "i32"); offs = await tl.add(await tl.mul(ids, stride), cols)).`,
    );
  }
  return evaluateMath("copy", [{ values: values.toFloat64Array(), shape: handle.shape }], shape, null, {
    scalars: [],
  });
}

/** The DMA command's `indexed` field for a gather (`load`) or a scatter (`store`). */
export function indexedCommand(block: IndexedBlock, load: boolean): DmaIndexed {
  const runs: number[] = [];
  for (let i = 0; i < block.runs.length; i += 3) {
    const device = block.runs[i] as number;
    const tile = block.runs[i + 1] as number;
    if (load) runs.push(device, tile, block.runs[i + 2] as number);
    else runs.push(tile, device, block.runs[i + 2] as number);
  }
  return block.fill === undefined ? { runs } : { runs, fill: block.fill };
}

/**
 * The device offset of a gather or scatter that is one contiguous copy of the whole tile (its
 * offsets consecutive, no element masked off), or null: such a copy is a plain one.
 */
export function contiguousOffset(block: IndexedBlock): number | null {
  const { runs } = block;
  return runs.length === 3 && runs[1] === 0 && runs[2] === block.tileBytes ? (runs[0] as number) : null;
}

/** Checks each run's device bytes are HBM/SRAM inside a live allocation, naming the element. */
export function checkIndexedAccess(
  tl: MemoryScope,
  memory: KernelMemory | null,
  call: string,
  base: number,
  block: IndexedBlock,
  size: number,
): void {
  for (let r = 0; r < block.runs.length / 3; r++) {
    const address = base + (block.runs[3 * r] as number);
    const element = block.firstElements[r] as number;
    const what = `tl.${call} of element ${element} (offset ${(block.runs[3 * r] as number) / size} from ${hex(base)})`;
    if (address < 0) throw tl._error("MEMORY_ACCESS", `${what}: address ${address} is below 0.`);
    checkDeviceSide(tl, call, address);
    if (memory !== null) checkAccess(tl, memory, address, block.runs[3 * r + 2] as number, what);
  }
}

/**
 * Lands a completed gather from `base` in TCM at `dst`: `other` where no run writes, each run's
 * device bytes in order. Returns the tile's bytes, or null (the tile pending) when a byte it reads
 * is pending in phase 1.
 */
export function landGather(
  tl: MemoryScope,
  memory: KernelMemory,
  base: number,
  block: IndexedBlock,
  dst: number,
): Uint8Array | null {
  const { runs, tileBytes } = block;
  for (let i = 0; i < runs.length; i += 3) {
    if (pendingIn(memory, base + (runs[i] as number), runs[i + 2] as number)) {
      memory.markPending?.(dst, tileBytes);
      return null;
    }
  }
  const tile = new Uint8Array(tileBytes);
  const fill = block.fill ?? [0];
  for (let i = 0; i < tileBytes; i++) tile[i] = fill[i % fill.length] as number;
  const what = `tl.load gather at ${hex(base)}`;
  for (let i = 0; i < runs.length; i += 3)
    tile.set(
      readMemory(tl, memory, base + (runs[i] as number), runs[i + 2] as number, what),
      runs[i + 1] as number,
    );
  writeMemory(tl, memory, dst, tile, `tl.load into TCM ${hex(dst)}`);
  return tile;
}

/**
 * Phase 1 of a scatter of the packed tile `bytes` (null: pending) to `base`: each run written (or
 * marked pending) in element order, so a later element at the same address wins, as in phase 2.
 */
export function scatter(
  tl: MemoryScope,
  memory: KernelMemory,
  base: number,
  block: IndexedBlock,
  bytes: Uint8Array | null,
): void {
  const { runs } = block;
  const what = `tl.store scatter at ${hex(base)}`;
  for (let i = 0; i < runs.length; i += 3) {
    const at = base + (runs[i] as number);
    const length = runs[i + 2] as number;
    if (bytes === null) memory.markPending?.(at, length);
    else {
      const from = runs[i + 1] as number;
      writeMemory(tl, memory, at, bytes.subarray(from, from + length), what);
    }
  }
}
