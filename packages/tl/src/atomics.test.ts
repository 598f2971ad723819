import type { DmaCommand, PeCommand } from "@kb/spec";
import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { failure, hbmAt, machineOf, runKernel, TestMemory } from "./test-support.js";

const hbm = hbmAt;
const numbers = (t: Tensor) => [...t.toFloat64Array()];
const dmas = (commands: PeCommand[]) => commands.filter((c): c is DmaCommand => c.kind === "dma");

function memoryWith(values: number[], at: number, dtype: "f32" | "i32" = "i32", memory = new TestMemory()) {
  memory.write(hbm(at), Tensor.fromArray(values, [values.length], dtype).bytes);
  return memory;
}
const read = (memory: TestMemory, at: number, n: number, dtype: "f32" | "i32" = "i32") =>
  numbers(new Tensor([n], dtype, memory.read(hbm(at), n * 4)));

describe("tl.atomicAdd and the other atomics", () => {
  it("adds through offsets element by element: repeated bins all count, old values returned", async () => {
    // 4 bins of i32 at HBM 0 (all 0); ids [1, 3, 1, 1, 0] at 4096.
    const memory = memoryWith([0, 0, 0, 0], 0);
    memoryWith([1, 3, 1, 1, 0], 4096, "i32", memory);
    let old: number[] = [];
    const { commands } = await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const ids = await tl.load(hbm(4096), [5], "i32");
        old = numbers((await tl.atomicAdd(hbm(0), tl.full([5], 1, "i32"), { offsets: ids })).data);
      },
      [],
      { memory },
    );
    expect(read(memory, 0, 4)).toEqual([1, 3, 0, 1]);
    expect(old).toEqual([0, 0, 1, 2, 0]);
    const atomic = dmas(commands).find((c) => c.atomic !== undefined);
    expect(atomic?.dst).toBe(hbm(0));
    // [tileOffset, deviceOffset, bytes] per run: elements 0 and 1 are not consecutive in memory.
    expect(atomic?.indexed?.runs).toEqual([0, 4, 4, 4, 12, 4, 8, 4, 4, 12, 4, 4, 16, 0, 4]);
    expect(atomic?.atomic).toMatchObject({ op: "add", dtype: "i32" });
  });

  it("a contiguous tile at the pointer; max, min, xchg and cas (cmp first, as Triton's)", async () => {
    const memory = memoryWith([5, 5, 5, 5], 0, "f32");
    const got: number[][] = [];
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const v = await tl.load(hbm(0), [4], "f32");
        got.push(numbers((await tl.atomicMax(hbm(0), tl.full([4], 4, "f32"))).data));
        got.push(
          numbers(
            (await tl.atomicMin(hbm(0), tl.full([4], 4.5, "f32"), { sem: "relaxed", scope: "gpu" })).data,
          ),
        );
        got.push(
          numbers((await tl.atomicCas(hbm(0), tl.full([4], 4.5, "f32"), tl.full([4], 7, "f32"))).data),
        );
        got.push(numbers((await tl.atomicXchg(hbm(0), v)).data));
      },
      [],
      { memory },
    );
    expect(got).toEqual([
      [5, 5, 5, 5],
      [5, 5, 5, 5],
      [4.5, 4.5, 4.5, 4.5],
      [7, 7, 7, 7],
    ]);
    expect(read(memory, 0, 4, "f32")).toEqual([5, 5, 5, 5]);
  });

  it("refuses an unknown sem, and a mask without offsets (TL_INVALID_CALL at the kernel's line)", async () => {
    const run = (kernel: (tl: TLContext) => Promise<void>) => failure(runKernel(machineOf(), kernel));
    const sem = await run(async (tl) => {
      // @ts-expect-error: not one of Triton's orders
      await tl.atomicAdd(hbm(0), tl.full([4], 1, "f32"), { sem: "seq_cst" });
    });
    expect(sem.code).toBe("TL_INVALID_CALL");
    expect(sem.message).toMatch(/sem "seq_cst" is not one of Triton's: acq_rel, acquire, release, relaxed/);
    expect(sem.message).toMatch(/atomics\.test\.ts:\d+/);
    const mask = await run(async (tl) => {
      await tl.atomicAdd(hbm(0), tl.full([4], 1, "f32"), { mask: await tl.lt(tl.arange(0, 4), 2) });
    });
    expect(mask.message).toMatch(/a mask goes with offsets/);
  });
});
