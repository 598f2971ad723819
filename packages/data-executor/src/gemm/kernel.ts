// Loads the GEMM WebAssembly module (kernel.wat, assembled into kernel-wasm.ts) and gives each
// user of it an engine: one instance over one memory, with one workspace per thread. The memory
// is shared only for a pool of threads (GemmPool): a single-threaded engine's is a plain one, so
// a browser page runs it without cross-origin isolation (COOP/COEP headers).
import { KbError } from "@kb/errors";
import { GEMM_KERNEL_UNSHARED_WASM_BASE64, GEMM_KERNEL_WASM_BASE64 } from "./kernel-wasm.js";

// The repository's TypeScript lib (ES2022, @types/node) declares no WebAssembly API, so the few
// parts used here are typed locally instead of adding the DOM lib to every package.

/** A `WebAssembly.Memory` (shared for a pool of threads, plain otherwise). */
export interface WasmMemory {
  readonly buffer: ArrayBufferLike;
  grow(deltaPages: number): number;
}

/** A compiled `WebAssembly.Module`; opaque, and cloneable to worker threads. */
export interface WasmModule {
  readonly __wasmModule?: never;
}

interface WasmGlobal {
  readonly value: number;
}

/** The exports of kernel.wat. Addresses are byte offsets in the memory; see kernel.wat. */
export interface GemmKernelExports {
  /** One GEMM; `flags` is a sum of {@link GEMM_TRANS_A}, {@link GEMM_TRANS_B}, {@link GEMM_ACCUMULATE}. */
  gemm(
    m: number,
    n: number,
    k: number,
    a: number,
    lda: number,
    b: number,
    ldb: number,
    c: number,
    ldc: number,
    flags: number,
    work: number,
  ): void;
  /** `count` GEMMs from a table of {@link GEMM_TASK_BYTES}-byte records, one workspace. */
  run_tasks(table: number, count: number, work: number): void;
  readonly MR: WasmGlobal;
  readonly NR: WasmGlobal;
  readonly KC: WasmGlobal;
  readonly MC: WasmGlobal;
  readonly NC: WasmGlobal;
  readonly WORKSPACE_BYTES: WasmGlobal;
}

interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { readonly exports: unknown };
  Memory: new (descriptor: { initial: number; maximum: number; shared: boolean }) => WasmMemory;
}

/** Bytes of a WebAssembly page. */
export const WASM_PAGE_BYTES = 65536;
/** Pages the kernel's memory may grow to: the whole 32-bit address space, 4 GiB. */
export const WASM_MAX_PAGES = 65536;
/** `flags` bit of the kernel: A is stored k x m and used transposed. */
export const GEMM_TRANS_A = 1;
/** `flags` bit of the kernel: B is stored n x k and used transposed. */
export const GEMM_TRANS_B = 2;
/** `flags` bit of the kernel: add the product to C instead of overwriting it. */
export const GEMM_ACCUMULATE = 4;
/** Bytes of one record of the kernel's task table (12 i32: m n k a lda b ldb c ldc flags, 2 unused). */
export const GEMM_TASK_BYTES = 48;

function webAssembly(): WasmApi {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) {
    throw new KbError(
      "RUNTIME_INVALID",
      "the GEMM kernel needs WebAssembly (with SIMD), which this JavaScript engine does not provide (was node started with --jitless?).",
    );
  }
  return api;
}

let compiledShared: WasmModule | undefined;
let compiledUnshared: WasmModule | undefined;

function compile(base64: string): WasmModule {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return new (webAssembly().Module)(bytes);
}

/**
 * The compiled kernel module (about 2 KiB of wasm), compiled on the first call and kept: the one
 * that imports a shared memory when `shared` (worker threads), else the one over a plain memory.
 */
export function gemmKernelModule(shared: boolean): WasmModule {
  if (shared) {
    compiledShared ??= compile(GEMM_KERNEL_WASM_BASE64);
    return compiledShared;
  }
  compiledUnshared ??= compile(GEMM_KERNEL_UNSHARED_WASM_BASE64);
  return compiledUnshared;
}

/** A new memory of `pages` pages that may grow to 4 GiB, shared between threads when `shared`. */
export function newKernelMemory(pages: number, shared: boolean): WasmMemory {
  return new (webAssembly().Memory)({ initial: pages, maximum: WASM_MAX_PAGES, shared });
}

/**
 * The kernel instantiated over `memory` (any number of instances may share a shared one);
 * `shared` must say which kind `memory` is.
 */
export function instantiateKernel(memory: WasmMemory, shared: boolean): GemmKernelExports {
  const instance = new (webAssembly().Instance)(gemmKernelModule(shared), { env: { memory } });
  return instance.exports as GemmKernelExports;
}

/**
 * One kernel instance over its own memory, laid out as `workspaces` workspaces (one per thread
 * that runs GEMMs in it) followed by the operands of the current call at {@link operandBase}.
 * The memory only grows: it stays at the largest call's size. It is shared (a
 * `SharedArrayBuffer`, which a browser gives only to a cross-origin isolated page) only when
 * `shared` is true, for the threads of a `GemmPool`.
 */
export class GemmEngine {
  readonly memory: WasmMemory;
  readonly kernel: GemmKernelExports;
  /** Bytes of one workspace (packed blocks and edge-tile scratch). */
  readonly workspaceBytes: number;
  /** First byte after the workspaces, 16-byte aligned: where a call's operands go. */
  readonly operandBase: number;
  private viewBuffer: ArrayBufferLike | null = null;
  private viewF32: Float32Array = new Float32Array(0);
  private viewI32: Int32Array = new Int32Array(0);

  constructor(workspaces = 1, shared = false) {
    this.memory = newKernelMemory(1, shared);
    this.kernel = instantiateKernel(this.memory, shared);
    this.workspaceBytes = this.kernel.WORKSPACE_BYTES.value;
    this.operandBase = workspaces * this.workspaceBytes;
    this.reserve(this.operandBase);
  }

  /** The byte offset of workspace `index`. */
  workspace(index: number): number {
    return index * this.workspaceBytes;
  }

  /** Grows the memory to at least `bytes` bytes; a KbError when that passes 4 GiB. */
  reserve(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (bytes <= have) return;
    if (bytes > WASM_MAX_PAGES * WASM_PAGE_BYTES) {
      throw new KbError(
        "TENSOR_INVALID",
        `a GEMM call needs ${bytes} bytes of kernel memory (operands and workspaces), more than the 4 GiB a WebAssembly memory can hold; split the call into smaller GEMMs.`,
      );
    }
    // Grow by at least a quarter, so a sequence of growing calls does not grow every time.
    const want = Math.max(Math.ceil((bytes - have) / WASM_PAGE_BYTES), Math.ceil(have / WASM_PAGE_BYTES / 4));
    this.memory.grow(Math.min(want, WASM_MAX_PAGES - have / WASM_PAGE_BYTES));
  }

  /** A Float32Array over the whole memory (re-made after the memory grew). */
  get f32(): Float32Array {
    this.refreshViews();
    return this.viewF32;
  }

  /** An Int32Array over the whole memory (re-made after the memory grew). */
  get i32(): Int32Array {
    this.refreshViews();
    return this.viewI32;
  }

  private refreshViews(): void {
    const buffer = this.memory.buffer;
    if (buffer === this.viewBuffer && buffer.byteLength === this.viewF32.byteLength) return;
    this.viewBuffer = buffer;
    this.viewF32 = new Float32Array(buffer);
    this.viewI32 = new Int32Array(buffer);
  }
}
