import { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, formatShape, isDtype, shapeSize } from "@kb/tensor";
import { decodeAddress } from "@kb/topology";
import { blockPending, type DeviceTensorInfo, type KernelMemory, type MemoryBlock } from "./kernel-memory.js";
import type { Pointer } from "./options.js";
import type { ErrorSource } from "./validate.js";

// How tl calls reach device memory: the geometry of a load's or store's block, checks against
// the tensors allocated there, and reads and writes through the runner's `KernelMemory`, whose
// KbErrors are re-raised located at the kernel instance (and the call's line).

/** What device access needs of the context: its memory (null in command-list mode) and its errors. */
export interface MemoryScope extends ErrorSource {
  readonly memory: KernelMemory | null;
}

/** `0x1f000`. */
export function hex(address: number): string {
  return `0x${address.toString(16)}`;
}

/** Checks a load's source or a store's destination is HBM or SRAM (the other side is the PE's TCM). */
export function checkDeviceSide(tl: ErrorSource, call: string, address: number): void {
  let space: string;
  try {
    space = decodeAddress(address).space;
  } catch (error) {
    throw tl._error("TL_INVALID_CALL", `tl.${call}: ${hex(address)} is not a device address.`, error);
  }
  if (space === "tcm") {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: ${hex(address)} is in TCM; tl.load and tl.store move data between HBM or SRAM and the PE's TCM.`,
    );
  }
}

/**
 * Rows, row bytes and source/destination row stride (bytes) of a load/store of `shape`: one
 * contiguous row unless `stride` (elements between the starts of rows of a 2-D block) is given.
 * A `masked` copy may have a stride below the row length (a tile wider than the matrix's rows,
 * Triton's `BLOCK = next_power_of_2(N)`): its mask must keep the rows' elements apart
 * (`maskedBlock` checks it).
 */
export function blockOf(
  tl: ErrorSource,
  call: string,
  shape: readonly number[],
  dtype: Dtype,
  stride: number | undefined,
  masked = false,
): MemoryBlock {
  const size = DTYPE_BYTES[dtype];
  const cols = shape[shape.length - 1] as number;
  const rows = shapeSize(shape) / cols;
  const rowBytes = cols * size;
  if (stride === undefined) return { rows: 1, rowBytes: rows * rowBytes, stride: rows * rowBytes };
  if (shape.length !== 2 || !Number.isInteger(stride) || stride < 1) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: stride ${stride} needs a 2-D shape and a whole number of elements >= 1; got shape ${formatShape(shape)}.`,
    );
  }
  if (stride < cols && !masked && rows > 1) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: stride ${stride} is below the row length ${cols}: pass a mask that turns off the columns from ${stride} on (mask = await tl.lt(tl.expandDims(tl.arange(0, ${cols}), 0), ${stride})), or load a block of ${stride} columns.`,
    );
  }
  return { rows, rowBytes, stride: stride * size };
}

/** A device tensor with an element type, printed as `C (f16 [64, 64])`. */
export interface TypedTensor extends DeviceTensorInfo {
  readonly dtype: Dtype;
  toString(): string;
}

/**
 * Device memory is typed by the tensor allocated there: a load, store or composite operand of
 * another element type would reinterpret its bytes. Returns that tensor when its element type is
 * not `dtype` (the caller refuses the access, naming what to do), else null; allocations without
 * a dtype (and command-list mode, `memory` null) are not checked.
 */
export function mistypedTensorAt(
  memory: KernelMemory | null,
  address: number,
  dtype: Dtype,
): TypedTensor | null {
  const tensor = memory?.tensorAt?.(address) ?? null;
  if (tensor === null || tensor.dtype === null || tensor.dtype === dtype) return null;
  return {
    ...tensor,
    dtype: tensor.dtype,
    toString: () =>
      `${tensor.name} (${tensor.dtype}${tensor.shape !== null ? ` ${formatShape(tensor.shape)}` : ""})`,
  };
}

