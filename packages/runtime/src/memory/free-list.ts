import { KbError } from "@kb/errors";
import { type Dtype, formatShape } from "@kb/tensor";
import { formatAddress, formatBytes, formatRange } from "./format.js";

/** Options of {@link FreeListAllocator}. */
export interface FreeListAllocatorOptions {
  /** Names the memory in messages, e.g. `sip0.cube1.hbm`. */
  readonly name: string;
  /** First byte address the allocator manages (an integer >= 0). */
  readonly base: number;
  /** Bytes it manages: the range is [base, base + size). A positive integer. */
  readonly size: number;
  /**
   * Every allocation starts at a multiple of this many bytes (an absolute address, not an offset
   * from `base`) and occupies a multiple of it. A positive integer; default 16.
   */
  readonly alignment?: number;
  /** What to suggest when an allocation does not fit; a default suggestion is used when absent. */
  readonly hint?: string;
}

/** What an allocation that holds a tensor knows of it (given to `alloc`; raw allocations have none). */
export interface AllocationTensor {
  /** Element type. */
  readonly dtype: Dtype;
  /** Shape, row-major and contiguous from the allocation's start. */
  readonly shape: readonly number[];
}

/** A live allocation of a {@link FreeListAllocator}. */
export interface Allocation {
  /** Its first byte address (the value `alloc` returned). */
  readonly start: number;
  /** The bytes requested: accesses must stay within [start, start + bytes). */
  readonly bytes: number;
  /** The bytes it occupies: `bytes` rounded up to the alignment. */
  readonly reservedBytes: number;
  /** The `what` given to `alloc`, if any. */
  readonly what?: string;
  /** The element type of the tensor it holds, when `alloc` was given one. */
  readonly dtype?: Dtype;
  /** The shape of the tensor it holds, when `alloc` was given one. */
  readonly shape?: readonly number[];
}

/** What {@link FreeListAllocator.stats} reports; all in bytes except `allocations`. */
export interface AllocatorStats {
  /**
   * Bytes occupied (`reservedBytes`) by live allocations, and by freed ones whose bytes are not
   * reused (`free(address, at, { reuse: false })`).
   */
  readonly used: number;
  /** Bytes not occupied: `size - used`. */
  readonly free: number;
  /** The largest free block (an allocation of this size may still not fit when alignment pads it). */
  readonly largestFree: number;
  /** Live allocations. */
  readonly allocations: number;
}

interface FreeBlock {
  start: number;
  end: number;
}

/** A freed allocation, kept until its memory is allocated again (or older frees push it out). */
interface FreedRecord {
  readonly allocation: Allocation;
  /** Where it was freed (`file:line:col`), when the caller said. */
  readonly freedAt: string | undefined;
}

/** How many freed allocations each allocator describes in its messages (the most recent ones). */
const FREED_RECORDS = 1024;

const DEFAULT_HINT =
  "Free allocations that are no longer needed, split the request into smaller pieces, or use a larger memory.";

/**
 * A first-fit allocator of the byte range [base, base + size) of one memory.
 *
 * Free blocks and live allocations are kept in arrays sorted by address, so `free`,
 * `allocationAt` and `checkAccess` binary-search and `alloc` scans the free blocks from the lowest
 * address: O(n) in the number of blocks at worst, meant for hundreds of blocks, not millions.
 * Adjacent free blocks coalesce on `free`. An allocation may carry the dtype and shape of the tensor it
 * holds; the most recent 1024 frees are remembered (with where they happened, when `free` is told),
 * so a double free or an access to freed memory names what was there.
 *
 * It only does bookkeeping: it hands out numbers and never touches the bytes.
 *
 * **Gotchas**: accesses are checked against the requested `bytes`, not the rounded-up
 * `reservedBytes`, so reading the padding at the end of an allocation is an error.
 */
export class FreeListAllocator {
  /** The memory's name, used in every message. */
  readonly name: string;
  /** First byte address managed. */
  readonly base: number;
  /** Bytes managed. */
  readonly size: number;
  /** Start and size granularity in bytes. */
  readonly alignment: number;
  private readonly hint: string;
  private freeBlocks: FreeBlock[] = [];
  private allocations: Allocation[] = [];
  /** Starts of freed allocations not yet reallocated, sorted: tells a double free from a stray one. */
  private freedStarts: number[] = [];
  /** The most recent freed allocations by start, oldest first; a subset of `freedStarts`. */
  private freedRecords = new Map<number, FreedRecord>();
  private usedBytes = 0;

