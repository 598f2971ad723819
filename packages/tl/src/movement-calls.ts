import type { Dtype } from "@kb/tensor";
import type { TLContext } from "./context.js";
import { LoadFuture, type TensorHandle } from "./handles.js";
import { prepareLoad, runStore, siteOf } from "./movement.js";
import type { LoadOptions, Pointer, StoreOptions } from "./options.js";

// The data-movement calls of `tl`: PE_DMA copies between HBM/SRAM and the PE's TCM. Their work is
// in movement.ts.

/** The data-movement calls of `tl` (installed on `TLContext` by context.ts). */
export interface MovementCalls {
  /**
   * Loads `shape` elements at `ptr` (HBM or SRAM) into TCM through PE_DMA. In runner mode the
   * handle's `data` holds the real values, read when the copy completes. With `mask` (an `i1`
   * tile known in phase 1), only masked-on elements are read and moved; the others hold `other`.
   */
  load(ptr: Pointer, shape: readonly number[], dtype?: Dtype, options?: LoadOptions): Promise<TensorHandle>;

  /**
   * `tl.load` without waiting for the copy (pipelined loads): resolves once the DMA is issued,
   * with a {@link LoadFuture}; the copy runs in simulated time while the kernel issues other
   * commands (dots, more loads), and `await tl.wait(future)` waits for it and gives the handle
   * (with its `data` in runner mode). Until then the destination's TCM bytes may not be used
   * (`TL_INVALID_CALL`: the PE does not order a command after a DMA that writes what it reads).
   * `tl.wait()` without an argument completes it too (then `tl.wait(future)` gives the handle at
   * once); the kernel's end waits for a load never waited for.
   */
  loadAsync(
    ptr: Pointer,
    shape: readonly number[],
    dtype?: Dtype,
    options?: LoadOptions,
  ): Promise<LoadFuture>;

  /**
   * Stores `value` (a TCM handle) at `ptr` through PE_DMA. Visible at issue time in runner mode
   * when the handle has data; a pending compute result only binds the destination (its values
   * arrive in phase 2). A typed destination (a device tensor, or the tensor allocated at the
   * address in runner mode) of another element type is refused: `tl.cast` the value first. With
   * `mask`, only masked-on elements are written (and only their bytes move).
   */
  store(ptr: Pointer, value: TensorHandle, options?: StoreOptions): Promise<void>;
}

export const movementCalls: MovementCalls & ThisType<TLContext> = {
  load(ptr, shape, dtype = "f16", options = {}) {
    return this._call("load", async (site) => {
      const load = await prepareLoad(this._scope, "load", site, ptr, shape, dtype, options);
      await this._scope.dispatch();
      await this._scope.issue(load.command);
      load.land();
      return load.handle;
    });
  },

  loadAsync(ptr, shape, dtype = "f16", options = {}) {
    return this._call("loadAsync", async (site) => {
      const scope = this._scope;
      const load = await prepareLoad(scope, "loadAsync", site, ptr, shape, dtype, options);
      await scope.dispatch();
      // Done once the PE_CPU handed the copy to the scheduler; `tl.wait` waits for its position.
      const issued = scope.sink.issue({ ...load.command, async: true });
      await issued.done;
      const future = new LoadFuture(
        this._completionId(),
        issued.index,
        load.handle,
        load.land,
        siteOf(site),
        this,
      );
      this._outstanding.add(future);
      return future;
    });
  },

  store(ptr, value, options = {}) {
    return this._call("store", () => runStore(this._scope, ptr, value, options));
  },
};
