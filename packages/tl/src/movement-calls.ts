import type { Dtype } from "@kb/tensor";
import type { TLContext } from "./context.js";
import type { TensorHandle } from "./handles.js";
import { runLoad, runStore } from "./movement.js";
import type { BlockOptions, LoadOptions, Pointer } from "./options.js";

// The data-movement calls of `tl`: PE_DMA copies between HBM/SRAM and the PE's TCM. Their work is
// in movement.ts.

/** The data-movement calls of `tl` (installed on `TLContext` by context.ts). */
export interface MovementCalls {
  /**
   * Loads `shape` elements at `ptr` (HBM or SRAM) into TCM through PE_DMA. In runner mode the
   * handle's `data` holds the real values, read when the copy completes.
   */
  load(ptr: Pointer, shape: readonly number[], dtype?: Dtype, options?: LoadOptions): Promise<TensorHandle>;

  /**
   * Stores `value` (a TCM handle) at `ptr` through PE_DMA. Visible at issue time in runner mode
   * when the handle has data; a pending compute result only binds the destination (its values
   * arrive in phase 2).
   */
  store(ptr: Pointer, value: TensorHandle, options?: BlockOptions): Promise<void>;
}

export const movementCalls: MovementCalls & ThisType<TLContext> = {
  load(ptr, shape, dtype = "f16", options = {}) {
    return this._call("load", (site) => runLoad(this._scope, site, ptr, shape, dtype, options));
  },

  store(ptr, value, options = {}) {
    return this._call("store", () => runStore(this._scope, ptr, value, options));
  },
};
