import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import type { DeviceTensorInfo } from "./kernel-memory.js";
import { failure, machineOf, runKernel, TestMemory } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });

/** Device memory with two tensors: X f32 [8, 8] at 0 and Y f16 [8, 8] at 4096. */
class TypedMemory extends TestMemory {
  readonly tensors: DeviceTensorInfo[] = [
    { name: "X", dtype: "f32", shape: [8, 8], address: hbm(0), bytes: 256 },
    { name: "Y", dtype: "f16", shape: [8, 8], address: hbm(4096), bytes: 128 },
  ];
  tensorAt(address: number): DeviceTensorInfo | null {
    return this.tensors.find((t) => address >= t.address && address < t.address + t.bytes) ?? null;
  }
}

const run = (kernel: (tl: TLContext) => Promise<void>) =>
  runKernel(machineOf(), kernel, [], { memory: new TypedMemory() });

// Storing an f32 tile into an f16 tensor used to write twice the bytes: PEs overwrote their
// neighbours' rows with no error.
describe("device memory is typed by the tensor allocated there", () => {
  it("a store of another element type is refused, naming the tensor, both dtypes, the call and tl.cast", async () => {
    const error = await failure(
      run(async function storeF32(tl: TLContext) {
        const x = await tl.load(hbm(0), [8, 8], "f32");
        await tl.store(hbm(4096), x);
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toMatch(/typed-memory\.test\.ts:\d+:\d+ kernel storeF32 on sip0\.cube0\.pe0/);
    expect(error.message).toContain(
      "tl.store of handle #0 (f32 [8, 8] in tcm) from tl.load into Y (f16 [8, 8])",
    );
    expect(error.message).toContain("4 per element) would be written into f16 elements (2 bytes each)");
    expect(error.message).toContain('await tl.cast(x, "f16")');
  });

  it("a load of another element type is refused; the tensor's own type passes", async () => {
    const error = await failure(
      run(async (tl) => {
        await tl.load(hbm(4096), [8, 8], "f32");
      }),
    );
    expect(error.message).toContain("tl.load of f32 elements from Y (f16 [8, 8])");
    await run(async (tl) => {
      const y = await tl.load(hbm(4096), [8, 8], "f16");
      await tl.store(hbm(4096), await tl.cast(await tl.cast(y, "f32"), "f16"));
    });
  });

  it("composite operands and outputs are checked against their tensors, and must fit them", async () => {
    const wrongRef = await failure(
      run(async (tl) => {
        const a = tl.ref(hbm(0), [8, 8], "f16"); // X is f32
        await tl.composite("gemm", a, tl.ref(hbm(4096), [8, 8], "f16"), { outPtr: hbm(4096) });
      }),
    );
    expect(wrongRef.message).toContain("tl.composite operand a is f16 but X (f32 [8, 8]) holds f32");
    const wrongOut = await failure(
      run(async (tl) => {
        const a = tl.ref(hbm(0), [8, 8], "f32");
        await tl.composite("gemm", a, a, { outPtr: hbm(4096) }); // output f32 into Y (f16)
      }),
    );
    expect(wrongOut.message).toContain("tl.composite output is f32 but Y (f16 [8, 8]) holds f16");
    expect(wrongOut.message).toContain('Pass outDtype: "f16"');
    const mixed = await failure(
      run(async (tl) => {
        await tl.composite("gemm", tl.ref(hbm(0), [8, 8], "f32"), tl.ref(hbm(4096), [8, 8], "f16"), {
          outPtr: hbm(4096),
        });
      }),
    );
    expect(mixed.message).toContain("operand dtypes differ: a is f32, b is f16");
    // f32 X @ f32 X into f16 Y with outDtype f16: accepted.
    await run(async (tl) => {
      const a = tl.ref(hbm(0), [8, 8], "f32");
      await tl.wait(await tl.composite("gemm", a, a, { outPtr: hbm(4096), outDtype: "f16" }));
    });
  });
});
