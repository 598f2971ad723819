import { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, Tensor } from "@kb/tensor";

/** Bytes per page of a {@link MemoryStore} by default: 64 KiB. */
export const MEMORY_STORE_PAGE_BYTES = 65536;

/** Options of a {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Bytes per page: a power of two from 4 KiB to 64 KiB (default {@link MEMORY_STORE_PAGE_BYTES}).
   * Smaller pages hold less of a sparsely written memory (a few KiB of scratch in each of thousands
   * of TCMs); larger ones copy big ranges with fewer page lookups.
   */
  readonly pageBytes?: number;
}

const ADDRESS_LIMIT = 2 ** 53;
/**
 * Bytes per slab at most: 32 MiB, the size from which the C allocator (glibc's largest mmap
 * threshold) maps a block of its own and gives it back to the system when it is freed. Slabs start
 * at 1 MiB and double with what the store holds.
 */
const MAX_SLAB_BYTES = 32 * 2 ** 20;
const MIN_SLAB_BYTES = 2 ** 20;

/** One block of pages. */
interface Slab {
  readonly buffer: ArrayBuffer;
  readonly capacity: number;
  /** Pages handed out fresh so far (the rest of the block is untouched: no memory yet). */
  next: number;
  /** Pages in use. */
  used: number;
  /** Pages given back, handed out again (zeroed) before fresh ones. */
  readonly free: Uint8Array[];
}

/**
 * Where a store's pages come from: blocks (slabs) of up to 512 pages, each page a view into its
 * slab. A page given back is reused; a slab whose pages are all given back is dropped, so its
 * memory returns to the system once collected. Pages of their own (a 64 KiB array each) would stay
 * with the C allocator after they are freed: a store that held a gigabyte once would keep the
 * process a gigabyte larger.
 */
class PageSlabs {
  private readonly slabs = new Map<ArrayBufferLike, Slab>();
  /** Slabs with pages given back, in the order they got them. */
  private readonly partial = new Set<Slab>();
  private current: Slab | null = null;
  private capacity = 0;

  constructor(private readonly pageBytes: number) {}

  /** A zeroed page. */
  take(): Uint8Array {
    const reused = this.partial.values().next();
    if (reused.done !== true) {
      const slab = reused.value;
      const page = slab.free.pop() as Uint8Array;
      if (slab.free.length === 0) this.partial.delete(slab);
      slab.used++;
      return page.fill(0);
    }
    let slab = this.current;
    if (slab === null || slab.next === slab.capacity) {
      const pages = this.pageBytes;
      const capacity = Math.min(MAX_SLAB_BYTES / pages, Math.max(MIN_SLAB_BYTES / pages, this.capacity));
      slab = { buffer: new ArrayBuffer(capacity * pages), capacity, next: 0, used: 0, free: [] };
      this.slabs.set(slab.buffer, slab);
      this.capacity += capacity;
      this.current = slab;
    }
    const page = new Uint8Array(slab.buffer, slab.next * this.pageBytes, this.pageBytes);
    slab.next++;
    slab.used++;
    return page;
  }

  /** Takes a page back (the store no longer holds it). */
  give(page: Uint8Array): void {
    const slab = this.slabs.get(page.buffer) as Slab;
    slab.used--;
    if (slab.used > 0) {
      slab.free.push(page);
      this.partial.add(slab);
      return;
    }
    this.slabs.delete(slab.buffer);
    this.partial.delete(slab);
    this.capacity -= slab.capacity;
    if (this.current === slab) this.current = null;
  }
}

/**
 * The data of device memory during phase 2 (ADR-0020 D7): byte-addressable, sparse, keyed by
 * encoded device address (the memory space is part of the address, so there is no `space`
 * argument).
 *
 * Bytes live in pages (64 KiB unless {@link MemoryStoreOptions.pageBytes} says otherwise) created on the first write that touches them; bytes never written
 * read as 0. Pages are carved out of blocks of up to 32 MiB, and a block none of whose pages is
 * held any more is released ({@link discard}), so the process's memory follows what the store
 * holds now rather than the most it ever held. Every range is copied page slice by page slice with `Uint8Array.set`, so large
 * contiguous reads and writes cost one `memcpy` per page.
 *
 * Semantics are byte-granular: a later write wins byte by byte, whatever the earlier write's size.
 * Reading with another element type than the one written is a reinterpret cast.
 *
 * **When to use**: the canonical state of a data-execution run; tensors are views the executor
 * builds over what `read` returns.
 *
 * **Gotchas**: the store does not know what is allocated; check accesses against the allocator
 * first. All methods throw `MEMORY_ACCESS` for an address that is not an integer in [0, 2^53), a
 * length that is not an integer >= 0, or a range that runs past 2^53.
 */
