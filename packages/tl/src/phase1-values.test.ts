import { isKbError, type KbError } from "@kb/errors";
import { Tensor } from "@kb/tensor";
import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import type { LoadObservation } from "./kernel-memory.js";
import { machineOf, runKernel, TestMemory } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });

function memoryWith(values: number[], at = 0): TestMemory {
  const memory = new TestMemory();
  memory.write(hbm(at), Tensor.fromArray(values, [values.length], "f32").bytes);
  return memory;
}

function failure(fn: () => unknown): KbError {
  try {
    fn();
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}

// Every value a kernel can observe in phase 1 is what phase 2 computes, or it cannot be observed:
// phase 1 never hands a kernel bytes that phase 2 would have replaced.
describe("what a kernel observes in phase 1", () => {
  it("a load of bytes a pending tile was stored to is pending, not the stale bytes under it", async () => {
    const memory = memoryWith([1, 2, 3, 4]);
    let seen: KbError | null = null;
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const x = await tl.load(hbm(0), [4], "f32");
        await tl.store(hbm(4096), await tl.exp(x)); // pending in phase 1
        const back = await tl.load(hbm(4096), [4], "f32");
        seen = failure(() => back.data);
      },
      [],
      { memory },
    );
    const error = seen as KbError | null;
    expect(error?.code).toBe("TL_PENDING_HANDLE");
    expect(error?.message).toContain("holds bytes a compute result wrote in phase 1");
  });

  it("known bytes stored and loaded back are seen at once (stores are visible at issue)", async () => {
    const memory = memoryWith([1, 2, 3, 4]);
    let values: number[] = [];
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        await tl.store(hbm(4096), await tl.load(hbm(0), [4], "f32"));
        values = [...(await tl.load(hbm(4096), [4], "f32")).data.toFloat64Array()];
      },
      [],
      { memory },
    );
    expect(values).toEqual([1, 2, 3, 4]);
  });

  it("a view sees what was written through its tensor since it was made; a compute write makes it pending", async () => {
    const memory = memoryWith([1, 2, 3, 4, 5, 6, 7, 8]);
    let afterLoad: number[] = [];
    let afterMath: KbError | null = null;
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const buffer = await tl.load(hbm(0), [2, 4], "f32");
        const second = tl.view(buffer, 4, [1, 4]);
        await tl.load(hbm(0), [2, 4], "f32", { out: buffer }); // same values again
        await tl.load(hbm(16), [1, 4], "f32", { out: tl.view(buffer, 4, [1, 4]) }); // row 1 := [5..8]
        afterLoad = [...second.data.toFloat64Array()];
        await tl.add(buffer, buffer, { out: buffer }); // computed: unknown in phase 1
        afterMath = failure(() => second.data);
      },
      [],
      { memory },
    );
    expect(afterLoad).toEqual([5, 6, 7, 8]);
    expect((afterMath as KbError | null)?.code).toBe("TL_PENDING_HANDLE");
  });

  it("tl.empty holds no values until written; a released handle's data is refused", async () => {
    const memory = memoryWith([1, 2]);
    const errors: KbError[] = [];
    let loaded: number[] = [];
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const buffer = tl.empty([2], "f32");
        errors.push(failure(() => buffer.data));
        loaded = [...(await tl.load(hbm(0), [2], "f32", { out: buffer })).data.toFloat64Array()];
        const mark = tl.scratchMark();
        const tmp = await tl.load(hbm(0), [2], "f32");
        tl.scratchRelease(mark);
        errors.push(failure(() => tmp.data));
      },
      [],
      { memory },
    );
    expect(errors[0]?.message).toContain("holds no values: write it first");
    expect(loaded).toEqual([1, 2]);
    expect(errors[1]?.code).toBe("TL_INVALID_CALL");
    expect(errors[1]?.message).toContain("was released by tl.scratchRelease");
  });

  it("every completed load is reported with the bytes the kernel saw and its call site", async () => {
    const memory = memoryWith([1, 2, 3, 4, 5, 6]);
    const seen: LoadObservation[] = [];
    (memory as TestMemory & { observeLoad: (o: LoadObservation) => void }).observeLoad = (o) => seen.push(o);
    await runKernel(
      machineOf(),
      async function observed(tl: TLContext) {
        await tl.load(hbm(4), [2, 1], "f32", { stride: 3 }); // elements 1 and 4
      },
      [],
      { memory },
    );
    expect(seen).toHaveLength(1);
    const [load] = seen as [LoadObservation];
    expect(load).toMatchObject({
      kernel: "observed",
      pe: "sip0.cube0.pe0",
      src: hbm(4),
      rows: 2,
      rowBytes: 4,
      srcStride: 12,
    });
    expect([...new Float32Array(load.bytes.buffer, load.bytes.byteOffset, 2)]).toEqual([2, 5]);
    expect(load.site).toMatch(/^packages\/tl\/src\/phase1-values\.test\.ts:\d+:\d+$/);
  });
});