/**
 * A typed pointer (an object with `address` and a `dtype`, such as a runtime `DeviceTensor`)
 * whose element type is not `dtype`, else null. Checked in both modes, before the memory's own
 * check; raw addresses (numbers) carry no type and are left to {@link mistypedTensorAt}.
 */
export function mistypedPointer(
  ptr: Pointer,
  dtype: Dtype,
): { readonly dtype: Dtype; toString(): string } | null {
  if (typeof ptr !== "object" || ptr === null || !isDtype(ptr.dtype) || ptr.dtype === dtype) return null;
  const declared = ptr.dtype;
  const name =
    typeof ptr.describe === "function" ? ptr.describe() : `the ${declared} pointer at ${hex(ptr.address)}`;
  return { dtype: declared, toString: () => name };
}

/** A KbError of the memory located at the kernel instance; other errors as they are. */
function located(tl: ErrorSource, error: unknown): unknown {
  return error instanceof KbError ? tl._error(error.code, error.detail, error) : error;
}

/** `memory.check` (inside one live allocation, or TCM), its KbError located at the kernel instance. */
export function checkAccess(
  tl: ErrorSource,
  memory: KernelMemory,
  address: number,
  length: number,
  what: string,
): void {
  try {
    memory.check(address, length, what);
  } catch (error) {
    throw located(tl, error);
  }
}

/** `memory.read`, its KbError located at the kernel instance. */
export function readMemory(
  tl: ErrorSource,
  memory: KernelMemory,
  address: number,
  length: number,
  what: string,
): Uint8Array {
  try {
    return memory.read(address, length, what);
  } catch (error) {
    throw located(tl, error);
  }
}

/** `memory.write`, its KbError located at the kernel instance. */
export function writeMemory(
  tl: ErrorSource,
  memory: KernelMemory,
  address: number,
  bytes: Uint8Array,
  what: string,
): void {
  try {
    memory.write(address, bytes, what);
  } catch (error) {
    throw located(tl, error);
  }
}

/** Checks the bytes a block covers, from its first row's start to its last row's end. */
export function checkBlockAccess(
  tl: ErrorSource,
  memory: KernelMemory,
  address: number,
  block: MemoryBlock,
  what: string,
): void {
  checkAccess(tl, memory, address, (block.rows - 1) * block.stride + block.rowBytes, what);
}

/** The block's bytes, row after row (`rows * rowBytes`). */
function readBlock(
  tl: ErrorSource,
  memory: KernelMemory,
  address: number,
  block: MemoryBlock,
  what: string,
): Uint8Array {
  if (block.rows === 1) return readMemory(tl, memory, address, block.rowBytes, what);
  const out = new Uint8Array(block.rows * block.rowBytes);
  for (let row = 0; row < block.rows; row++) {
    out.set(readMemory(tl, memory, address + row * block.stride, block.rowBytes, what), row * block.rowBytes);
  }
  return out;
}

/** Writes `bytes` (`rows * rowBytes`, row after row) into the block. */
export function writeBlock(
  tl: ErrorSource,
  memory: KernelMemory,
  address: number,
  block: MemoryBlock,
  bytes: Uint8Array,
  what: string,
): void {
  for (let row = 0; row < block.rows; row++) {
    const slice = bytes.subarray(row * block.rowBytes, (row + 1) * block.rowBytes);
    writeMemory(tl, memory, address + row * block.stride, slice, what);
  }
}

/**
 * Lands a completed load of the block at `src` in TCM at `dst` and returns the bytes, or null
 * when they are unknown: bytes a compute result wrote (pending in phase 1) make the tile pending.
 */
export function landLoad(
  tl: ErrorSource,
  memory: KernelMemory,
  src: number,
  block: MemoryBlock,
  dst: number,
): Uint8Array | null {
  const length = block.rows * block.rowBytes;
  if (blockPending(memory, src, block)) {
    memory.markPending?.(dst, length);
    return null;
  }
  const bytes = readBlock(tl, memory, src, block, `tl.load at ${hex(src)}`);
  memory.write(dst, bytes, `tl.load into TCM ${hex(dst)}`);
  return bytes;
}
