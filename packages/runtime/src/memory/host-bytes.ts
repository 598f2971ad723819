import type { MemoryStore } from "@kb/data-executor";
import type { Tensor } from "@kb/tensor";
import { DeferredTensor, type HostDataMode, TimingOnlyRanges } from "./deferred-data.js";
import type { HostWriteLog } from "./host-writes.js";
import { PendingRanges } from "./pending-ranges.js";

/**
 * What the host's memory operations do to the bytes of both phases, kept in step in one place:
 * phase 1's device bytes (`store`), the ranges whose values phase 1 does not know (`pending`:
 * compute results, timing-only copies), the ranges timing-only copies left without bytes (for the
 * message of a kernel that reads them), and the host-write log phase 2 starts from. The simulator
 * times the copies; this class only moves and forgets bytes.
 */
export class HostBytes {
  /**
   * Device bytes whose values phase 1 does not know (compute results and copies of them): `tl`
   * marks them through `kernelMemory().markPending`; a real write (a load's or store's bytes, a
   * host copy) makes them known again.
   */
  readonly pending = new PendingRanges();
  /** Where timing-only copies put data phase 1 does not hold, for the messages of kernels reading it. */
  readonly timingOnly = new TimingOnlyRanges();

  constructor(
    readonly store: MemoryStore,
    readonly log: HostWriteLog,
    /** What copies of deferred tensors do with their bytes (`SimulatorOptions.hostData`). */
    readonly hostData: HostDataMode,
  ) {}

  /**
   * A new allocation at `[address, address + bytes)`: memory used before may hold old bytes, so
   * they are zeroed in both phases (a host write of zeros at `nowNs`); memory never written reads
   * as zeros already and costs nothing.
   */
  allocated(address: number, bytes: number, nowNs: number): void {
    if (
      bytes > 0 &&
      (this.store.touched(address, bytes) || this.pending.overlaps(address, address + bytes))
    ) {
      this.store.discard(address, bytes);
      this.pending.clear(address, address + bytes);
      this.log.zero(address, bytes, nowNs);
    }
  }

  /**
   * A host tensor's bytes written at `address` by a copy at `nowNs` (the caller checked sizes and
   * dtypes). A deferred tensor in `timing-only` mode writes none: phase 1 holds the range as
   * pending and remembers it came from tensor `name` copied at `site`, and phase 2 reads zeros
   * there (same timing). Returns the bytes the copy moves.
   */
  copyIn(
    tensor: Tensor | DeferredTensor,
    address: number,
    name: string,
    site: string | null,
    nowNs: number,
  ): number {
    const { nbytes } = tensor;
    if (tensor instanceof DeferredTensor && this.hostData === "timing-only") {
      this.store.discard(address, nbytes);
      this.pending.add(address, address + nbytes);
      this.timingOnly.add(address, nbytes, name, site);
      this.log.zero(address, nbytes, nowNs);
      return nbytes;
    }
    const bytes = (tensor instanceof DeferredTensor ? tensor.materialise() : tensor).bytes;
    this.timingOnly.forget(address, nbytes);
    this.store.write(address, bytes);
    this.pending.clear(address, address + nbytes);
    this.log.write(address, bytes, nowNs);
    return nbytes;
  }

  /** Forgets the bytes of a freed range in both phases: now in phase 1, at `nowNs` in phase 2. */
  forget(address: number, bytes: number, nowNs: number): void {
    if (bytes <= 0) return;
    this.store.discard(address, bytes);
    this.pending.clear(address, address + bytes);
    this.timingOnly.forget(address, bytes);
    this.log.zero(address, bytes, nowNs);
  }
}
