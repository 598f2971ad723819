import { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, formatShape, shapeSize } from "@kb/tensor";
import { TCM_WINDOW_BYTES, tcmAddress } from "@kb/topology";
import type { CallSite } from "./call-site.js";
import type { Consumption } from "./handles.js";
import type { ErrorSource } from "./validate.js";

/** Scratch allocations are aligned to this many bytes (ADR-0046 D5). */
export const SCRATCH_ALIGN = 16;

/** What the allocator needs of a handle: where its scratch starts, and fields to mark it released. */
export interface ScratchHolder {
  readonly scratchOffset: number | null;
  _released: boolean;
  _consumedBy: Consumption | null;
}

/**
 * A kernel instance's TCM scratch (ADR-0046 D5): a bump allocator of
 * {@link SCRATCH_ALIGN}-aligned pieces, with marks to release everything allocated after one
 * (`tl.scratchMark` / `tl.scratchRelease`). Released handles are flagged so later calls refuse them.
 */
export class Scratch {
  /** Device address of scratch offset 0. */
  readonly base: number;
  readonly bytes: number;
  /** Offset of the first free byte (everything below it is in use). */
  cursor = 0;
  /** Live handles on scratch, in allocation order. */
  private holders: ScratchHolder[] = [];

  /**
   * `range` is the PE's scratch: TCM byte offsets within its window. Throws `TL_INVALID_CALL` when
   * the range is not whole bytes or does not fit the window.
   */
  constructor(
    placement: { readonly sip: number; readonly cube: number; readonly peIndex: number },
    range: { readonly offset: number; readonly bytes: number },
  ) {
    const { offset, bytes } = range;
    if (!(Number.isInteger(offset) && offset >= 0 && Number.isInteger(bytes) && bytes >= 0)) {
      throw new KbError(
        "TL_INVALID_CALL",
        `scratch must be whole bytes >= 0, got offset ${offset}, ${bytes} bytes.`,
      );
    }
    if (offset + bytes > TCM_WINDOW_BYTES) {
      throw new KbError(
        "TL_INVALID_CALL",
        `scratch [${offset}, ${offset + bytes}) does not fit a PE's TCM window of ${TCM_WINDOW_BYTES} bytes.`,
      );
    }
    this.base = tcmAddress(placement.sip, placement.cube, placement.peIndex, offset);
    this.bytes = bytes;
  }

  /**
   * Allocates room for `dtype` elements of `shape` for `tl.${op}` and returns its offset. Throws
   * `TL_SCRATCH_OVERFLOW` (through `errors`) when it does not fit.
   */
  allocate(errors: ErrorSource, op: string, shape: readonly number[], dtype: Dtype): number {
    const bytes = shapeSize(shape) * DTYPE_BYTES[dtype];
    const offset = this.cursor;
    const end = offset + Math.ceil(bytes / SCRATCH_ALIGN) * SCRATCH_ALIGN;
    if (end > this.bytes) {
      throw errors._error(
        "TL_SCRATCH_OVERFLOW",
        `tl.${op} needs ${bytes} bytes of TCM scratch for ${dtype} ${formatShape(shape)}, but ${offset} of the ${this.bytes} scratch bytes are in use (${this.bytes - offset} free). Release tiles you no longer need with tl.scratchRelease(tl.scratchMark()) around a loop body, use smaller tiles, or launch with a larger scratch.`,
      );
    }
    this.cursor = end;
    return offset;
  }

  /** Notes a handle on scratch (its `scratchOffset` is set), so `release` can flag it. */
  track(holder: ScratchHolder): void {
    this.holders.push(holder);
  }

  /**
   * Frees everything allocated after `mark` and flags the handles on it released (by the
   * `tl.scratchRelease` call whose site `siteOf` takes, called once and only if a handle is
   * released). Throws `TL_INVALID_CALL` (through `errors`) when `mark` is not a mark of this
   * scratch.
   */
  release(errors: ErrorSource, mark: number, siteOf: () => CallSite | null = () => null): void {
    if (!Number.isInteger(mark) || mark < 0 || mark > this.cursor) {
      throw errors._error(
        "TL_INVALID_CALL",
        `tl.scratchRelease(${mark}): not a mark of this kernel's scratch (cursor at ${this.cursor}).`,
      );
    }
    // Handles that share released scratch (an accumulated dot's result) are released too.
    let site: CallSite | null | undefined;
    this.holders = this.holders.filter((holder) => {
      if ((holder.scratchOffset as number) < mark) return true;
      holder._released = true;
      site ??= siteOf();
      if (site !== null) holder._consumedBy = { how: "released", site };
      return false;
    });
    this.cursor = mark;
  }
}
