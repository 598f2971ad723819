/** The WebAssembly features kernel.wat uses: 128-bit SIMD, a shared memory, memory.fill. */
export declare const KERNEL_FEATURES: Readonly<{ simd: true; threads: true; bulk_memory: true }>;
/** The binary module of the WebAssembly text `text`, validated; throws wabt's error for bad text. */
export declare function assembleKernel(text: string): Promise<Uint8Array>;
/** kernel.wat with a plain (unshared) memory import, for single-threaded engines. */
export declare function unsharedKernelText(text: string): string;
/** The source of kernel-wasm.ts for the modules `bytes` (shared memory) and `unsharedBytes`. */
export declare function kernelModuleSource(bytes: Uint8Array, unsharedBytes: Uint8Array): string;
