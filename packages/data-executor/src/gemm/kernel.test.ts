import { describe, expect, it } from "vitest";
import { GemmEngine } from "./kernel.js";
import { sgemm } from "./sgemm.js";

// Browsers other than Chromium give shared memory (SharedArrayBuffer) only to a cross-origin
// isolated page (COOP/COEP headers): the single-threaded GEMM, phase 2's, must not ask for it.
describe("GemmEngine memory", () => {
  it("is a plain ArrayBuffer for one thread and shared only for a pool's threads", () => {
    expect(new GemmEngine(1).memory.buffer).toBeInstanceOf(ArrayBuffer);
    expect(new GemmEngine(2, true).memory.buffer).toBeInstanceOf(SharedArrayBuffer);
  });

  it("computes on the plain memory: [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]]", () => {
    const c = new Float32Array(4);
    sgemm(2, 2, 2, new Float32Array([1, 2, 3, 4]), 2, new Float32Array([5, 6, 7, 8]), 2, c, 2);
    expect([...c]).toEqual([19, 22, 43, 50]);
  });
});
