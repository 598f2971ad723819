import type { PeCommand } from "@kb/spec";
import type { Dtype } from "@kb/tensor";
import type { SiteCache } from "./call-site.js";
import type { TensorHandle } from "./handles.js";
import type { KernelMemory } from "./kernel-memory.js";

// What a kernel instance is told (placement), how its context is made, and the options of the tl
// calls: the types of the kernel API's surface, apart from the calls themselves (context.ts).

/**
 * Where a kernel instance (a program) runs and what it is told about the grid. In a persistent
 * launch (one program per PE) the program ids are the PE's grid position; in a logical launch
 * (`@kb/runtime`'s `programs: [nx, ny, nz]`, Triton's grid) they are the program's own, and
 * `pe` / `sip` / `cube` / `peIndex` name the PE the block scheduler gave it.
 */
export interface KernelPlacement {
  /** PE id, `sip0.cube1.pe3`. */
  readonly pe: string;
  readonly sip: number;
  readonly cube: number;
  /** PE index within its cube. */
  readonly peIndex: number;
  /**
   * `programId(axis)`. Persistent: axis 0 the PE within the grid's cube, 1 the cube, 2 the SIP.
   * Logical: the program's x, y, z (x fastest in the launch's linear order).
   */
  readonly programId: readonly [number, number, number];
  /** `numPrograms(axis)`. Persistent: PEs per cube, cubes per SIP, SIPs of the grid. Logical: nx, ny, nz. */
  readonly numPrograms: readonly [number, number, number];
}

/** @internal How a TLContext hands commands on: a KernelRunner, or a command list. */
export interface CommandSink {
  /**
   * Issues `command` at program position `index`; resolves when the PE_CPU is done with it (a
   * synchronous command completed, an async one handed to the scheduler).
   */
  issue(command: PeCommand): { readonly index: number; readonly done: Promise<void> };
  /** Simulated time for error messages (null in command-list mode). */
  now(): number | null;
  /** True in runner mode. */
  readonly runner: boolean;
  /**
   * Runner mode: where the calls' locations are cached (`CallSite.captureLocated`), so each call
   * that emits a command knows its kernel line cheaply (per-line reports). Absent: found only
   * when an error message needs one.
   */
  readonly sites?: SiteCache;
}

/** Options of a {@link TLContext}. */
export interface TLOptions {
  /** Kernel name (errors, traces). */
  readonly kernel: string;
  readonly placement: KernelPlacement;
  /** The PE's TCM range for compute outputs and loaded tiles: TCM byte offsets within its window. */
  readonly scratch: { readonly offset: number; readonly bytes: number };
  /** PE_CPU cycles charged before every call that emits a command (ADR-0046 D6; default 0). */
  readonly dispatchCycles?: number;
  /** Runner mode: the memory store (loads return real data, stores are visible at issue). */
  readonly memory?: KernelMemory | null;
}

/** Options of `tl.load` / `tl.store` on a 2-D block of a larger row-major matrix. */
export interface BlockOptions {
  /** Elements between the starts of consecutive rows in device memory (default: contiguous). */
  readonly stride?: number;
}

/** Options of `tl.store`: a block, and which of its elements are written. */
export interface StoreOptions extends BlockOptions {
  /**
   * Triton's `mask`: an `i1` tile broadcastable to the value's shape; only elements where it is 1
   * are written (the DMA moves only their bytes), and addresses where it is 0 are not checked
   * against allocations (a ragged tail's pointers may run past the tensor). Its values must be
   * known in phase 1: computed from `tl.arange`, `tl.full`, program ids and scalars.
   */
  readonly mask?: TensorHandle;
  /**
   * A gather or scatter (Triton's `ptr + offs`): an integer tile broadcastable to the tile's
   * shape; element `i` (row-major) is at `ptr + offsets[i]` elements. Its values (and the mask's)
   * must be known in phase 1: constants, loaded integer tiles, and integer math of them. Not with
   * `stride`.
   */
  readonly offsets?: TensorHandle;
}

/** Options of `tl.load` and `tl.loadAsync`: a block, which of its elements move, and where in TCM it lands. */
export interface LoadOptions extends StoreOptions {
  /** The value of masked-off elements in the loaded tile (Triton's `other`; default 0). Needs `mask`. */
  readonly other?: number;
  /**
   * Land the block in this TCM handle (same shape and dtype, from this kernel) instead of fresh
   * scratch: a kernel that streams through a fixed buffer allocates it once. The returned handle
   * names the same bytes; `out` itself must not be read afterwards.
   */
  readonly out?: TensorHandle;
}

/** Options of the math calls (`tl.add`, `tl.exp`, `tl.sum`, ...). */
export interface MathOptions {
  /**
   * Write the result into this TCM handle (the result's shape and dtype, from this kernel)
   * instead of fresh scratch. It may be one of the inputs (`tl.add(acc, x, { out: acc })`
   * accumulates in place). The returned handle names the same bytes; `out` itself must not be
   * read afterwards.
   */
  readonly out?: TensorHandle;
}

/** Options of `tl.dot`. */
export interface DotOptions {
  /**
   * Accumulate into this handle (Triton's `tl.dot(a, b, acc)`): the result takes its bytes and the
   * handle is consumed (using it again is `TL_INVALID_CALL`): `acc = await tl.dot(a, b, acc)`.
   */
  readonly acc?: TensorHandle;
  /** Output dtype (default: the accumulator's, else f32 for float inputs and i32 for i8). */
  readonly outDtype?: Dtype;
}

/** An epilogue step of `tl.composite("gemm", ...)`. */
export interface EpilogueSpec {
  /** An elementwise op (`relu`, `add` with `scalar`, `sigmoid`, ...). */
  readonly op: string;
  readonly scope?: "k_tile" | "output_tile";
  readonly scalar?: number;
}

/** Options of `tl.composite`. */
export interface CompositeOptions {
  /** Device address of the output (HBM). */
  readonly outPtr: number | { readonly address: number };
  /** For `composite("math", ...)`: the elementwise or row op. */
  readonly mathOp?: string;
  /** Scalars of the math op (`add` with a scalar, `clamp` bounds). */
  readonly scalars?: readonly number[];
  readonly epilogue?: readonly EpilogueSpec[];
  readonly accDtype?: Dtype;
  readonly outDtype?: Dtype;
  readonly tileShape?: readonly [number, number, number];
  /** Rows per tile of a composite math op. */
  readonly tileRows?: number;
}

/** Options of `tl.recv`. */
export interface RecvOptions {
  readonly shape: readonly number[];
  readonly dtype?: Dtype;
  /** With `dstAddr`: copy the payload there (`copy_to_dst`); without: read it in its slot. */
  readonly dstAddr?: number;
}

/**
 * A device address, or anything with an `address` (a runtime `DeviceTensor`). A pointer with a
 * `dtype` is typed: a load or store of another element type through it is refused (cast first).
 */
export type Pointer =
  | number
  | { readonly address: number; readonly dtype?: Dtype | undefined; describe?(): string };