export class MemoryStore {
  /** Bytes per page (see {@link MemoryStoreOptions.pageBytes}). */
  readonly pageBytes: number;
  private readonly pages = new Map<number, Uint8Array>();
  private slabs: PageSlabs;

  /** Throws `MEMORY_ALLOCATION` for a page size that is not a power of two from 4 KiB to 64 KiB. */
  constructor(options: MemoryStoreOptions = {}) {
    const pageBytes = options.pageBytes ?? MEMORY_STORE_PAGE_BYTES;
    if (
      !(
        Number.isInteger(pageBytes) &&
        pageBytes >= 4096 &&
        pageBytes <= 65536 &&
        (pageBytes & (pageBytes - 1)) === 0
      )
    ) {
      throw new KbError(
        "MEMORY_ALLOCATION",
        `MemoryStore: pageBytes must be a power of two from 4096 to 65536, got ${String(pageBytes)}.`,
      );
    }
    this.pageBytes = pageBytes;
    this.slabs = new PageSlabs(pageBytes);
  }
  private written = 0;

  /** Bytes stored so far by `write`, `writeTyped`, `fill` and `copy` (destination bytes), since the last `clear`. */
  get bytesWritten(): number {
    return this.written;
  }

  /** Pages currently held (each {@link pageBytes} bytes). */
  get pageCount(): number {
    return this.pages.size;
  }

  /** Stores `bytes` at [address, address + bytes.length); copies them, so the caller may reuse `bytes`. */
  write(address: number, bytes: Uint8Array): void {
    const length = bytes.length;
    checkRange("write", address, length);
    let position = 0;
    while (position < length) {
      const at = address + position;
      const offset = at % this.pageBytes;
      const chunk = Math.min(this.pageBytes - offset, length - position);
      this.pageFor(at).set(bytes.subarray(position, position + chunk), offset);
      position += chunk;
    }
    this.written += length;
  }

  /** A new array with the `length` bytes at `address` (0 where never written). */
  read(address: number, length: number): Uint8Array {
    checkRange("read", address, length);
    return this.readInto(address, new Uint8Array(length));
  }

  /** Fills `target` with the bytes at [address, address + target.length) and returns it. */
  readInto(address: number, target: Uint8Array): Uint8Array {
    const length = target.length;
    checkRange("read", address, length);
    let position = 0;
    while (position < length) {
      const at = address + position;
      const offset = at % this.pageBytes;
      const chunk = Math.min(this.pageBytes - offset, length - position);
      const page = this.pages.get((at - offset) / this.pageBytes);
      if (page === undefined) target.fill(0, position, position + chunk);
      else target.set(page.subarray(offset, offset + chunk), position);
      position += chunk;
    }
    return target;
  }

  /** Sets the `length` bytes at `address` to `value` (an integer in [0, 255]). */
  fill(address: number, length: number, value: number): void {
    checkRange("fill", address, length);
    if (!Number.isInteger(value) || value < 0 || value > 255) {
      throw new KbError(
        "MEMORY_ACCESS",
        `fill at ${hex(address)}: the value must be a byte, an integer in [0, 255], got ${String(value)}.`,
      );
    }
    let position = 0;
    while (position < length) {
      const at = address + position;
      const offset = at % this.pageBytes;
      const chunk = Math.min(this.pageBytes - offset, length - position);
      const index = (at - offset) / this.pageBytes;
      // zeros need no page: a missing page already reads as zeros
      const page = value === 0 ? this.pages.get(index) : this.pageFor(at);
      page?.fill(value, offset, offset + chunk);
      position += chunk;
    }
    this.written += length;
  }

