import type { Dtype } from "@kb/tensor";

/**
 * Device memory as a kernel sees it in runner mode: the runtime passes its memory store, which
 * also checks that HBM/SRAM accesses stay inside live allocations (throwing a `KbError`).
 */
export interface KernelMemory {
  /** Throws unless `[address, address + length)` may be accessed (inside one live allocation, or TCM). */
  check(address: number, length: number, what: string): void;
  /**
   * The live device tensor (HBM/SRAM allocation) holding `address`, or null (TCM, or no
   * allocation). `dtype` and `shape` are null for raw allocations made without an element type.
   * Loads, stores and composites check their element type against it.
   */
  tensorAt?(address: number): DeviceTensorInfo | null;
  read(address: number, length: number, what: string): Uint8Array;
  /** Stores real bytes (they are known again: not pending). */
  write(address: number, bytes: Uint8Array, what: string): void;
  /**
   * Marks `[address, address + length)` as holding values phase 1 does not know: a compute
   * result (math, dot, composite output) or a copy of one. `write` makes bytes known again.
   */
  markPending?(address: number, length: number): void;
  /** True when any byte of `[address, address + length)` is pending (see `markPending`). */
  isPending?(address: number, length: number): boolean;
  /**
   * Why the pending bytes at `address` (HBM/SRAM) are unknown when it is not a compute result:
   * timing-only host data (`deferredTensor` of `@kb/runtime` in a run without `--verify`),
   * described with its tensor's name, where it was copied and what to do; null otherwise. A
   * kernel reading such a loaded tile's values names it in its `TL_PENDING_HANDLE` error.
   */
  describePending?(address: number): string | null;
  /**
   * Called when a `tl.load` completed with the bytes the kernel observed (`kb run
   * --check-phases` compares them with what phase 2 copies for the same op).
   */
  observeLoad?(load: LoadObservation): void;
}

/** What a `tl.load` observed in phase 1 (see `KernelMemory.observeLoad`). */
export interface LoadObservation {
  readonly kernel: string;
  /** PE id, `sip0.cube0.pe3`. */
  readonly pe: string;
  /** The call in the kernel's source, `file:line:col`, or null when unknown. */
  readonly site: string | null;
  /** Device address read (HBM or SRAM). */
  readonly src: number;
  /** TCM address written. */
  readonly dst: number;
  readonly rows: number;
  /** Bytes per row (all of them when `rows` is 1). */
  readonly rowBytes: number;
  /** Bytes between the starts of source rows. */
  readonly srcStride: number;
  /** The bytes the kernel received, `rows * rowBytes`, row after row. */
  readonly bytes: Uint8Array;
  /** Simulated time the load completed, ns. */
  readonly atNs: number;
}

/** What a kernel's memory knows of the device tensor at an address (see `KernelMemory.tensorAt`). */
export interface DeviceTensorInfo {
  /** The tensor's name (`A`, `out`, `t3`). */
  readonly name: string;
  /** Its element type, or null for an allocation made without one. */
  readonly dtype: Dtype | null;
  /** Its shape, or null when unknown. */
  readonly shape: readonly number[] | null;
  /** Device address of its first byte. */
  readonly address: number;
  /** Its size in bytes. */
  readonly bytes: number;
}

/** True when any byte of `[address, address + length)` holds a value phase 1 does not know. */
export function pendingIn(memory: KernelMemory, address: number, length: number): boolean {
  return memory.isPending?.(address, length) ?? false;
}

/** A 2-D block of device memory: `rows` rows of `rowBytes` bytes, `stride` bytes apart. */
export interface MemoryBlock {
  readonly rows: number;
  readonly rowBytes: number;
  readonly stride: number;
}

/** True when any byte the block covers (row by row, not the gaps between rows) is pending. */
export function blockPending(memory: KernelMemory, address: number, block: MemoryBlock): boolean {
  if (memory.isPending === undefined) return false;
  for (let row = 0; row < block.rows; row++) {
    if (memory.isPending(address + row * block.stride, block.rowBytes)) return true;
  }
  return false;
}

/** Marks every row of the block pending. */
export function markBlockPending(memory: KernelMemory, address: number, block: MemoryBlock): void {
  if (memory.markPending === undefined) return;
  for (let row = 0; row < block.rows; row++) memory.markPending(address + row * block.stride, block.rowBytes);
}
