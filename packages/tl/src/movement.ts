import type { DmaCommand } from "@kb/spec";
import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import type { CallScope, LoadSource } from "./call-scope.js";
import { type CallSite, formatLocation } from "./call-site.js";
import {
  blockOf,
  checkBlockAccess,
  checkDeviceSide,
  hex,
  landLoad,
  mistypedPointer,
  mistypedTensorAt,
  writeBlock,
} from "./device-access.js";
import {
  checkIndexedAccess,
  contiguousOffset,
  type IndexedBlock,
  indexedBlock,
  indexedCommand,
  landGather,
  scatter,
} from "./gather.js";
import type { TensorHandle } from "./handles.js";
import { markBlockPending } from "./kernel-memory.js";
import { checkMaskedAccess, landMaskedLoad, maskedBlock, storeMasked } from "./masks.js";
import type { LoadOptions, Pointer, StoreOptions } from "./options.js";
import { checkDtype, checkOwned, checkShape, pointerAddress } from "./validate.js";
import { valuesOf } from "./values.js";

// The bodies of `tl.load`, `tl.loadAsync` and `tl.store` (context.ts documents the calls): PE_DMA copies between
// HBM/SRAM and the PE's TCM, and in runner mode the bytes they move in phase 1.

/** A load checked and given its destination, ready to issue (see {@link prepareLoad}). */
export interface PreparedLoad {
  readonly handle: TensorHandle;
  readonly command: DmaCommand;
  /** Lands the completed copy's bytes in TCM (runner mode) and reports them to the memory. */
  readonly land: () => void;
}

/**
 * Checks `tl.${call}(ptr, shape, dtype, options)` made at `site` and picks the TCM destination
 * (fresh scratch or `options.out`); returns the DMA to issue and how to land its bytes once the
 * copy completed (ADR-0020 D3: a load reads its data when the copy completes). `tl.load` issues
 * it and waits; `tl.loadAsync` issues it async and lands it when `tl.wait` covers it.
 */