  /** Throws `MEMORY_ALLOCATION` when `base`, `size` or `alignment` is not a valid integer. */
  constructor(options: FreeListAllocatorOptions) {
    const { name, base, size, alignment = 16 } = options;
    this.name = name;
    if (!Number.isSafeInteger(base) || base < 0) {
      throw new KbError("MEMORY_ALLOCATION", `${name}: base must be an integer >= 0, got ${String(base)}.`);
    }
    if (!Number.isSafeInteger(size) || size <= 0 || !Number.isSafeInteger(base + size)) {
      throw new KbError(
        "MEMORY_ALLOCATION",
        `${name}: size must be a positive integer with base + size <= 2^53 - 1, got ${String(size)}.`,
      );
    }
    if (!Number.isSafeInteger(alignment) || alignment <= 0) {
      throw new KbError(
        "MEMORY_ALLOCATION",
        `${name}: alignment must be a positive integer, got ${String(alignment)}.`,
      );
    }
    this.base = base;
    this.size = size;
    this.alignment = alignment;
    this.hint = options.hint ?? DEFAULT_HINT;
    this.reset();
  }

  /**
   * Allocates `bytes` bytes at the lowest address where they fit and returns that address, a
   * multiple of `alignment`; the allocation occupies `bytes` rounded up to `alignment`.
   *
   * `what` names the allocation in messages; `tensor` records the dtype and shape of the tensor it
   * holds (see {@link allocationAt}).
   *
   * Throws `MEMORY_ALLOCATION` when `bytes` is not a positive integer, or when no free block can
   * hold it (naming the capacity, the free bytes in total and the largest free block).
   */
  alloc(bytes: number, what?: string, tensor?: AllocationTensor): number {
    if (typeof bytes !== "number" || !Number.isSafeInteger(bytes) || bytes <= 0) {
      throw new KbError(
        "MEMORY_ALLOCATION",
        `${this.name}: cannot allocate ${String(bytes)} bytes${describeWhat(what, tensor)}: the size must be a positive integer number of bytes.`,
      );
    }
    const reserved = roundUp(bytes, this.alignment);
    const blocks = this.freeBlocks;
    for (let index = 0; index < blocks.length; index++) {
      const block = blocks[index]!;
      const start = roundUp(block.start, this.alignment);
      const end = start + reserved;
      if (end > block.end) continue;
      if (start > block.start && end < block.end) {
        blocks.splice(index, 1, { start: block.start, end: start }, { start: end, end: block.end });
      } else if (start > block.start) {
        block.end = start;
      } else if (end < block.end) {
        block.start = end;
      } else {
        blocks.splice(index, 1);
      }
      const allocation: Allocation = {
        start,
        bytes,
        reservedBytes: reserved,
        ...(what === undefined ? {} : { what }),
        ...(tensor === undefined ? {} : { dtype: tensor.dtype, shape: Object.freeze([...tensor.shape]) }),
      };
      this.allocations.splice(upperBound(this.allocations, start), 0, allocation);
      this.usedBytes += reserved;
      this.forgetFreedStarts(start, end);
      return start;
    }
    throw this.outOfMemory(bytes, reserved, what, tensor);
  }

  /**
   * Frees the allocation that starts at `address`; its bytes coalesce with free neighbours.
   * `freedAt` (a `file:line:col`) is where the caller freed it: a later double free or access to
   * this memory names it.
   *
   * With `{ reuse: false }` the allocation ends the same way (accesses and a second free are
   * refused, naming `freedAt`) but its bytes are not handed out again: they stay in `used`, so
   * later allocations land where they would have had it lived.
   *
   * Throws `MEMORY_ALLOCATION` when `address` is not the start of a live allocation, saying
   * whether it was already freed (and where, when known), lies inside another allocation, or was
   * never allocated here.
   */
  free(address: number, freedAt?: string, options: { readonly reuse?: boolean } = {}): void {
    const index = upperBound(this.allocations, address) - 1;
    const allocation = index >= 0 ? this.allocations[index] : undefined;
    if (allocation !== undefined && allocation.start === address) {
      this.allocations.splice(index, 1);
      if (options.reuse !== false) {
        this.usedBytes -= allocation.reservedBytes;
        this.releaseBlock(address, address + allocation.reservedBytes);
      }
      this.freedStarts.splice(lowerBoundNumber(this.freedStarts, address), 0, address);
      this.freedRecords.set(address, { allocation, freedAt });
      if (this.freedRecords.size > FREED_RECORDS) {
        const oldest = this.freedRecords.keys().next().value as number;
        this.freedRecords.delete(oldest);
      }
      return;
    }
    const hex = formatAddress(address);
    if (allocation !== undefined && address < allocation.start + allocation.reservedBytes) {
      throw new KbError(
        "MEMORY_ALLOCATION",
        `${this.name}: cannot free ${hex}: it is inside the allocation ${formatAllocation(allocation)}, ${address - allocation.start} bytes after its start. Free an allocation by the address alloc() returned, ${formatAddress(allocation.start)}.`,
      );
    }
    const freedIndex = lowerBoundNumber(this.freedStarts, address);
    if (this.freedStarts[freedIndex] === address) {
      const record = this.freedRecords.get(address);
      const what =
        record === undefined
          ? "it was already freed"
          : `${formatAllocation(record.allocation)} was already freed${record.freedAt === undefined ? "" : ` at ${record.freedAt}`}`;
      throw new KbError(
        "MEMORY_ALLOCATION",
        `${this.name}: cannot free ${hex}: ${what} (double free) and has not been allocated again. Free each allocation once.`,
      );
    }
    const where =
      typeof address === "number" && address >= this.base && address < this.base + this.size
        ? `it is free memory of ${this.name}`
        : `it is outside ${this.name} ${formatRange(this.base, this.size)}`;
    throw new KbError(
      "MEMORY_ALLOCATION",
      `${this.name}: cannot free ${hex}: it was never allocated by this allocator (${where}). Free only addresses alloc() returned.`,
    );
  }

