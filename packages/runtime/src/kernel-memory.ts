import type { MemoryStore } from "@kb/data-executor";
import type { KernelMemory, LoadObservation } from "@kb/tl";
import { decodeAddress } from "@kb/topology";
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
  /** Where `observeLoad` keeps each completed load; null for a memory without `observeLoad`. */
  readonly observations: LoadObservation[] | null;
}

/**
 * The device memory as a kernel's `tl` sees it, over a simulator's state (see
 * `Simulator.kernelMemory` for the contract). `check` passes TCM ranges (the kernel's own
 * scratch) and throws `MEMORY_ACCESS` for an HBM/SRAM range outside one live allocation.
 */
export function createKernelMemory(parts: KernelMemoryParts): KernelMemory {
  const { store, device, pending, observations } = parts;
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
    markPending: (address, length) => pending.add(address, address + length),
    isPending: (address, length) => pending.overlaps(address, address + length),
  };
  if (observations === null) return memory;
  return {
    ...memory,
    // The bytes are copied: the kernel owns the array it received and may hand it on.
    observeLoad: (load) => observations.push({ ...load, bytes: load.bytes.slice() }),
  };
}
