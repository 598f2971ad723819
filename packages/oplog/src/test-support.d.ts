import type { GemmParams, MathParams, MemoryParams } from "./schema.js";
/** A valid `dma_read` params object (test helper). */
export declare function memoryParams(src?: number, nbytes?: number): MemoryParams;
/** A valid 128x256 @ 256x128 f16 GEMM params object (test helper). */
export declare function gemmParams(dst?: number): GemmParams;
/** A valid row-sum math params object (test helper). */
export declare function mathParams(): MathParams;
