import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { assembleKernel, kernelModuleSource, unsharedKernelText } from "./generate-kernel.mjs";
import { GEMM_KERNEL_UNSHARED_WASM_BASE64, GEMM_KERNEL_WASM_BASE64 } from "./kernel-wasm.js";

describe("kernel-wasm.ts", () => {
  it("holds kernel.wat assembled by wabt (rerun generate-kernel.mjs after editing kernel.wat)", async () => {
    const wat = readFileSync(new URL("./kernel.wat", import.meta.url), "utf8");
    const bytes = await assembleKernel(wat);
    const unsharedBytes = await assembleKernel(unsharedKernelText(wat));
    expect(Buffer.from(GEMM_KERNEL_WASM_BASE64, "base64").equals(Buffer.from(bytes))).toBe(true);
    expect(Buffer.from(GEMM_KERNEL_UNSHARED_WASM_BASE64, "base64").equals(Buffer.from(unsharedBytes))).toBe(
      true,
    );
    expect(readFileSync(new URL("./kernel-wasm.ts", import.meta.url), "utf8")).toBe(
      kernelModuleSource(bytes, unsharedBytes),
    );
  });
});
