import { TCM_WINDOW_BYTES, tcmAddress } from "@kb/components";
import { KbError } from "@kb/errors";
import { DTYPE_BYTES } from "@kb/tensor";
import type { DeviceTensorInfo } from "@kb/tl";
import { ADDRESS_LAYOUT, decodeAddress, encodeAddress, type MemorySpace } from "@kb/topology";
import { describeBytes, formatAddress, formatRange } from "./format.js";
import {
  type Allocation,
  type AllocationTensor,
  type AllocatorStats,
  describeWhat,
  FreeListAllocator,
} from "./free-list.js";

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
   * `{ reuse: false }` keeps its bytes from being allocated again (see `FreeListAllocator.free`).
   *
   * Throws `MEMORY_ALLOCATION` when the address belongs to no allocator of this device (a cube or
   * PE that does not exist, a TCM reserved region, beyond a memory's capacity) or is not the start
   * of a live allocation.
   */
  free(address: number, freedAt?: string, options: { readonly reuse?: boolean } = {}): void {
    const entry = this.locate(address, "MEMORY_ALLOCATION", "cannot free");
    const existing = this.allocators.get(entry.key);
    if (existing === undefined) {
      throw new KbError(
        "MEMORY_ALLOCATION",
        `${entry.name}: cannot free ${formatAddress(address)}: it was never allocated (nothing has been allocated in ${entry.name}). Free only addresses an alloc method returned.`,
      );
    }
    existing.allocator.free(address, freedAt, options);
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

  /**
   * Bytes allocated now in one memory: a cube's `hbm` or `sram` (`pe` omitted) or a PE's `tcm`;
   * 0 where nothing was ever allocated. One lookup, unlike {@link stats}.
   */
  usedBytes(space: MemorySpace, sip: number, cube: number, pe: number | null = null): number {
    const entry = this.allocators.get(windowKey(space, sip, cube, pe ?? 0));
    return entry === undefined ? 0 : entry.allocator.stats().used;
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