  /** The live allocation whose requested range [start, start + bytes) contains `address`, or null. */
  allocationAt(address: number): Allocation | null {
    const allocation = this.allocations[upperBound(this.allocations, address) - 1];
    return allocation !== undefined && address < allocation.start + allocation.bytes ? allocation : null;
  }

  /**
   * Checks that [address, address + bytes) lies within one live allocation (a zero-length range
   * may also sit at an allocation's end). `what` says who accesses, e.g. `"DMA read of tensor x"`.
   *
   * Throws `MEMORY_ACCESS` naming `what`, the range in hex and the nearest live allocation.
   */
  checkAccess(address: number, bytes: number, what: string): void {
    if (!Number.isSafeInteger(address) || address < 0 || !Number.isSafeInteger(bytes) || bytes < 0) {
      throw new KbError(
        "MEMORY_ACCESS",
        `${what}: address ${String(address)} and length ${String(bytes)} must be integers >= 0.`,
      );
    }
    const index = upperBound(this.allocations, address) - 1;
    const before = index >= 0 ? this.allocations[index] : undefined;
    if (before !== undefined && address + bytes <= before.start + before.bytes) return;
    const range = `${what}: ${formatRange(address, bytes)} (${bytes} bytes) is not within one live allocation of ${this.name}`;
    const freed =
      before !== undefined && address < before.start + before.bytes ? null : this.freedAt(address);
    if (freed !== null) {
      const where = freed.freedAt === undefined ? "" : ` at ${freed.freedAt}`;
      throw new KbError(
        "MEMORY_ACCESS",
        `${range}; it lies in ${formatAllocation(freed.allocation)}, which was freed${where} and not allocated since. Free a tensor only after the last kernel or copy that uses it.`,
      );
    }
    const after = this.allocations[index + 1];
    throw new KbError(
      "MEMORY_ACCESS",
      `${range}; ${describeNearest(address, bytes, before, after, this.name)}. Check the address and length, and that the buffer is allocated and not yet freed.`,
    );
  }

  /** Bytes used and free, the largest free block and the number of live allocations. */
  stats(): AllocatorStats {
    let largestFree = 0;
    for (const block of this.freeBlocks) largestFree = Math.max(largestFree, block.end - block.start);
    return {
      used: this.usedBytes,
      free: this.size - this.usedBytes,
      largestFree,
      allocations: this.allocations.length,
    };
  }

  /** The live allocations, lowest address first (a copy). */
  liveAllocations(): Allocation[] {
    return this.allocations.slice();
  }

  /** Frees everything at once and forgets freed addresses. */
  reset(): void {
    this.freeBlocks = [{ start: this.base, end: this.base + this.size }];
    this.allocations = [];
    this.freedStarts = [];
    this.freedRecords = new Map();
    this.usedBytes = 0;
  }

  /** The remembered freed allocation whose requested bytes contain `address`, or null. */
  private freedAt(address: number): FreedRecord | null {
    const index = lowerBoundNumber(this.freedStarts, address + 1) - 1;
    const start = this.freedStarts[index];
    const record = start === undefined ? undefined : this.freedRecords.get(start);
    return record !== undefined && address < record.allocation.start + record.allocation.bytes
      ? record
      : null;
  }

