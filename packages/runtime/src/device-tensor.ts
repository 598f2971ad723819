import { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, formatShape, shapeSize } from "@kb/tensor";
import { decodeAddress } from "@kb/topology";

/** Where a device tensor lives. */
export interface Placement {
  readonly sip: number;
  readonly cube: number;
  /** HBM (default) or the cube's shared SRAM. */
  readonly space: "hbm" | "sram";
}

/**
 * A tensor in device memory: row-major and contiguous at `address`. Kernels receive it as an
 * argument and address its elements with {@link at} (`tl.load(A.at(row, 0), [rows, K], A.dtype,
 * { stride: A.shape[1] })`).
 *
 * **Gotchas**: after `sim.free(t)` the tensor is {@link freed} and its bytes are gone in both
 * phases; `copyToDevice`, `fromDevice`, `free`, `launch` and `verifyOutcome` (a bench's checked
 * output) refuse it, naming where it was freed ({@link freedAt}).
 */
export class DeviceTensor {
  readonly shape: readonly number[];
  readonly placement: Placement;
  private freedState: { readonly at: string | null } | null = null;

  /** @internal Made by `Simulator.empty` / `toDevice`. */
  constructor(
    readonly address: number,
    shape: readonly number[],
    readonly dtype: Dtype,
    /** A name for messages (`A`, `out`). */
    readonly name: string,
    /**
     * Where it was allocated: `file:line:col` of the code that called `sim.empty` / `sim.toDevice`
     * (the first stack frame outside the `@kb` packages), or null when unknown. Host errors about
     * the tensor (a double free, a use after free) name it.
     */
    readonly allocatedAt: string | null = null,
  ) {
    this.shape = Object.freeze([...shape]);
    const { sip, cube, space } = decodeAddress(address);
    this.placement = { sip, cube, space: space === "sram" ? "sram" : "hbm" };
  }

  /** Elements. */
  get size(): number {
    return shapeSize(this.shape);
  }

  /** Bytes. */
  get nbytes(): number {
    return this.size * DTYPE_BYTES[this.dtype];
  }

  /** Bytes per element. */
  get itemBytes(): number {
    return DTYPE_BYTES[this.dtype];
  }

  /** True once `Simulator.free` freed it; the host API then refuses it. */
  get freed(): boolean {
    return this.freedState !== null;
  }

  /**
   * Where it was freed: `file:line:col` of the code that called `sim.free` (the first stack frame
   * outside the `@kb` packages). Null while it is live, or when the place is unknown.
   */
  get freedAt(): string | null {
    return this.freedState?.at ?? null;
  }

  /** @internal Called by `Simulator.free` once the memory is released. */
  markFreed(at: string | null): void {
    this.freedState = { at };
  }

  /** Device address of the element at `index` (one index per dimension; fewer = the rest 0). */
  at(...index: number[]): number {
    if (index.length > this.shape.length) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${this.describe()}.at(${index.join(", ")}): ${index.length} indices for ${this.shape.length} dimensions.`,
      );
    }
    let flat = 0;
    for (let d = 0; d < this.shape.length; d++) {
      const i = index[d] ?? 0;
      const size = this.shape[d] as number;
      if (!Number.isInteger(i) || i < 0 || i >= size) {
        throw new KbError(
          "RUNTIME_INVALID",
          `${this.describe()}.at(${index.join(", ")}): index ${i} of dimension ${d} is outside 0..${size - 1}.`,
        );
      }
      flat = flat * size + i;
    }
    return this.address + flat * DTYPE_BYTES[this.dtype];
  }

  /** `A (f16 [128, 64] at 0x...)`. */
  describe(): string {
    return `${this.name} (${this.dtype} ${formatShape(this.shape)} at 0x${this.address.toString(16)})`;
  }

  /** {@link describe} with where it was allocated: `A (f16 [128, 64] at 0x..., allocated at bench.ts:8:19)`. */
  describeOrigin(): string {
    const at = this.allocatedAt === null ? "" : `, allocated at ${this.allocatedAt}`;
    return `${this.name} (${this.dtype} ${formatShape(this.shape)} at 0x${this.address.toString(16)}${at})`;
  }

  toString(): string {
    return `DeviceTensor(${this.describe()})`;
  }
}
