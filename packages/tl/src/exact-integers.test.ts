import { toBigInts } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { failure, machineOf, runKernel, TestMemory } from "./test-support.js";

// BigInt constants (a Triton user's Python ints past 2^53) in phase 1: tl.full and scalars keep
// them exact, phase 1's known values are exact, and a BigInt a dtype cannot hold is refused at
// its line. Expectations by hand.

describe("exact 64-bit integers in phase 1", () => {
  it("adds 2^60 + 3 (a BigInt) to a tl.full of 2^60 + 1 exactly", async () => {
    const seen: Record<string, bigint[]> = {};
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const x = tl.full([2], 2n ** 60n + 1n, "i64");
        seen.scalar = toBigInts((await tl.add(x, 2n ** 60n + 3n)).data);
        seen.tile = toBigInts((await tl.sub(x, tl.full([2], 2n ** 60n + 3n, "i64"))).data);
        // A small BigInt is a plain number scalar: 5n + 2 = 7.
        seen.small = toBigInts((await tl.add(tl.full([1], 5n, "i32"), 2n)).data);
        seen.u64 = toBigInts((await tl.add(tl.full([1], 2n ** 64n - 2n, "u64"), 3)).data);
      },
      [],
      { memory: new TestMemory() },
    );
    expect(seen.scalar).toEqual([2n ** 61n + 4n, 2n ** 61n + 4n]);
    expect(seen.tile).toEqual([-2n, -2n]);
    expect(seen.small).toEqual([7n]);
    // (2^64 - 2) + 3 = 2^64 + 1 wraps to 1.
    expect(seen.u64).toEqual([1n]);
  });

  it("refuses a BigInt the dtype cannot hold, at the call's line", async () => {
    for (const [value, dtype] of [
      [2n ** 63n, "i64"],
      [2n ** 40n, "i32"],
      [3n, "f32"],
    ] as const) {
      const error = await failure(
        runKernel(machineOf(), async (tl: TLContext) => void tl.full([1], value, dtype), [], {
          memory: new TestMemory(),
        }),
      );
      expect(error.code).toBe("TL_INVALID_CALL");
      expect(error.detail).toContain(`${dtype} cannot hold ${value}`);
      expect(error.context.file).toMatch(/exact-integers\.test\.ts$/);
      expect(error.context.line).toBe(40); // the tl.full line above
    }
  });
});