  private releaseBlock(start: number, end: number): void {
    const blocks = this.freeBlocks;
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (blocks[mid]!.start < start) lo = mid + 1;
      else hi = mid;
    }
    const previous = blocks[lo - 1];
    const next = blocks[lo];
    const joinsPrevious = previous !== undefined && previous.end === start;
    const joinsNext = next !== undefined && next.start === end;
    if (joinsPrevious && joinsNext) {
      previous.end = next.end;
      blocks.splice(lo, 1);
    } else if (joinsPrevious) {
      previous.end = end;
    } else if (joinsNext) {
      next.start = start;
    } else {
      blocks.splice(lo, 0, { start, end });
    }
  }

  private forgetFreedStarts(start: number, end: number): void {
    const from = lowerBoundNumber(this.freedStarts, start);
    const to = lowerBoundNumber(this.freedStarts, end);
    if (to > from) {
      for (const forgotten of this.freedStarts.splice(from, to - from)) this.freedRecords.delete(forgotten);
    }
  }

  private outOfMemory(
    bytes: number,
    reserved: number,
    what: string | undefined,
    tensor: AllocationTensor | undefined,
  ): KbError {
    const { free, largestFree } = this.stats();
    const rounded =
      reserved === bytes
        ? ""
        : `, ${formatBytes(reserved)} after rounding up to the ${formatBytes(this.alignment)} alignment`;
    const request = `${this.name}: cannot allocate ${formatBytes(bytes)}${describeWhat(what, tensor)}${rounded}`;
    if (reserved > this.size) {
      return new KbError(
        "MEMORY_ALLOCATION",
        `${request}: more than the whole of ${this.name}, ${formatBytes(this.size)}, of which ${formatBytes(free)} ${free === 1 ? "is" : "are"} free. ${this.hint}`,
      );
    }
    const fragmented =
      free >= reserved ? " The free bytes would suffice but are fragmented into smaller blocks." : "";
    return new KbError(
      "MEMORY_ALLOCATION",
      `${request}: ${formatBytes(free)} free of its ${formatBytes(this.size)}, the largest free block is ${formatBytes(largestFree)}.${fragmented} ${this.hint}`,
    );
  }
}

/** Index of the first allocation whose start is > address (binary search). */
function upperBound(allocations: readonly Allocation[], address: number): number {
  let lo = 0;
  let hi = allocations.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (allocations[mid]!.start <= address) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first value >= target in a sorted array. */
function lowerBoundNumber(values: readonly number[], target: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `value` rounded up to a multiple of `unit`, exact for integers below 2^53 (no division). */
function roundUp(value: number, unit: number): number {
  const remainder = value % unit;
  return remainder === 0 ? value : value + (unit - remainder);
}

function describeNearest(
  address: number,
  bytes: number,
  before: Allocation | undefined,
  after: Allocation | undefined,
  name: string,
): string {
  const end = address + bytes;
  if (before !== undefined && address < before.start + before.bytes) {
    return `it starts inside the allocation ${formatAllocation(before)} but runs ${end - (before.start + before.bytes)} bytes past its end`;
  }
  if (after !== undefined && end > after.start) {
    return `it starts ${after.start - address} bytes before the allocation ${formatAllocation(after)}`;
  }
  const gapBefore = before === undefined ? Number.POSITIVE_INFINITY : address - (before.start + before.bytes);
  const gapAfter = after === undefined ? Number.POSITIVE_INFINITY : after.start - end;
  if (before !== undefined && gapBefore <= gapAfter) {
    return `the nearest live allocation, ${formatAllocation(before)}, ends ${gapBefore} bytes before it`;
  }
  if (after !== undefined) {
    return `the nearest live allocation, ${formatAllocation(after)}, starts ${gapAfter} bytes after it`;
  }
  return `${name} has no live allocations`;
}

function formatAllocation(allocation: Allocation): string {
  const label = allocation.what === undefined ? "" : ` "${allocation.what}"`;
  const { dtype, shape } = allocation;
  const tensor = dtype !== undefined && shape !== undefined ? `${dtype} ${formatShape(shape)}, ` : "";
  return `${formatRange(allocation.start, allocation.bytes)}${label} (${tensor}${allocation.bytes} bytes)`;
}

/**
 * ` for "x" (f32 [2, 3])`, ` for a tensor (f32 [2, 3])` or nothing: what an allocation request is
 * for, as the messages of the allocators append it.
 */
export function describeWhat(what: string | undefined, tensor?: AllocationTensor): string {
  const described = tensor === undefined ? "" : ` (${tensor.dtype} ${formatShape(tensor.shape)})`;
  return what === undefined ? described && ` for a tensor${described}` : ` for "${what}"${described}`;
}