  /**
   * Copies `length` bytes from `source` to `destination` with memmove semantics: when the ranges
   * overlap, the destination receives the source bytes as they were before the copy.
   */
  copy(source: number, destination: number, length: number): void {
    checkRange("copy source", source, length);
    checkRange("copy destination", destination, length);
    if (length === 0 || source === destination) {
      this.written += length;
      return;
    }
    // Forward when the destination is below the source, backward otherwise, so an overlapping
    // chunk never reads bytes an earlier chunk already overwrote. A chunk crosses no page boundary
    // on either side; `set` itself is memmove-safe within a page.
    if (destination < source) {
      let position = 0;
      while (position < length) {
        const chunk = Math.min(
          this.pageBytes - ((source + position) % this.pageBytes),
          this.pageBytes - ((destination + position) % this.pageBytes),
          length - position,
        );
        this.copyChunk(source + position, destination + position, chunk);
        position += chunk;
      }
    } else {
      let remaining = length;
      while (remaining > 0) {
        const sourceEnd = source + remaining;
        const destinationEnd = destination + remaining;
        const chunk = Math.min(
          sourceEnd % this.pageBytes || this.pageBytes,
          destinationEnd % this.pageBytes || this.pageBytes,
          remaining,
        );
        this.copyChunk(sourceEnd - chunk, destinationEnd - chunk, chunk);
        remaining -= chunk;
      }
    }
    this.written += length;
  }

  /**
   * {@link write} of whole elements of `elementBytes` bytes at an address aligned to the element
   * size (ADR-0020 D7: minimum alignment = dtype size).
   *
   * Throws `MEMORY_ACCESS` when `address` is not a multiple of `elementBytes` or `bytes` is not a
   * whole number of elements.
   */
  writeTyped(address: number, bytes: Uint8Array, elementBytes: number): void {
    checkTyped("writeTyped", address, bytes.length, elementBytes);
    this.write(address, bytes);
  }

  /**
   * {@link read} of whole elements of `elementBytes` bytes at an address aligned to the element
   * size. The result has its own buffer at byte offset 0, so `new Float32Array(result.buffer)`
   * views it without a copy.
   *
   * Throws `MEMORY_ACCESS` when `address` is not a multiple of `elementBytes` or `length` is not a
   * whole number of elements.
   */
  readTyped(address: number, length: number, elementBytes: number): Uint8Array {
    checkTyped("readTyped", address, length, elementBytes);
    return this.read(address, length);
  }

  /**
   * True when any byte of `[address, address + length)` may be non-zero: a page holding it was
   * written. False means the whole range reads as zeros (no page was ever created there).
   */
  touched(address: number, length: number): boolean {
    checkRange("touched", address, length);
    if (length === 0) return false;
    const first = (address - (address % this.pageBytes)) / this.pageBytes;
    const last = (address + length - 1 - ((address + length - 1) % this.pageBytes)) / this.pageBytes;
    if (last - first + 1 > this.pages.size) {
      for (const index of this.pages.keys()) if (index >= first && index <= last) return true;
      return false;
    }
    for (let index = first; index <= last; index++) if (this.pages.has(index)) return true;
    return false;
  }

  /**
   * Forgets the bytes of `[address, address + length)`: they read as 0 again, and the pages the
   * range covers whole are dropped, so their memory can be reclaimed (a page it covers in part is
   * zeroed there). `bytesWritten` does not change. The runtime calls it for a freed device tensor
   * in both phases, which keeps a store's size proportional to what is live.
   *
   * Costs O(pages in the range), or O(pages held) when the range spans more pages than the store
   * holds. Throws `MEMORY_ACCESS` for a bad range, as every method does.
   */
  discard(address: number, length: number): void {
    checkRange("discard", address, length);
    if (length === 0 || this.pages.size === 0) return;
    const end = address + length;
    const first = (address - (address % this.pageBytes)) / this.pageBytes;
    const last = (end - 1 - ((end - 1) % this.pageBytes)) / this.pageBytes;
    if (last - first + 1 > this.pages.size) {
      for (const index of [...this.pages.keys()]) {
        if (index >= first && index <= last) this.discardInPage(index, address, end);
      }
      return;
    }
    for (let index = first; index <= last; index++) this.discardInPage(index, address, end);
  }

  /**
   * Writes a host tensor at `address` (its bytes; the address must be aligned to its element
   * size). Byte semantics: it overwrites exactly `tensor.nbytes` bytes, whatever was there.
   */
  writeTensor(address: number, tensor: Tensor): void {
    this.writeTyped(address, tensor.bytes, DTYPE_BYTES[tensor.dtype]);
  }

