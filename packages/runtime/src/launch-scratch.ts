import { TCM_WINDOW_BYTES } from "@kb/components";
import type { KernelPlacement } from "@kb/tl";
import type { DeviceMemory } from "./memory/device-memory.js";

/**
 * The TCM scratch a launch gives a kernel on `placement`'s PE when `SimulatorOptions.scratchBytes`
 * is not set: what is left of the PE's TCM (within the TCM window, minus the scheduler's reserve
 * and what is allocated there already), at most 2 MiB.
 * @internal
 */
export function defaultScratchBytes(device: DeviceMemory, placement: KernelPlacement): number {
  const { tcmBytesPerPe, tcmReservedBytes } = device.layout;
  // One lookup per PE placed (stats() of every allocator made launches of 8192 PEs quadratic).
  const used = device.usedBytes("tcm", placement.sip, placement.cube, placement.peIndex);
  return Math.max(
    0,
    Math.min(2 * 2 ** 20, Math.min(tcmBytesPerPe, TCM_WINDOW_BYTES) - tcmReservedBytes - used),
  );
}
