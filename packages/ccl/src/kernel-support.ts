import { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import type { TensorHandle, TL } from "@kb/tl";
import type { RankGroup } from "./ranks.js";

/** A reduction of the collectives: elementwise `tl.add`, `tl.maximum` or `tl.minimum`. */
export type ReduceOp = "sum" | "max" | "min";

/** The reductions, in the order messages list them. */
export const REDUCE_OPS: readonly ReduceOp[] = ["sum", "max", "min"];

/** The element types the collectives move and reduce. */
export type CollectiveDtype = Extract<Dtype, "f32" | "f16" | "bf16">;

/** The element types the collectives move and reduce. */
export const COLLECTIVE_DTYPES: readonly CollectiveDtype[] = ["f32", "f16", "bf16"];

/**
 * A rank's buffer in device memory (HBM or SRAM): `count` contiguous elements of `dtype` at
 * `address`. Every rank has its own; kernels take the list indexed by rank.
 */
export interface Region {
  readonly address: number;
  readonly count: number;
  readonly dtype: Dtype;
}

/** What every collective kernel takes. */
export interface CollectiveArgs {
  /** The ranks and the ring's hops. */
  readonly group: RankGroup;
  /** One buffer per rank (`buffers[rank]`), all of the same count and dtype. */
  readonly buffers: readonly Region[];
  /**
   * Largest payload of one `tl.send`, bytes: the IPCQ slot size (pe_cpu param `ipcq_slot_bytes`,
   * 16 KiB by default) or less. Kernels cut their messages into chunks of at most this many bytes.
   */
  readonly slotBytes: number;
  /**
   * Messages a kernel may send to a neighbour ahead of what it has received itself: the IPCQ's
   * slots per queue (pe_cpu param `ipcq_slots`, 4 by default) or fewer; default 1. Kernels that
   * stream use it to keep the link busy (`queueSlots - 1` messages in flight while they wait for
   * their own); more than the hardware has could deadlock a ring.
   */
  readonly queueSlots?: number;
}

/** `allReduce`: every rank's buffer becomes the elementwise reduction of all buffers. */
export interface AllReduceArgs extends CollectiveArgs {
  readonly op: ReduceOp;
}

/**
 * `reduceScatter`: each rank's buffer is `size` equal segments; rank `r` gets the reduction of
 * segment `r` of every buffer, in `outputs[r]` (`count / size` elements) or, without outputs, in
 * place in segment `r` of its own buffer.
 */
export interface ReduceScatterArgs extends CollectiveArgs {
  readonly op: ReduceOp;
  readonly outputs?: readonly Region[];
}

/**
 * `allGather`: each rank's buffer is `size` equal segments; segment `r` of every buffer becomes
 * rank `r`'s contribution: `inputs[r]` (`count / size` elements) or, without inputs, what segment
 * `r` of rank `r`'s buffer holds already (in place).
 */
export interface AllGatherArgs extends CollectiveArgs {
  readonly inputs?: readonly Region[];
}

/** `broadcast`: every rank's buffer becomes a copy of rank `root`'s. */
export interface BroadcastArgs extends CollectiveArgs {
  readonly root: number;
}

/**
 * `reduce`: rank `root`'s buffer becomes the elementwise reduction of all buffers; the other
 * ranks' buffers are left as they were.
 */
export interface ReduceArgs extends CollectiveArgs {
  readonly op: ReduceOp;
  readonly root: number;
}

/** `gather`: `gathered[r]` (in rank `root`'s memory, `buffers[r]`'s count) becomes rank `r`'s buffer. */
export interface GatherArgs extends CollectiveArgs {
  readonly root: number;
  readonly gathered: readonly Region[];
}

/** `scatter`: rank `r`'s buffer becomes `pieces[r]` (in rank `root`'s memory, `buffers[r]`'s count). */
export interface ScatterArgs extends CollectiveArgs {
  readonly root: number;
  readonly pieces: readonly Region[];
}

/**
 * `allToAll`: block `sends[s][d]` (in rank `s`'s memory) becomes `recvs[d][s]` (in rank `d`'s),
 * for every pair of ranks; each pair's two blocks have the same count and dtype, and the counts
 * may differ from pair to pair (all-to-all-v).
 */
export interface AllToAllArgs extends Omit<CollectiveArgs, "buffers"> {
  readonly sends: readonly (readonly Region[])[];
  readonly recvs: readonly (readonly Region[])[];
}

/** A part of a buffer: the first element and the number of elements. */
export interface Span {
  readonly start: number;
  readonly count: number;
}

/**
 * Part `index` of `count` elements cut into `parts` nearly equal parts (the first `count % parts`
 * one longer). Every rank computes the same cuts, so sender and receiver agree on each message's
 * size without telling each other.
 */
export function split(count: number, parts: number, index: number): Span {
  const base = Math.floor(count / parts);
  const extra = count % parts;
  return { start: index * base + Math.min(index, extra), count: base + (index < extra ? 1 : 0) };
}

/** Elements of `dtype` that fit one message of `slotBytes` (at least 1). */
export function slotElements(slotBytes: number, dtype: Dtype): number {
  return Math.max(1, Math.floor(slotBytes / DTYPE_BYTES[dtype]));
}

/** Chunks needed to send `count` elements of `dtype` in messages of at most `slotBytes` (at least 1). */
export function chunkCount(count: number, slotBytes: number, dtype: Dtype): number {
  return Math.max(1, Math.ceil(count / slotElements(slotBytes, dtype)));
}

/**
 * `op` of two TCM handles of the same shape and dtype: `tl.add`, `tl.maximum` or `tl.minimum`,
 * into `out` when given (else fresh scratch).
 */
export function combine(
  tl: TL,
  op: ReduceOp,
  a: TensorHandle,
  b: TensorHandle,
  out?: TensorHandle,
): Promise<TensorHandle> {
  const options = out === undefined ? undefined : { out };
  switch (op) {
    case "sum":
      return tl.add(a, b, options);
    case "max":
      return tl.maximum(a, b, options);
    case "min":
      return tl.minimum(a, b, options);
    default:
      throw kernelError(tl, `unknown reduction ${JSON.stringify(op)}; use ${REDUCE_OPS.join(", ")}.`);
  }
}

/**
 * `tl.recv` of `count` elements from `direction`, copied out of the IPCQ slot into fresh TCM
 * scratch during the receive (`copy_to_dst`). Why not read the payload in its slot: the slot's
 * credit goes back to the sender when the receive completes, so a sender that is `ipcq_slots`
 * messages ahead may overwrite the slot before the next command reads it. Phase 1 would not
 * notice (a received handle's data is taken at the receive), phase 2 would: it replays memory in
 * time order. The copy costs no extra simulated time on the built-in PE_CPU (the slot read is
 * charged either way), only `count` elements of scratch until the next `tl.scratchRelease`.
 */
export function recvToScratch(tl: TL, direction: string, count: number, dtype: Dtype): Promise<TensorHandle> {
  // tl.zeros only reserves the scratch: a constant is written to TCM when a command first reads
  // it, and no command reads this one.
  const landing = tl.zeros([count], dtype);
  return tl.recv(direction, { shape: [count], dtype, dstAddr: landing.address });
}

/** Device address of element `index` of `region`. */
export function elementAddress(region: Region, index: number): number {
  return region.address + index * DTYPE_BYTES[region.dtype];
}

/**
 * The buffer of `rank` after checking what every collective kernel relies on: one buffer per
 * rank, the same count and dtype everywhere, a dtype the collectives support, a usable slot size.
 * Throws `RUNTIME_INVALID` located at the kernel instance.
 */
export function bufferOf(tl: TL, args: CollectiveArgs, rank: number): Region {
  const { group, buffers, slotBytes } = args;
  if (!Array.isArray(buffers) || buffers.length !== group.size) {
    throw kernelError(
      tl,
      `expected one buffer per rank (${group.size}), got ${Array.isArray(buffers) ? buffers.length : String(buffers)}.`,
    );
  }
  const first = buffers[0] as Region;
  for (const [r, buffer] of buffers.entries()) {
    if (buffer.count !== first.count || buffer.dtype !== first.dtype) {
      throw kernelError(
        tl,
        `buffers differ: rank 0 has ${first.count} x ${first.dtype}, rank ${r} has ${buffer.count} x ${buffer.dtype}; every rank needs the same count and dtype.`,
      );
    }
  }
  if (!(COLLECTIVE_DTYPES as readonly string[]).includes(first.dtype)) {
    throw kernelError(
      tl,
      `dtype ${first.dtype} is not supported by the collectives; use ${COLLECTIVE_DTYPES.join(", ")}.`,
    );
  }
  if (!Number.isInteger(slotBytes) || slotBytes < DTYPE_BYTES[first.dtype]) {
    throw kernelError(tl, `slotBytes must be a whole number of at least one element, got ${slotBytes}.`);
  }
  const slots = args.queueSlots;
  if (slots !== undefined && !(Number.isInteger(slots) && slots >= 1)) {
    throw kernelError(tl, `queueSlots must be a whole number >= 1 (pe_cpu ipcq_slots), got ${slots}.`);
  }
  return buffers[rank] as Region;
}

/** A `RUNTIME_INVALID` error located at the kernel instance of `tl`. */
export function kernelError(tl: TL, detail: string): KbError {
  return new KbError("RUNTIME_INVALID", detail, { context: { kernel: tl.kernel, pe: tl.placement.pe } });
}
