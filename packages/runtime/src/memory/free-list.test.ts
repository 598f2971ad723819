import { isKbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { thrown } from "../test-support.js";
import { FreeListAllocator } from "./free-list.js";

const MIB = 2 ** 20;

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [items.slice()];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
  );
}

describe("FreeListAllocator", () => {
  const make = (size = 1024, alignment?: number) =>
    new FreeListAllocator(
      alignment === undefined
        ? { name: "test.mem", base: 0x1000, size }
        : { name: "test.mem", base: 0x1000, size, alignment },
    );

  it("allocates first fit from the lowest address, rounding sizes up to the alignment", () => {
    const allocator = make();
    expect(allocator.alloc(1)).toBe(0x1000);
    expect(allocator.alloc(17)).toBe(0x1010); // the 1-byte allocation occupies 16 bytes
    expect(allocator.alloc(16)).toBe(0x1030); // 17 bytes occupy 32
    expect(allocator.stats()).toEqual({ used: 64, free: 960, largestFree: 960, allocations: 3 });
  });

  it("reuses the lowest hole that fits", () => {
    const allocator = make();
    const a = allocator.alloc(32);
    const b = allocator.alloc(64);
    allocator.alloc(32);
    allocator.free(a);
    allocator.free(b); // coalesces with a: one 96-byte hole at the base
    expect(allocator.alloc(80)).toBe(0x1000);
    expect(allocator.alloc(16)).toBe(0x1050); // the rest of the hole
    expect(allocator.alloc(16)).toBe(0x1080); // after the third allocation
  });

  it("frees without reuse: later allocations land where they would have, the freed one is still named", () => {
    const allocator = make();
    const a = allocator.alloc(32, "A");
    allocator.free(a, "sweep.ts:7:3", { reuse: false });
    expect(allocator.alloc(16)).toBe(0x1020); // not 0x1000: A's bytes are not handed out again
    expect(allocator.stats()).toEqual({ used: 48, free: 976, largestFree: 976, allocations: 1 });
    expect(thrown(() => allocator.checkAccess(a, 4, "tl.load")).message).toContain(
      '"A" (32 bytes), which was freed at sweep.ts:7:3',
    );
    expect(thrown(() => allocator.free(a)).message).toContain("already freed at sweep.ts:7:3 (double free)");
  });

  it("aligns starts to absolute multiples of the alignment when the base is not aligned", () => {
    const allocator = new FreeListAllocator({ name: "odd", base: 100, size: 1000, alignment: 64 });
    expect(allocator.alloc(1)).toBe(128);
    expect(allocator.alloc(64)).toBe(192);
    // the 28 bytes before 128 stay free but are too small for any aligned allocation
    expect(allocator.stats().free).toBe(1000 - 128);
  });

  it.each(permutations([0, 1, 2]).map((order) => ({ order })))(
    "coalesces three neighbours freed in the order $order",
    ({ order }) => {
      const allocator = make(48);
      const starts = [allocator.alloc(16), allocator.alloc(16), allocator.alloc(16)];
      expect(() => allocator.alloc(16)).toThrow(/cannot allocate/);
      for (const index of order) allocator.free(starts[index]!);
      expect(allocator.stats()).toEqual({ used: 0, free: 48, largestFree: 48, allocations: 0 });
      expect(allocator.alloc(48)).toBe(0x1000);
    },
  );

  it("rejects sizes that are zero, negative or not integers", () => {
    const allocator = make();
    for (const bytes of [0, -16, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = thrown(() => allocator.alloc(bytes, "weights"));
      expect(error.code).toBe("MEMORY_ALLOCATION");
      expect(error.message).toContain("positive integer");
      expect(error.message).toContain('"weights"');
    }
  });

  it("says what is free when nothing fits", () => {
    const allocator = make(1024);
    allocator.alloc(512);
    const error = thrown(() => allocator.alloc(600, "activations"));
    expect(error.code).toBe("MEMORY_ALLOCATION");
    expect(error.message).toBe(
      '[MEMORY_ALLOCATION] test.mem: cannot allocate 600 bytes for "activations", 608 bytes after rounding up to the 16 bytes alignment: 512 bytes free of its 1024 bytes (1 KiB), the largest free block is 512 bytes. Free allocations that are no longer needed, split the request into smaller pieces, or use a larger memory.',
    );
  });

  it("says when a request is larger than the whole memory, naming the tensor and the capacity in GiB", () => {
    const allocator = new FreeListAllocator({ name: "big.mem", base: 0, size: 2 ** 34, alignment: 2 * MIB });
    allocator.alloc(2 ** 30, "a");
    const error = thrown(() => allocator.alloc(2 ** 42, "x", { dtype: "f32", shape: [2 ** 20, 2 ** 20] }));
    expect(error.code).toBe("MEMORY_ALLOCATION");
    expect(error.message).toBe(
      '[MEMORY_ALLOCATION] big.mem: cannot allocate 4398046511104 bytes (4096 GiB) for "x" (f32 [1048576, 1048576]): more than the whole of big.mem, 17179869184 bytes (16 GiB), of which 16106127360 bytes (15 GiB) are free. Free allocations that are no longer needed, split the request into smaller pieces, or use a larger memory.',
    );
  });

  it("records the name, dtype and shape of an allocation when given", () => {
    const allocator = make();
    const a = allocator.alloc(24, "A", { dtype: "f16", shape: [3, 4] });
    const raw = allocator.alloc(8, "scratch");
    expect(allocator.allocationAt(a + 23)).toEqual({
      start: a,
      bytes: 24,
      reservedBytes: 32,
      what: "A",
      dtype: "f16",
      shape: [3, 4],
    });
    expect(allocator.allocationAt(raw)).toEqual({ start: raw, bytes: 8, reservedBytes: 16, what: "scratch" });
  });

  it("says which freed allocation an access hits and where it was freed", () => {
    const allocator = make();
    const a = allocator.alloc(64, "A", { dtype: "f32", shape: [16] });
    allocator.alloc(64, "B");
    allocator.free(a, "bench.ts:12:5");
    const error = thrown(() => allocator.checkAccess(a + 16, 16, "tl.load"));
    expect(error.code).toBe("MEMORY_ACCESS");
    expect(error.message).toBe(
      '[MEMORY_ACCESS] tl.load: [0x1010, 0x1020) (16 bytes) is not within one live allocation of test.mem; it lies in [0x1000, 0x1040) "A" (f32 [16], 64 bytes), which was freed at bench.ts:12:5 and not allocated since. Free a tensor only after the last kernel or copy that uses it.',
    );
    const double = thrown(() => allocator.free(a, "bench.ts:13:5"));
    expect(double.message).toContain(
      '"A" (f32 [16], 64 bytes) was already freed at bench.ts:12:5 (double free)',
    );
    // Allocated again: the old record is gone, the new allocation answers.
    expect(allocator.alloc(32, "C")).toBe(a);
    allocator.checkAccess(a, 32, "tl.load");
    expect(thrown(() => allocator.checkAccess(a + 32, 16, "tl.load")).message).not.toContain("freed at");
  });

  it("keeps where the most recent 1024 frees happened, and still knows older double frees", () => {
    const allocator = new FreeListAllocator({ name: "many", base: 0, size: 2000 * 16 });
    const starts = Array.from({ length: 1100 }, (_, index) => allocator.alloc(16, `t${index}`));
    starts.forEach((start, index) => {
      allocator.free(start, `bench.ts:${index + 1}:1`);
    });
    const newest = thrown(() => allocator.checkAccess(starts[1099]!, 4, "read"));
    expect(newest.message).toContain('"t1099" (16 bytes), which was freed at bench.ts:1100:1');
    expect(thrown(() => allocator.checkAccess(starts[76]!, 4, "read")).message).toContain(
      "which was freed at bench.ts:77:1",
    );
    const oldest = thrown(() => allocator.checkAccess(starts[0]!, 4, "read"));
    expect(oldest.message).not.toContain("freed at");
    expect(thrown(() => allocator.free(starts[0]!)).message).toContain("already freed (double free)");
  });

  it("tells fragmentation apart from a full memory and uses the given hint", () => {
    const allocator = new FreeListAllocator({ name: "frag", base: 0, size: 4096, hint: "Try elsewhere." });
    const blocks = [0, 1, 2, 3].map(() => allocator.alloc(1024));
    allocator.free(blocks[0]!);
    allocator.free(blocks[2]!);
    const error = thrown(() => allocator.alloc(2048));
    expect(error.message).toContain(
      "2048 bytes (2 KiB) free of its 4096 bytes (4 KiB), the largest free block is 1024 bytes (1 KiB)",
    );
    expect(error.message).toContain("fragmented");
    expect(error.message).toMatch(/Try elsewhere\.$/);
  });

  it("reports a double free, a free inside an allocation and a never-allocated address", () => {
    const allocator = make();
    const a = allocator.alloc(64, "a");
    allocator.alloc(64, "b");
    allocator.free(a);
    const double = thrown(() => allocator.free(a));
    expect(double.code).toBe("MEMORY_ALLOCATION");
    expect(double.message).toContain("already freed (double free)");
    const foreign = thrown(() => allocator.free(0x1048));
    expect(foreign.message).toContain(
      'inside the allocation [0x1040, 0x1080) "b" (64 bytes), 8 bytes after its start',
    );
    const never = thrown(() => allocator.free(0x1200));
    expect(never.message).toContain("never allocated by this allocator (it is free memory of test.mem)");
    const outside = thrown(() => allocator.free(0x10));
    expect(outside.message).toContain("it is outside test.mem [0x1000, 0x1400)");
  });

  it("forgets a freed start once it is allocated again", () => {
    const allocator = make();
    const a = allocator.alloc(64);
    allocator.free(a);
    expect(allocator.alloc(128)).toBe(a);
    allocator.free(a);
    expect(thrown(() => allocator.free(a)).message).toContain("double free");
    // a later allocation that covers a freed start without starting there makes it foreign
    const b = allocator.alloc(16);
    const c = allocator.alloc(16);
    allocator.free(c);
    allocator.free(b);
    allocator.alloc(64);
    expect(thrown(() => allocator.free(c)).message).toContain("inside the allocation");
  });

  it("finds the allocation containing an address, within the requested bytes", () => {
    const allocator = make();
    const a = allocator.alloc(10, "ten");
    expect(allocator.allocationAt(a + 9)).toEqual({ start: a, bytes: 10, reservedBytes: 16, what: "ten" });
    expect(allocator.allocationAt(a + 10)).toBeNull(); // padding
    expect(allocator.allocationAt(a - 1)).toBeNull();
    expect(allocator.liveAllocations()).toHaveLength(1);
  });

  it("checks that an access lies within one live allocation", () => {
    const allocator = make();
    const a = allocator.alloc(64, "x");
    const b = allocator.alloc(64, "y");
    allocator.checkAccess(a, 64, "read");
    allocator.checkAccess(a + 60, 4, "read");
    allocator.checkAccess(a + 64, 0, "empty read at the end");
    const spanning = thrown(() => allocator.checkAccess(a + 32, 64, "DMA read of x"));
    expect(spanning.code).toBe("MEMORY_ACCESS");
    expect(spanning.message).toBe(
      '[MEMORY_ACCESS] DMA read of x: [0x1020, 0x1060) (64 bytes) is not within one live allocation of test.mem; it starts inside the allocation [0x1000, 0x1040) "x" (64 bytes) but runs 32 bytes past its end. Check the address and length, and that the buffer is allocated and not yet freed.',
    );
    allocator.free(b);
    const freed = thrown(() => allocator.checkAccess(b, 4, "read of y"));
    expect(freed.message).toContain(
      'it lies in [0x1040, 0x1080) "y" (64 bytes), which was freed and not allocated since',
    );
    const past = thrown(() => allocator.checkAccess(b + 64, 4, "read"));
    expect(past.message).toContain(
      'the nearest live allocation, [0x1000, 0x1040) "x" (64 bytes), ends 64 bytes before it',
    );
    const below = thrown(() => allocator.checkAccess(0xff0, 32, "write"));
    expect(below.message).toContain("it starts 16 bytes before the allocation [0x1000, 0x1040)");
    allocator.free(a);
    expect(thrown(() => allocator.checkAccess(a + 200, 1, "read")).message).toContain(
      "test.mem has no live allocations",
    );
    expect(thrown(() => allocator.checkAccess(-1, 1, "read")).code).toBe("MEMORY_ACCESS");
  });

  it("resets to one free block", () => {
    const allocator = make();
    const a = allocator.alloc(100);
    allocator.alloc(200);
    allocator.reset();
    expect(allocator.stats()).toEqual({ used: 0, free: 1024, largestFree: 1024, allocations: 0 });
    expect(thrown(() => allocator.free(a)).message).toContain("never allocated");
    expect(allocator.alloc(1024)).toBe(0x1000);
  });

  it("keeps its books straight over many random allocations and frees", () => {
    // deterministic LCG: tests must not depend on Math.random
    let seed = 12345;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const allocator = new FreeListAllocator({ name: "fuzz", base: 0, size: 1 << 20, alignment: 64 });
    const live = new Map<number, number>();
    for (let step = 0; step < 2000; step++) {
      if (live.size > 0 && next() % 3 === 0) {
        const keys = [...live.keys()];
        const address = keys[next() % keys.length]!;
        allocator.free(address);
        live.delete(address);
      } else {
        const bytes = 1 + (next() % 8192);
        try {
          const address = allocator.alloc(bytes);
          expect(address % 64).toBe(0);
          live.set(address, bytes);
        } catch (error) {
          if (!isKbError(error, "MEMORY_ALLOCATION")) throw error;
        }
      }
      if (step % 50 === 0) {
        const ranges = [...live.entries()].sort((x, y) => x[0] - y[0]);
        const overlapping = ranges.filter(
          ([start], index) =>
            index > 0 && start < ranges[index - 1]![0] + Math.ceil(ranges[index - 1]![1] / 64) * 64,
        );
        expect(overlapping).toEqual([]);
        for (const [start, bytes] of ranges) expect(allocator.allocationAt(start)?.bytes).toBe(bytes);
      }
    }
    const used = [...live.values()].reduce((sum, bytes) => sum + Math.ceil(bytes / 64) * 64, 0);
    expect(allocator.stats().used).toBe(used);
    for (const address of live.keys()) allocator.free(address);
    expect(allocator.stats()).toEqual({ used: 0, free: 1 << 20, largestFree: 1 << 20, allocations: 0 });
  });

  it("rejects a bad base, size or alignment", () => {
    expect(thrown(() => new FreeListAllocator({ name: "m", base: -1, size: 16 })).code).toBe(
      "MEMORY_ALLOCATION",
    );
    expect(thrown(() => new FreeListAllocator({ name: "m", base: 0, size: 0 })).message).toContain("size");
    expect(
      thrown(() => new FreeListAllocator({ name: "m", base: 0, size: 16, alignment: 0 })).message,
    ).toContain("alignment");
  });
});