export async function prepareLoad(
  scope: CallScope,
  call: string,
  site: CallSite,
  ptr: Pointer,
  shape: readonly number[],
  dtype: Dtype,
  options: LoadOptions,
): Promise<PreparedLoad> {
  const tl = scope.tl;
  checkShape(tl, call, shape);
  checkDtype(tl, call, dtype);
  const base = pointerAddress(tl, ptr, call);
  const block = blockOf(tl, call, shape, dtype, options.stride, options.mask !== undefined);
  const gather = indexedOf(scope, call, options, shape, dtype, true);
  // Offsets that make one contiguous copy of the whole tile are a plain load from there.
  const src = base + (gather === null ? 0 : (contiguousOffset(gather) ?? 0));
  const indexed = gather !== null && contiguousOffset(gather) === null ? gather : null;
  if (indexed === null) checkDeviceSide(tl, call, src);
  const cols = shape[shape.length - 1] as number;
  const from: LoadSource = {
    address: src,
    stride: options.stride !== undefined && options.stride !== cols ? options.stride : null,
  };
  const handle =
    options.out === undefined
      ? scope.scratchHandle(call, "load", shape, dtype, from)
      : await scope.into(call, options.out, "load", shape, dtype, from);
  const t = mistypedPointer(ptr, dtype) ?? mistypedTensorAt(tl.memory, src, dtype);
  if (t !== null) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call} of ${dtype} elements from ${t}: the bytes would be read as ${dtype}. Load as ${t.dtype} (its element type) and tl.cast the tile if you need ${dtype}.`,
    );
  }
  const masked =
    gather === null ? maskedBlock(tl, call, options.mask, options.other, shape, dtype, block) : null;
  const memory = tl.memory;
  if (indexed !== null) checkIndexedAccess(tl, memory, call, base, indexed, DTYPE_BYTES[dtype]);
  else if (memory !== null) {
    const what = `tl.${call} at ${hex(src)}`;
    if (masked === null) checkBlockAccess(tl, memory, src, block, what);
    else checkMaskedAccess(tl, memory, src, masked, what);
  }
  const command: DmaCommand = {
    kind: "dma",
    src,
    dst: handle.address,
    bytes: block.rowBytes,
    rows: block.rows,
    srcStride: block.stride,
    dstStride: block.rowBytes,
    ...(masked === null ? {} : { mask: masked.mask }),
    ...(indexed === null ? {} : { indexed: indexedCommand(indexed, true) }),
  };
  const land = () => {
    if (memory === null) return;
    const bytes =
      indexed !== null
        ? landGather(tl, memory, src, indexed, handle.address)
        : masked === null
          ? landLoad(tl, memory, src, block, handle.address)
          : landMaskedLoad(tl, memory, src, masked, handle.address);
    if (bytes === null) return;
    memory.observeLoad?.({
      kernel: tl.kernel,
      pe: tl.placement.pe,
      site: siteOf(site),
      src,
      dst: handle.address,
      rows: block.rows,
      rowBytes: block.rowBytes,
      srcStride: block.stride,
      bytes,
      atNs: scope.sink.now() ?? 0,
    });
  };
  return { handle, command, land };
}

/** `file:line:col` of a call, or null. */
export function siteOf(site: CallSite): string | null {
  return site.location ? formatLocation(site.location) : null;
}

/** `tl.store(ptr, value, options)`. */
export async function runStore(
  scope: CallScope,
  ptr: Pointer,
  value: TensorHandle,
  options: StoreOptions,
): Promise<void> {
  const tl = scope.tl;
  checkOwned(tl, "store", value);
  const base = pointerAddress(tl, ptr, "store");
  const source = await scope.inTcm("store", value);
  const block = blockOf(tl, "store", value.shape, value.dtype, options.stride, options.mask !== undefined);
  const spread = indexedOf(scope, "store", options, value.shape, value.dtype, false);
  // Offsets that make one contiguous copy of the whole tile are a plain store there.
  const dst = base + (spread === null ? 0 : (contiguousOffset(spread) ?? 0));
  const indexed = spread !== null && contiguousOffset(spread) === null ? spread : null;
  if (indexed === null) checkDeviceSide(tl, "store", dst);
  const t = mistypedPointer(ptr, value.dtype) ?? mistypedTensorAt(tl.memory, dst, value.dtype);
  if (t !== null) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.store of ${value.describe()} from tl.${value.op} into ${t}: the tile's ${value.dtype} bytes (${DTYPE_BYTES[value.dtype]} per element) would be written into ${t.dtype} elements (${DTYPE_BYTES[t.dtype]} bytes each). Convert it first: await tl.store(ptr, await tl.cast(x, "${t.dtype}")).`,
    );
  }
  const masked =
    spread === null ? maskedBlock(tl, "store", options.mask, null, value.shape, value.dtype, block) : null;
  const memory = tl.memory;
  if (indexed !== null) checkIndexedAccess(tl, memory, "store", base, indexed, DTYPE_BYTES[value.dtype]);
  if (memory !== null) {
    const what = `tl.store at ${hex(dst)}`;
    // Known bytes are visible at issue (ADR-0020 D3); a pending tile makes the destination
    // pending, so no later load in phase 1 reads what was there before.
    const values = valuesOf(tl, source);
    if (indexed !== null) {
      scatter(tl, memory, dst, indexed, values === null ? null : values.bytes);
    } else if (masked !== null) {
      checkMaskedAccess(tl, memory, dst, masked, what);
      storeMasked(tl, memory, dst, masked, values === null ? null : values.bytes, what);
    } else {
      checkBlockAccess(tl, memory, dst, block, what);
      if (values !== null) writeBlock(tl, memory, dst, block, values.bytes, what);
      else markBlockPending(memory, dst, block);
    }
  }
  await scope.dispatch();
  await scope.issue({
    kind: "dma",
    src: source.address,
    dst,
    bytes: block.rowBytes,
    rows: block.rows,
    srcStride: block.rowBytes,
    dstStride: block.stride,
    ...(masked === null ? {} : { mask: masked.mask }),
    ...(indexed === null ? {} : { indexed: indexedCommand(indexed, false) }),
  });
}

/**
 * The runs of a load's (`load`) or store's gather or scatter when `options` has `offsets`, else
 * null. `stride` does not go with `offsets` (the offsets say where each element is).
 */
function indexedOf(
  scope: CallScope,
  call: string,
  options: LoadOptions,
  shape: readonly number[],
  dtype: Dtype,
  load: boolean,
): IndexedBlock | null {
  if (options.offsets === undefined) return null;
  if (options.stride !== undefined) {
    throw scope.tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: stride and offsets do not go together: the offsets say where each element is (row r, column c of a block is at r * stride + c).`,
    );
  }
  return indexedBlock(
    scope.tl,
    call,
    options.offsets,
    options.mask,
    load ? options.other : null,
    shape,
    dtype,
  );
}