  /**
   * Reads `shape` elements of `dtype` at `address` as a host tensor (a copy). The bytes decide:
   * reading what was written as another dtype reinterprets it, and a read may cover parts of
   * several earlier writes or never-written bytes (zeros). The address must be aligned to the
   * element size (`MEMORY_ACCESS` otherwise).
   */
  readTensor(address: number, shape: readonly number[], dtype: Dtype): Tensor {
    const size = DTYPE_BYTES[dtype];
    const bytes = this.readTyped(address, shape.reduce((a, b) => a * b, 1) * size, size);
    return new Tensor(shape, dtype, bytes);
  }

  /** Forgets every byte (all memory reads as 0 again) and resets `bytesWritten`. */
  clear(): void {
    this.pages.clear();
    this.slabs = new PageSlabs(this.pageBytes);
    this.written = 0;
  }

  /** The page holding `address`, created (zero-filled) if missing. */
  private pageFor(address: number): Uint8Array {
    const index = (address - (address % this.pageBytes)) / this.pageBytes;
    let page = this.pages.get(index);
    if (page === undefined) {
      page = this.slabs.take();
      this.pages.set(index, page);
    }
    return page;
  }

  /** The part of {@link discard} in page `index`: drops the page when the range covers it whole. */
  private discardInPage(index: number, start: number, end: number): void {
    const page = this.pages.get(index);
    if (page === undefined) return;
    const pageStart = index * this.pageBytes;
    const from = Math.max(start, pageStart) - pageStart;
    const to = Math.min(end, pageStart + this.pageBytes) - pageStart;
    if (from === 0 && to === this.pageBytes) {
      this.pages.delete(index);
      this.slabs.give(page);
    } else {
      page.fill(0, from, to);
    }
  }

  /** Copies a range that crosses no page boundary on either side. */
  private copyChunk(source: number, destination: number, length: number): void {
    const sourceOffset = source % this.pageBytes;
    const destinationOffset = destination % this.pageBytes;
    const sourcePage = this.pages.get((source - sourceOffset) / this.pageBytes);
    if (sourcePage === undefined) {
      this.pages
        .get((destination - destinationOffset) / this.pageBytes)
        ?.fill(0, destinationOffset, destinationOffset + length);
      return;
    }
    this.pageFor(destination).set(
      sourcePage.subarray(sourceOffset, sourceOffset + length),
      destinationOffset,
    );
  }
}

function checkRange(operation: string, address: number, length: number): void {
  if (typeof address !== "number" || !Number.isInteger(address) || address < 0 || address >= ADDRESS_LIMIT) {
    throw new KbError(
      "MEMORY_ACCESS",
      `${operation} at ${hex(address)} (length ${String(length)}): the address must be an integer in [0, 2^53). Use an encoded device address.`,
    );
  }
  if (typeof length !== "number" || !Number.isInteger(length) || length < 0) {
    throw new KbError(
      "MEMORY_ACCESS",
      `${operation} at ${hex(address)}: the length must be an integer >= 0, got ${String(length)}.`,
    );
  }
  if (length > ADDRESS_LIMIT - address) {
    throw new KbError(
      "MEMORY_ACCESS",
      `${operation} at ${hex(address)} (length ${length}): the range runs past the end of the address space, 2^53; ranges do not wrap around.`,
    );
  }
}

function checkTyped(operation: string, address: number, length: number, elementBytes: number): void {
  if (!Number.isInteger(elementBytes) || elementBytes <= 0) {
    throw new KbError(
      "MEMORY_ACCESS",
      `${operation} at ${hex(address)} (length ${String(length)}): the element size must be a positive integer number of bytes, got ${String(elementBytes)}.`,
    );
  }
  checkRange(operation, address, length);
  if (address % elementBytes !== 0) {
    throw new KbError(
      "MEMORY_ACCESS",
      `${operation} at ${hex(address)} (length ${length}): the address is not aligned to the element size of ${elementBytes} bytes (it is ${address % elementBytes} bytes past a multiple). Tensor data must start at a multiple of its dtype size (alignment = dtype size); place it at ${hex(address - (address % elementBytes))} or ${hex(address - (address % elementBytes) + elementBytes)}.`,
    );
  }
  if (length % elementBytes !== 0) {
    throw new KbError(
      "MEMORY_ACCESS",
      `${operation} at ${hex(address)} (length ${length}): the length is not a whole number of ${elementBytes}-byte elements.`,
    );
  }
}

function hex(address: number): string {
  return typeof address === "number" && Number.isInteger(address) && address >= 0
    ? `0x${address.toString(16)}`
    : String(address);
}
