import { TCM_WINDOW_BYTES, tcmAddress } from "@kb/components";
import { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, formatShape } from "@kb/tensor";
import type { DeviceTensorInfo } from "@kb/tl";
import { ADDRESS_LAYOUT, decodeAddress, encodeAddress, type MemorySpace } from "@kb/topology";

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
  /** Bytes occupied by live allocations (their `reservedBytes`). */
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
   * Throws `MEMORY_ALLOCATION` when `address` is not the start of a live allocation, saying
   * whether it was already freed (and where, when known), lies inside another allocation, or was
   * never allocated here.
   */
  free(address: number, freedAt?: string): void {
    const index = upperBound(this.allocations, address) - 1;
    const allocation = index >= 0 ? this.allocations[index] : undefined;
    if (allocation !== undefined && allocation.start === address) {
      this.allocations.splice(index, 1);
      this.usedBytes -= allocation.reservedBytes;
      this.releaseBlock(address, address + allocation.reservedBytes);
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

/** The memory layout {@link DeviceMemory} builds its allocators from; all sizes in bytes. */
export interface DeviceMemoryLayout {
  /** SIPs of the device (1..32). */
  readonly sips: number;
  /** Cubes per SIP (1..64). */
  readonly cubesPerSip: number;
  /** PEs per cube (1..4096). */
  readonly pesPerCube: number;
  /** HBM capacity of each cube (below 2^40). */
  readonly hbmBytesPerCube: number;
  /** Shared SRAM capacity of each cube (below 2^40; 0 for none). */
  readonly sramBytesPerCube: number;
  /** TCM capacity of each PE (at most `TCM_WINDOW_BYTES` = 2^28). */
  readonly tcmBytesPerPe: number;
  /** HBM page size: every HBM allocation starts on a page and occupies whole pages. Default 2 MiB. */
  readonly pageBytes?: number;
  /**
   * Bytes at the start of each PE's TCM kept for the PE scheduler's tile buffers; TCM allocations
   * come after them. Default 1 MiB.
   */
  readonly tcmReservedBytes?: number;
}

/** One allocator's entry in {@link DeviceMemory.stats}. */
export interface DeviceMemoryAllocatorStats extends AllocatorStats {
  /** `sip<S>.cube<C>.hbm`, `sip<S>.cube<C>.sram` or `sip<S>.cube<C>.pe<P>.tcm`. */
  readonly name: string;
  readonly space: MemorySpace;
  readonly sip: number;
  readonly cube: number;
  /** The PE of a TCM allocator; null for HBM and SRAM. */
  readonly pe: number | null;
  /** First device address the allocator manages. */
  readonly base: number;
  /** Bytes it manages. */
  readonly size: number;
}

interface DeviceAllocator {
  readonly allocator: FreeListAllocator;
  readonly space: MemorySpace;
  readonly sip: number;
  readonly cube: number;
  readonly pe: number | null;
}

const MIB = 2 ** 20;
/** Bytes of one memory's window in the device address layout: an address minus its offset is the window's base. */
const WINDOW_BYTES = 2 ** ADDRESS_LAYOUT.offsetBits;
const SRAM_ALIGNMENT = 64;
const TCM_ALIGNMENT = 16;
const OFFSET_LIMIT = 2 ** 40;

/**
 * The device's memory allocators: one per (SIP, cube) for HBM and for SRAM, one per PE for TCM,
 * created on first use. Addresses in and out are encoded device addresses (`encodeAddress` of
 * `@kb/topology`; TCM ones are `tcmAddress(sip, cube, pe, offset)` of `@kb/components`), so
 * `free` and `checkAccess` find the allocator by decoding the address.
 *
 * - HBM: page-aligned (`pageBytes`), whole pages.
 * - SRAM: 64-byte aligned.
 * - TCM: 16-byte aligned, after the first `tcmReservedBytes` of the PE's TCM.
 *
 * Throws `MEMORY_ALLOCATION` from the constructor when the layout does not fit the address layout.
 */
export class DeviceMemory {
  /** The layout with its defaults filled in. */
  readonly layout: Readonly<Required<DeviceMemoryLayout>>;
  private readonly allocators = new Map<number, DeviceAllocator>();
  /** What {@link tensorAt} answers for an allocation, made once per allocation. */
  private readonly tensorInfos = new WeakMap<Allocation, DeviceTensorInfo>();

  constructor(layout: DeviceMemoryLayout) {
    const full = { pageBytes: 2 * MIB, tcmReservedBytes: MIB, ...layout };
    checkLayoutField("sips", full.sips, 1, 32);
    checkLayoutField("cubesPerSip", full.cubesPerSip, 1, 64);
    checkLayoutField("pesPerCube", full.pesPerCube, 1, OFFSET_LIMIT / TCM_WINDOW_BYTES);
    checkLayoutField("hbmBytesPerCube", full.hbmBytesPerCube, 0, OFFSET_LIMIT);
    checkLayoutField("sramBytesPerCube", full.sramBytesPerCube, 0, OFFSET_LIMIT);
    checkLayoutField("tcmBytesPerPe", full.tcmBytesPerPe, 0, TCM_WINDOW_BYTES);
    checkLayoutField("pageBytes", full.pageBytes, 1, OFFSET_LIMIT);
    checkLayoutField("tcmReservedBytes", full.tcmReservedBytes, 0, full.tcmBytesPerPe);
    this.layout = Object.freeze(full);
  }

  /**
   * Allocates `bytes` of the HBM of cube `cube` of SIP `sip` and returns its device address, the
   * start of a page. `what` names it in messages; `tensor` records the dtype and shape of the
   * tensor it holds (see {@link tensorAt}).
   *
   * Throws `MEMORY_ALLOCATION` for a cube that does not exist, a bad size, or when it does not fit
   * (naming the request, the memory's capacity and its free bytes).
   */
  allocHbm(
    bytes: number,
    place: { readonly sip: number; readonly cube: number },
    what?: string,
    tensor?: AllocationTensor,
  ): number {
    return this.cubeAllocator("hbm", place, bytes, what).alloc(bytes, what, tensor);
  }

  /**
   * Allocates `bytes` of the shared SRAM of a cube and returns its device address (64-byte
   * aligned). `what` and `tensor` as for {@link allocHbm}.
   *
   * Throws `MEMORY_ALLOCATION` for a cube that does not exist, a bad size, or when it does not fit.
   */
  allocSram(
    bytes: number,
    place: { readonly sip: number; readonly cube: number },
    what?: string,
    tensor?: AllocationTensor,
  ): number {
    return this.cubeAllocator("sram", place, bytes, what).alloc(bytes, what, tensor);
  }

  /**
   * Allocates `bytes` of the TCM of PE `pe` of a cube, after its reserved bytes, and returns its
   * device address `tcmAddress(sip, cube, pe, offset)` (16-byte aligned).
   *
   * Throws `MEMORY_ALLOCATION` for a PE that does not exist, a bad size, or when it does not fit.
   */
  allocTcm(
    bytes: number,
    place: { readonly sip: number; readonly cube: number; readonly pe: number },
    what?: string,
  ): number {
    const { sip, cube, pe } = place;
    this.checkPlace(
      sip,
      cube,
      pe,
      "MEMORY_ALLOCATION",
      `cannot allocate ${describeBytes(bytes)} of TCM${describeWhat(what)}`,
    );
    return this.getAllocator("tcm", sip, cube, pe).alloc(bytes, what);
  }

  /**
   * Frees the allocation starting at device address `address`. `freedAt` (`file:line:col`) is
   * where the caller freed it; a later double free or access to the freed memory names it.
   *
   * Throws `MEMORY_ALLOCATION` when the address belongs to no allocator of this device (a cube or
   * PE that does not exist, a TCM reserved region, beyond a memory's capacity) or is not the start
   * of a live allocation.
   */
  free(address: number, freedAt?: string): void {
    const entry = this.locate(address, "MEMORY_ALLOCATION", "cannot free");
    const existing = this.allocators.get(entry.key);
    if (existing === undefined) {
      throw new KbError(
        "MEMORY_ALLOCATION",
        `${entry.name}: cannot free ${formatAddress(address)}: it was never allocated (nothing has been allocated in ${entry.name}). Free only addresses an alloc method returned.`,
      );
    }
    existing.allocator.free(address, freedAt);
  }

  /**
   * Checks that [address, address + bytes) lies within one live allocation of one memory.
   *
   * Throws `MEMORY_ACCESS` naming `what`, the range and the nearest allocation, or the reason the
   * address belongs to no memory.
   */
  checkAccess(address: number, bytes: number, what: string): void {
    const entry = this.locate(address, "MEMORY_ACCESS", what);
    const existing = this.allocators.get(entry.key);
    if (existing === undefined) {
      throw new KbError(
        "MEMORY_ACCESS",
        `${what}: ${formatRange(address, bytes)} (${String(bytes)} bytes) is not within a live allocation: nothing has been allocated in ${entry.name}. Allocate the buffer before accessing it.`,
      );
    }
    existing.allocator.checkAccess(address, bytes, what);
  }

  /** The live allocation containing device address `address`, or null (also for unknown memories). */
  allocationAt(address: number): Allocation | null {
    let key: number;
    try {
      key = this.locate(address, "MEMORY_ACCESS", "allocationAt").key;
    } catch {
      return null;
    }
    return this.allocators.get(key)?.allocator.allocationAt(address) ?? null;
  }

  /**
   * The live HBM or SRAM allocation holding device address `address`, as a tensor: its name (the
   * `what` given to the alloc method, else `allocation at 0x...`), dtype and shape (null for a
   * raw allocation), first address and bytes. Null for TCM, free memory, an allocation's padding
   * and addresses of no memory; never throws.
   *
   * One map lookup and a binary search over the memory's live allocations; the same object is
   * returned for every address of one allocation. Meant to be called once per kernel load/store.
   */
  tensorAt(address: number): DeviceTensorInfo | null {
    if (typeof address !== "number" || !Number.isSafeInteger(address) || address < 0) return null;
    const entry = this.allocators.get(address - (address % WINDOW_BYTES));
    if (entry === undefined || entry.space === "tcm") return null;
    const allocation = entry.allocator.allocationAt(address);
    if (allocation === null) return null;
    let info = this.tensorInfos.get(allocation);
    if (info === undefined) {
      const { dtype, shape } = allocation;
      const tensor = dtype !== undefined && shape !== undefined;
      info = Object.freeze({
        name: allocation.what ?? `allocation at ${formatAddress(allocation.start)}`,
        dtype: tensor ? dtype : null,
        shape: tensor ? shape : null,
        address: allocation.start,
        bytes: tensor ? shape.reduce((size, dim) => size * dim, 1) * DTYPE_BYTES[dtype] : allocation.bytes,
      });
      this.tensorInfos.set(allocation, info);
    }
    return info;
  }

  /** The statistics of every allocator created so far, lowest base address first. */
  stats(): DeviceMemoryAllocatorStats[] {
    return [...this.allocators.values()]
      .sort((a, b) => a.allocator.base - b.allocator.base)
      .map(({ allocator, space, sip, cube, pe }) => ({
        name: allocator.name,
        space,
        sip,
        cube,
        pe,
        base: allocator.base,
        size: allocator.size,
        ...allocator.stats(),
      }));
  }

  /** Frees every allocation of every memory. */
  reset(): void {
    this.allocators.clear();
  }

  private cubeAllocator(
    space: "hbm" | "sram",
    place: { readonly sip: number; readonly cube: number },
    bytes: number,
    what: string | undefined,
  ): FreeListAllocator {
    const { sip, cube } = place;
    this.checkPlace(
      sip,
      cube,
      null,
      "MEMORY_ALLOCATION",
      `cannot allocate ${describeBytes(bytes)} of ${space.toUpperCase()}${describeWhat(what)}`,
    );
    return this.getAllocator(space, sip, cube, null);
  }

  private getAllocator(space: MemorySpace, sip: number, cube: number, pe: number | null): FreeListAllocator {
    const key = windowKey(space, sip, cube, pe ?? 0);
    const existing = this.allocators.get(key);
    if (existing !== undefined) return existing.allocator;
    const name = allocatorName(space, sip, cube, pe);
    const { hbmBytesPerCube, sramBytesPerCube, tcmBytesPerPe, tcmReservedBytes, pageBytes } = this.layout;
    let base: number;
    let size: number;
    let alignment: number;
    let hint: string;
    if (space === "hbm") {
      base = encodeAddress({ sip, cube, space, offset: 0 });
      size = hbmBytesPerCube;
      alignment = pageBytes;
      hint = `Use a smaller shape or split the data over several cubes, place it on another cube with free space, free device tensors that are no longer needed, or give the topology more HBM (cube.hbm.capacity_bytes = ${hbmBytesPerCube}).`;
    } else if (space === "sram") {
      base = encodeAddress({ sip, cube, space, offset: 0 });
      size = sramBytesPerCube;
      alignment = SRAM_ALIGNMENT;
      hint = `Use a smaller shape, keep the data in HBM, free SRAM tensors that are no longer needed, or give the topology more SRAM (cube.sram.capacity_bytes = ${sramBytesPerCube}).`;
    } else {
      base = tcmAddress(sip, cube, pe ?? 0, tcmReservedBytes);
      size = tcmBytesPerPe - tcmReservedBytes;
      alignment = TCM_ALIGNMENT;
      hint = `Free TCM buffers that are no longer needed or use smaller tiles; the PE has ${tcmBytesPerPe} bytes of TCM of which the first ${tcmReservedBytes} are reserved for the PE scheduler's tile buffers (tcmReservedBytes).`;
    }
    if (size <= 0) {
      throw new KbError(
        "MEMORY_ALLOCATION",
        `${name}: cannot allocate: this memory has no allocatable bytes (${space === "tcm" ? `tcmBytesPerPe ${tcmBytesPerPe} - tcmReservedBytes ${tcmReservedBytes}` : `${space}BytesPerCube = 0`}). ${hint}`,
      );
    }
    const allocator = new FreeListAllocator({ name, base, size, alignment, hint });
    this.allocators.set(key, { allocator, space, sip, cube, pe });
    return allocator;
  }

  private checkPlace(
    sip: number,
    cube: number,
    pe: number | null,
    code: "MEMORY_ALLOCATION" | "MEMORY_ACCESS",
    doing: string,
  ): void {
    const { sips, cubesPerSip, pesPerCube } = this.layout;
    const problem = !isIndex(sip, sips)
      ? `SIP ${String(sip)} does not exist: the device has ${sips} SIP${sips === 1 ? "" : "s"} (0..${sips - 1})`
      : !isIndex(cube, cubesPerSip)
        ? `cube ${String(cube)} does not exist: each SIP has ${cubesPerSip} cube${cubesPerSip === 1 ? "" : "s"} (0..${cubesPerSip - 1})`
        : pe !== null && !isIndex(pe, pesPerCube)
          ? `PE ${String(pe)} does not exist: each cube has ${pesPerCube} PE${pesPerCube === 1 ? "" : "s"} (0..${pesPerCube - 1})`
          : null;
    if (problem !== null) throw new KbError(code, `${doing}: ${problem}.`);
  }

  /** Finds which allocator an address belongs to, or throws `code` saying why it belongs to none. */
  private locate(
    address: number,
    code: "MEMORY_ALLOCATION" | "MEMORY_ACCESS",
    doing: string,
  ): { key: number; name: string } {
    if (typeof address !== "number" || !Number.isSafeInteger(address) || address < 0) {
      throw new KbError(
        code,
        `${doing}: ${String(address)} is not a device address (an integer in [0, 2^53)). Use an address an alloc method returned.`,
      );
    }
    let decoded: ReturnType<typeof decodeAddress>;
    try {
      decoded = decodeAddress(address);
    } catch (cause) {
      throw new KbError(
        code,
        `${doing}: ${formatAddress(address)} is not a device address: its space bits name no memory. Use an address an alloc method returned.`,
        { cause },
      );
    }
    const { sip, cube, space, offset } = decoded;
    const at = `${doing}: ${formatAddress(address)} (sip ${sip}, cube ${cube}, ${space} offset ${formatAddress(offset)})`;
    const { sips, cubesPerSip } = this.layout;
    if (!isIndex(sip, sips) || !isIndex(cube, cubesPerSip)) {
      this.checkPlace(sip, cube, null, code, `${at} belongs to no memory of this device`);
    }
    if (space === "tcm") {
      const pe = Math.floor(offset / TCM_WINDOW_BYTES);
      const peOffset = offset % TCM_WINDOW_BYTES;
      this.checkPlace(sip, cube, pe, code, `${at} belongs to no memory of this device`);
      const { tcmBytesPerPe, tcmReservedBytes } = this.layout;
      const name = allocatorName("tcm", sip, cube, pe);
      if (peOffset >= tcmBytesPerPe) {
        throw new KbError(
          code,
          `${at} is offset ${formatAddress(peOffset)} in the TCM of PE ${pe}, beyond its ${tcmBytesPerPe} bytes (tcmBytesPerPe).`,
        );
      }
      if (peOffset < tcmReservedBytes) {
        throw new KbError(
          code,
          `${at} is offset ${formatAddress(peOffset)} in the TCM of PE ${pe}, inside its first ${tcmReservedBytes} bytes, which are reserved for the PE scheduler's tile buffers (tcmReservedBytes) and never allocated.`,
        );
      }
      return { key: windowKey("tcm", sip, cube, pe), name };
    }
    const capacity = space === "hbm" ? this.layout.hbmBytesPerCube : this.layout.sramBytesPerCube;
    if (offset >= capacity) {
      throw new KbError(
        code,
        `${at} is beyond the cube's ${capacity} bytes of ${space.toUpperCase()} (${space}BytesPerCube).`,
      );
    }
    return { key: windowKey(space, sip, cube, 0), name: allocatorName(space, sip, cube, null) };
  }
}

/** The address an allocator's window starts at: one key per (space, sip, cube) and per PE for TCM. */
function windowKey(space: MemorySpace, sip: number, cube: number, pe: number): number {
  return encodeAddress({ sip, cube, space, offset: space === "tcm" ? pe * TCM_WINDOW_BYTES : 0 });
}

function allocatorName(space: MemorySpace, sip: number, cube: number, pe: number | null): string {
  return space === "tcm" ? `sip${sip}.cube${cube}.pe${pe}.tcm` : `sip${sip}.cube${cube}.${space}`;
}

function checkLayoutField(name: string, value: number, min: number, max: number): void {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new KbError(
      "MEMORY_ALLOCATION",
      `device memory layout: ${name} must be an integer in [${min}, ${max}], got ${String(value)}.`,
    );
  }
}

function isIndex(value: number, count: number): boolean {
  return Number.isInteger(value) && value >= 0 && value < count;
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

function formatRange(start: number, bytes: number): string {
  return `[${formatAddress(start)}, ${typeof bytes === "number" ? formatAddress(start + bytes) : "?"})`;
}

function formatAddress(address: number): string {
  return typeof address === "number" && Number.isSafeInteger(address) && address >= 0
    ? `0x${address.toString(16)}`
    : String(address);
}

function describeWhat(what: string | undefined, tensor?: AllocationTensor): string {
  const described = tensor === undefined ? "" : ` (${tensor.dtype} ${formatShape(tensor.shape)})`;
  return what === undefined ? described && ` for a tensor${described}` : ` for "${what}"${described}`;
}

function describeBytes(bytes: number): string {
  return typeof bytes === "number" && Number.isSafeInteger(bytes) && bytes > 0
    ? formatBytes(bytes)
    : `${String(bytes)} bytes`;
}

/** `3145728 bytes (3 MiB)`: exact bytes, plus KiB, MiB or GiB from 1 KiB on (`4096 GiB`, not TiB). */
function formatBytes(bytes: number): string {
  const units = ["KiB", "MiB", "GiB"];
  let unit = "";
  let value = bytes;
  for (const name of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = name;
  }
  if (unit === "") return `${bytes} bytes`;
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(2);
  return `${bytes} bytes (${shown} ${unit})`;
}
