import { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, formatShape, shapeSize, type Tensor } from "@kb/tensor";
import { callerLocation } from "../caller-location.js";
import { formatRange } from "./format.js";

// Host data a run may leave unmade (issue 38, memory that scales with the work): a bench declares
// a tensor no kernel branches on (weights, activations) as a DeferredTensor; a simulator in
// timing-only mode copies it to the device without making its bytes (the copy is timed as any
// other), so neither the host nor phase 1 nor the host-write log holds them. A kernel that reads
// such bytes (a loaded tile's `data`, a branch on it) gets TL_PENDING_HANDLE naming the tensor.

/**
 * What a simulator does with the bytes of a {@link DeferredTensor} copied to the device:
 * - `full` (the default of a `Simulator`, and of every run with `--verify` or `--check-phases`):
 *   makes them (`make()`) and copies them as a Tensor's; results and phase 2 as for a Tensor.
 * - `timing-only` (`kb run` without `--verify`, unless `--full-data`): never makes them; the copy
 *   takes the same simulated time, and the device bytes are unknown to phase 1 (as a compute
 *   result's are): every simulated time, count and byte figure is the same as with `full`.
 */
export type HostDataMode = "full" | "timing-only";

/**
 * A host tensor whose bytes are made only when a run needs them (see {@link deferredTensor}).
 * Pass it to `sim.toDevice` or `sim.copyToDevice` as a Tensor.
 */
export class DeferredTensor {
  readonly shape: readonly number[];
  readonly dtype: Dtype;
  /** Bytes of the elements. */
  readonly nbytes: number;
  /** Where it was declared, `file:line:col` (the first frame outside the `@kb` packages), or null. */
  readonly site: string | null;

  /** @internal Made by {@link deferredTensor}. */
  constructor(
    shape: readonly number[],
    dtype: Dtype,
    private readonly make: () => Tensor,
    site: string | null,
  ) {
    this.shape = Object.freeze([...shape]);
    this.dtype = dtype;
    this.nbytes = shapeSize(shape) * DTYPE_BYTES[dtype];
    this.site = site;
  }

  /**
   * Makes its bytes: calls `make` (each call calls it again; cache in `make` what several
   * tensors share). Throws `RUNTIME_INVALID` when `make` returns another shape or dtype.
   */
  materialise(): Tensor {
    const tensor = this.make();
    if (tensor.dtype !== this.dtype || formatShape(tensor.shape) !== formatShape(this.shape)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${this.site === null ? "" : `${this.site}: `}the deferred tensor ${formatShape(this.shape)} ${this.dtype} was made as ${formatShape(tensor.shape)} ${tensor.dtype}: make() must return the shape and dtype given to deferredTensor.`,
      );
    }
    return tensor;
  }

  toString(): string {
    return `deferred tensor ${formatShape(this.shape)} ${this.dtype}`;
  }
}

/**
 * A host tensor of `shape` and `dtype` whose bytes `make` returns when a run needs them: at the
 * copy to the device in `full` mode, never in `timing-only` mode ({@link HostDataMode}).
 *
 * **When to use**: for data no kernel reads the values of in phase 1 (weights and activations
 * that only feed compute ops, never a branch, an index or a loop bound), when the data is too big
 * to hold twice (host and device) in a long timing run: a llama3-8b layer's weights are 436 MB in
 * f16, a 32-layer model's 14 GB. Keep data a kernel branches on (routing indices, lengths) a Tensor.
 *
 * **Gotchas**: `make` must give the same bytes each time (seeded data), since a `--verify` run
 * makes them and a timing run does not; in timing-only mode, `sim.fromDevice` of such a tensor
 * reads zeros (as of a compute result), and a kernel that reads its values throws
 * `TL_PENDING_HANDLE` naming it and where it was copied.
 */
export function deferredTensor(shape: readonly number[], dtype: Dtype, make: () => Tensor): DeferredTensor {
  if (!(dtype in DTYPE_BYTES)) {
    throw new KbError("RUNTIME_INVALID", `deferredTensor: unknown dtype ${JSON.stringify(dtype)}.`);
  }
  return new DeferredTensor(shape, dtype, make, callerLocation());
}

/** One device range holding timing-only host data. */
interface TimingOnlyRange {
  readonly end: number;
  readonly name: string;
  /** Where the copy was made, or null. */
  readonly site: string | null;
}

/**
 * @internal The device ranges a timing-only simulator copied deferred tensors to, for the
 * message of a kernel that reads one (`KernelMemory.describePending`). A few entries per tensor
 * uploaded; forgotten when the range is freed or written with known bytes.
 */
export class TimingOnlyRanges {
  private readonly ranges = new Map<number, TimingOnlyRange>();

  /** Records that `[address, address + bytes)` holds the timing-only data of tensor `name`. */
  add(address: number, bytes: number, name: string, site: string | null): void {
    this.forget(address, bytes);
    this.ranges.set(address, { end: address + bytes, name, site });
  }

  /** Forgets the ranges that start in `[address, address + bytes)`. */
  forget(address: number, bytes: number): void {
    if (this.ranges.size === 0) return;
    for (const start of [...this.ranges.keys()]) {
      if (start >= address && start < address + bytes) this.ranges.delete(start);
    }
  }

  /** The description of the timing-only data at `address`, or null. */
  describe(address: number): string | null {
    for (const [start, range] of this.ranges) {
      if (address < start || address >= range.end) continue;
      const copied = range.site === null ? "" : ` (copied at ${range.site})`;
      return `timing-only data: tensor ${range.name} at ${formatRange(start, range.end - start)}${copied} came from a deferred tensor whose bytes this run does not make (kb run without --verify). Run with --verify or --full-data to make them, or copy a Tensor rather than a deferredTensor for data a kernel reads the values of.`;
    }
    return null;
  }
}

/** `SimulatorOptions.hostData`, checked: `full` when omitted; `RUNTIME_INVALID` for anything else. */
export function checkHostDataMode(mode: unknown): HostDataMode {
  if (mode === undefined || mode === "full") return "full";
  if (mode === "timing-only") return mode;
  throw new KbError(
    "RUNTIME_INVALID",
    `hostData must be "full" or "timing-only", got ${JSON.stringify(mode)}.`,
  );
}
