import type { MemoryStore } from "@kb/data-executor";
import type { KernelMemory, LoadObservation } from "@kb/tl";
import { decodeAddress } from "@kb/topology";
import type { TimingOnlyRanges } from "./memory/deferred-data.js";
import type { DeviceMemory } from "./memory/device-memory.js";
import type { PendingRanges } from "./memory/pending-ranges.js";

/** What {@link createKernelMemory} works on: a simulator's bytes, allocators and pending ranges. */
export interface KernelMemoryParts {
  /** The device bytes `read` and `write` access. */
  readonly store: MemoryStore;
  /** The allocators `check` and `tensorAt` ask. */
  readonly device: DeviceMemory;
  /** The bytes phase 1 does not know; `write` clears the bytes it writes. */
  readonly pending: PendingRanges;
  /** The timing-only host data `describePending` names. */
  readonly timingOnly?: TimingOnlyRanges;
  /** Where `observeLoad` keeps each completed load; null for a memory without `observeLoad`. */
  readonly observations: LoadObservation[] | null;
}

/**
 * Drops the store's pages of HBM and SRAM that `[address, address + length)` (just marked
 * pending) made wholly pending: phase 1 never reads pending bytes (a load of them gives a pending
 * tile), so holding them only costs memory. A tensor a kernel overwrote with computed values (an
 * all-reduce's buffers) then costs phase 1 nothing. TCM keeps its pages: it is small, and its
 * scratch is rewritten all the time.
 */
function dropUnknownPages(store: MemoryStore, pending: PendingRanges, address: number, length: number): void {
  if (length <= 0) return;
  const page = store.pageBytes;
  const interval = pending.intervalAt(address);
  if (interval === null || interval[1] - interval[0] < page) return;
  if (decodeAddress(address).space === "tcm") return;
  const start = Math.max(roundUp(interval[0], page), address - (address % page));
  const end = Math.min(interval[1] - (interval[1] % page), roundUp(address + length, page));
  if (end > start) store.discard(start, end - start);
}

function roundUp(address: number, page: number): number {
  const remainder = address % page;
  return remainder === 0 ? address : address + (page - remainder);
}

/**
 * The device memory as a kernel's `tl` sees it, over a simulator's state (see
 * `Simulator.kernelMemory` for the contract). `check` passes TCM ranges (the kernel's own
 * scratch) and throws `MEMORY_ACCESS` for an HBM/SRAM range outside one live allocation.
 */
export function createKernelMemory(parts: KernelMemoryParts): KernelMemory {
  const { store, device, pending, observations, timingOnly } = parts;
  const memory: KernelMemory = {
    check: (address, length, what) => {
      if (decodeAddress(address).space === "tcm") return;
      device.checkAccess(address, length, what);
    },
    tensorAt: (address) => device.tensorAt(address),
    read: (address, length) => store.read(address, length),
    write: (address, bytes) => {
      store.write(address, bytes);
      pending.clear(address, address + bytes.length);
    },
    markPending: (address, length) => {
      pending.add(address, address + length);
      dropUnknownPages(store, pending, address, length);
    },
    isPending: (address, length) => pending.overlaps(address, address + length),
    describePending: (address) => timingOnly?.describe(address) ?? null,
  };
  if (observations === null) return memory;
  return {
    ...memory,
    // The bytes are copied: the kernel owns the array it received and may hand it on.
    observeLoad: (load) => observations.push({ ...load, bytes: load.bytes.slice() }),
  };
}
