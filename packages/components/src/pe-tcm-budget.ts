import { TCM_WINDOW_BYTES } from "@kb/topology";
import { ipcqRegionBytes } from "./ipcq.js";

/** How a PE's TCM is shared out, in bytes (see {@link peTcmBudget}). */
export interface PeTcmBudget {
  /** `pe_tcm` params `capacity_bytes` (4 MiB when the impl has no such param). */
  readonly capacityBytes: number;
  /** The IPCQ slots at the end of the TCM: directions x `pe_cpu` `ipcq_slots` x `ipcq_slot_bytes` (0 without). */
  readonly ipcqBytes: number;
  /** `pe_scheduler` params `reserved_tcm_bytes`, the tile buffers at the start (1 MiB without). */
  readonly reservedBytes: number;
  /** What the device memory manages: capacity minus the IPCQ slots (reserved bytes included). */
  readonly usableBytes: number;
}

/**
 * The TCM budget of a PE from the parsed params of its `pe_cpu`, `pe_scheduler` and `pe_tcm`
 * (any of them may be an impl without these params: then the defaults above apply). What the
 * runtime's device memory is laid out from.
 */
export function peTcmBudget(params: {
  readonly cpu: Readonly<Record<string, unknown>>;
  readonly scheduler: Readonly<Record<string, unknown>>;
  readonly tcm: Readonly<Record<string, unknown>>;
}): PeTcmBudget {
  const capacity = Number(params.tcm.capacity_bytes);
  const reserved = Number(params.scheduler.reserved_tcm_bytes);
  const capacityBytes = Number.isFinite(capacity) ? capacity : 4 * 2 ** 20;
  const ipcqBytes =
    params.cpu.ipcq_slots === undefined
      ? 0
      : ipcqRegionBytes(Number(params.cpu.ipcq_slots), Number(params.cpu.ipcq_slot_bytes));
  return {
    capacityBytes,
    ipcqBytes,
    reservedBytes: Number.isFinite(reserved) ? reserved : 2 ** 20,
    usableBytes: capacityBytes - ipcqBytes,
  };
}

/** Which param a {@link peTcmBudgetProblems} problem is best fixed at. */
export type PeTcmParam = "pe_tcm.capacity_bytes" | "pe_scheduler.reserved_tcm_bytes";

/**
 * What is wrong with a PE's TCM budget, in the topology's words (empty when nothing is): a
 * capacity beyond the PE's TCM window of the device address (`TCM_WINDOW_BYTES`, 256 MiB), or
 * IPCQ slots plus the scheduler's reserved TCM that do not fit the capacity.
 */
export function peTcmBudgetProblems(
  budget: PeTcmBudget,
): { readonly param: PeTcmParam; readonly message: string }[] {
  const { capacityBytes: capacity, ipcqBytes: ipcq, reservedBytes: reserved, usableBytes: usable } = budget;
  if (capacity > TCM_WINDOW_BYTES) {
    return [
      {
        param: "pe_tcm.capacity_bytes",
        message: `pe_tcm capacity_bytes ${capacity} is more than a PE's TCM window in the device address (${TCM_WINDOW_BYTES} bytes, 256 MiB). Set it to ${TCM_WINDOW_BYTES} or less.`,
      },
    ];
  }
  if (reserved <= usable) return [];
  const slots =
    ipcq === 0 ? "" : ` minus its IPCQ slots (${ipcq}: pe_cpu ipcq_slots x ipcq_slot_bytes per direction)`;
  return [
    {
      param: "pe_scheduler.reserved_tcm_bytes",
      message: `the PE's TCM (pe_tcm capacity_bytes ${capacity})${slots} leaves ${Math.max(0, usable)} bytes, less than the scheduler's reserved TCM (pe_scheduler reserved_tcm_bytes ${reserved}). Raise pe_tcm capacity_bytes to at least ${reserved + ipcq}, or lower reserved_tcm_bytes to at most ${Math.max(0, usable)}${ipcq === 0 ? "" : " (or use fewer or smaller IPCQ slots)"}.`,
    },
  ];
}
