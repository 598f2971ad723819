import { isKbError, type KbError } from "@kb/errors";
import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import { MEMORY_STORE_PAGE_BYTES, MemoryStore } from "./index.js";

const PAGE = MEMORY_STORE_PAGE_BYTES;

function thrown(run: () => unknown): KbError {
  try {
    run();
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError, nothing was thrown");
}

/** Compares byte arrays quickly (toEqual walks large typed arrays slowly), naming the first difference. */
function expectBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(actual.length).toBe(expected.length);
  const index = actual.findIndex((value, position) => value !== expected[position]);
  expect(index, `first differing byte at index ${index}`).toBe(-1);
}

/** `length` bytes counting up from `first`, modulo 256 (a pattern where misplaced bytes show). */
function pattern(length: number, first = 0): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let index = 0; index < length; index++) bytes[index] = (first + index * 7) & 0xff;
  return bytes;
}

describe("MemoryStore", () => {
  it("uses 64 KiB pages", () => {
    expect(PAGE).toBe(65536);
    expect(new MemoryStore().pageBytes).toBe(65536);
  });

  it("takes a smaller page size: a 24 KiB write holds two 16 KiB pages, not one of 64 KiB", () => {
    const store = new MemoryStore({ pageBytes: 16384 });
    const data = pattern(24 * 1024, 5);
    store.write(3 * PAGE, data); // 16 KiB pages 12 and 13 (the second holds 8 KiB)
    expect(store.pageCount).toBe(2);
    expect(store.read(3 * PAGE, data.length)).toEqual(data);
    store.copy(3 * PAGE, 7 * PAGE + 16000, data.length); // crosses 16 KiB boundaries at other offsets
    expect(store.read(7 * PAGE + 16000, data.length)).toEqual(data);
    store.discard(3 * PAGE, 16384); // page 12 only
    expect(store.read(3 * PAGE, 16384)).toEqual(new Uint8Array(16384));
    expect(store.read(3 * PAGE + 16384, 8192)).toEqual(data.subarray(16384));
  });

  it("refuses a page size that is not a power of two from 4 KiB to 64 KiB", () => {
    for (const pageBytes of [2048, 12288, 131072, 4096.5]) {
      expect(() => new MemoryStore({ pageBytes })).toThrow(
        /pageBytes must be a power of two from 4096 to 65536/,
      );
    }
    expect(new MemoryStore({ pageBytes: 4096 }).pageBytes).toBe(4096);
  });

  it("reads never-written memory as zeros without creating pages", () => {
    const store = new MemoryStore();
    expect(store.read(0x1_0000_0000, 100)).toEqual(new Uint8Array(100));
    expect(store.read(2 ** 53 - 4, 4)).toEqual(new Uint8Array(4));
    expect(store.read(12, 0)).toEqual(new Uint8Array(0));
    expect(store.pageCount).toBe(0);
  });

  it("writes and reads a 200 KiB range starting 100 bytes before a page boundary", () => {
    const store = new MemoryStore();
    const address = 5 * PAGE - 100;
    const data = pattern(200 * 1024, 3);
    store.write(address, data);
    expect(store.pageCount).toBe(5); // pages 4..8: 100 bytes + 3 full pages + the remaining 70 KiB - 100
    expect(store.bytesWritten).toBe(200 * 1024);
    expectBytes(store.read(address, data.length), data);
    // around the edges: zeros outside, data inside
    expect(store.read(address - 2, 4)).toEqual(new Uint8Array([0, 0, data[0]!, data[1]!]));
    const end = address + data.length;
    expect(store.read(end - 2, 4)).toEqual(new Uint8Array([data.at(-2)!, data.at(-1)!, 0, 0]));
    // a read of a slice that starts mid-page and crosses two boundaries
    expectBytes(store.read(5 * PAGE - 10, PAGE + 20), data.subarray(90, 90 + PAGE + 20));
  });

  it("lets a later write win byte by byte", () => {
    const store = new MemoryStore();
    store.write(1000, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
    store.write(1003, new Uint8Array([0xaa, 0xbb]));
    expect(store.read(1000, 8)).toEqual(new Uint8Array([1, 2, 3, 0xaa, 0xbb, 6, 7, 8]));
    // a partial overwrite across a page boundary
    store.write(PAGE - 4, new Uint8Array(8).fill(9));
    store.write(PAGE - 1, new Uint8Array([1, 2]));
    expect(store.read(PAGE - 4, 8)).toEqual(new Uint8Array([9, 9, 9, 1, 2, 9, 9, 9]));
  });

  it("copies what it writes, so the caller may reuse its buffer", () => {
    const store = new MemoryStore();
    const buffer = new Uint8Array([1, 2, 3]);
    store.write(0, buffer);
    buffer.fill(0);
    expect(store.read(0, 3)).toEqual(new Uint8Array([1, 2, 3]));
    const copy = store.read(0, 3);
    copy[0] = 42;
    expect(store.read(0, 1)[0]).toBe(1);
  });

  it("reads into a caller's array, zero-filling what was never written", () => {
    const store = new MemoryStore();
    store.write(PAGE + 2, new Uint8Array([5, 6]));
    const target = new Uint8Array(8).fill(0xff);
    expect(store.readInto(PAGE, target.subarray(2, 6))).toEqual(new Uint8Array([0, 0, 5, 6]));
    expect(target).toEqual(new Uint8Array([0xff, 0xff, 0, 0, 5, 6, 0xff, 0xff]));
    // a range whose first page is missing and second exists
    expect(store.readInto(PAGE - 2, new Uint8Array(6))).toEqual(new Uint8Array([0, 0, 0, 0, 5, 6]));
  });

  it("fills ranges, creating no pages for zeros", () => {
    const store = new MemoryStore();
    store.fill(PAGE - 3, 6, 7);
    expect(store.read(PAGE - 4, 8)).toEqual(new Uint8Array([0, 7, 7, 7, 7, 7, 7, 0]));
    store.fill(PAGE - 1, 2, 0);
    expect(store.read(PAGE - 4, 8)).toEqual(new Uint8Array([0, 7, 7, 0, 0, 7, 7, 0]));
    store.fill(10 * PAGE, 3 * PAGE, 0);
    expect(store.pageCount).toBe(2);
    expect(store.bytesWritten).toBe(6 + 2 + 3 * PAGE);
    expect(thrown(() => store.fill(0, 1, 256)).message).toContain("integer in [0, 255]");
  });

  it("copies with memmove semantics when ranges overlap", () => {
    const store = new MemoryStore();
    const data = pattern(3 * PAGE, 1);
    const base = 7 * PAGE + 5;
    // destination above the source, overlapping, crossing page boundaries on both sides
    store.write(base, data);
    store.copy(base, base + 1000, data.length);
    expectBytes(store.read(base + 1000, data.length), data);
    expectBytes(store.read(base, 1000), data.subarray(0, 1000));
    // destination below the source
    store.clear();
    store.write(base, data);
    store.copy(base, base - PAGE - 3, data.length);
    expectBytes(store.read(base - PAGE - 3, data.length), data);
    expectBytes(store.read(base + data.length - PAGE - 3, PAGE + 3), data.subarray(data.length - PAGE - 3));
    // a small overlap within one page
    store.write(16, new Uint8Array([1, 2, 3, 4, 5]));
    store.copy(16, 18, 5);
    expect(store.read(16, 7)).toEqual(new Uint8Array([1, 2, 1, 2, 3, 4, 5]));
    store.copy(18, 16, 5);
    expect(store.read(16, 7)).toEqual(new Uint8Array([1, 2, 3, 4, 5, 4, 5]));
  });

  it("copies never-written memory as zeros over existing bytes", () => {
    const store = new MemoryStore();
    store.write(PAGE - 2, new Uint8Array([1, 2, 3, 4]));
    store.copy(50 * PAGE, PAGE - 1, 2);
    expect(store.read(PAGE - 2, 4)).toEqual(new Uint8Array([1, 0, 0, 4]));
    store.copy(60 * PAGE, 70 * PAGE, 10);
    expect(store.pageCount).toBe(2);
  });

  it("checks alignment to the element size in the typed helpers", () => {
    const store = new MemoryStore();
    const values = new Float32Array([1.5, -2, 3.25]);
    store.writeTyped(64, new Uint8Array(values.buffer), 4);
    const bytes = store.readTyped(64, 12, 4);
    expect(new Float32Array(bytes.buffer)).toEqual(values);
    // a reinterpret cast is allowed: the same bytes as f16 pairs
    expect(store.readTyped(64, 12, 2)).toEqual(bytes);
    const misaligned = thrown(() => store.readTyped(66, 8, 4));
    expect(misaligned.code).toBe("MEMORY_ACCESS");
    expect(misaligned.message).toBe(
      "[MEMORY_ACCESS] readTyped at 0x42 (length 8): the address is not aligned to the element size of 4 bytes (it is 2 bytes past a multiple). Tensor data must start at a multiple of its dtype size (alignment = dtype size); place it at 0x40 or 0x44.",
    );
    expect(thrown(() => store.writeTyped(2, new Uint8Array(4), 4)).message).toContain(
      "alignment = dtype size",
    );
    expect(thrown(() => store.writeTyped(0, new Uint8Array(6), 4)).message).toContain(
      "not a whole number of 4-byte elements",
    );
    expect(thrown(() => store.readTyped(0, 4, 0)).message).toContain("element size");
  });

  it("rejects bad addresses, lengths and ranges past 2^53 with MEMORY_ACCESS", () => {
    const store = new MemoryStore();
    const negative = thrown(() => store.write(-1, new Uint8Array(1)));
    expect(negative.code).toBe("MEMORY_ACCESS");
    expect(negative.message).toContain("write at -1 (length 1)");
    expect(thrown(() => store.read(1.5, 1)).code).toBe("MEMORY_ACCESS");
    expect(thrown(() => store.read(2 ** 53, 1)).message).toContain("[0, 2^53)");
    const wraps = thrown(() => store.read(2 ** 53 - 4, 8));
    expect(wraps.message).toBe(
      "[MEMORY_ACCESS] read at 0x1ffffffffffffc (length 8): the range runs past the end of the address space, 2^53; ranges do not wrap around.",
    );
    expect(thrown(() => store.read(0, -1)).message).toContain("length must be an integer >= 0, got -1");
    expect(thrown(() => store.copy(0, 2 ** 53 - 1, 2)).message).toContain("copy destination");
    expect(store.pageCount).toBe(0);
  });

  it("clear forgets everything", () => {
    const store = new MemoryStore();
    store.write(0, new Uint8Array([1]));
    store.clear();
    expect(store.pageCount).toBe(0);
    expect(store.bytesWritten).toBe(0);
    expect(store.read(0, 1)).toEqual(new Uint8Array([0]));
  });

  it("matches a byte-by-byte model over random writes, fills, copies and discards", () => {
    // a flat array over a 4-page window as the reference; deterministic LCG, no Math.random
    const window = 4 * PAGE;
    const base = 3 * PAGE;
    const model = new Uint8Array(window);
    const store = new MemoryStore();
    let seed = 7;
    const next = (limit: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % limit;
    };
    for (let step = 0; step < 300; step++) {
      const length = next(PAGE + 100);
      const offset = next(window - length + 1);
      const kind = next(4);
      if (kind === 3) {
        // Pages dropped here are handed out again, zeroed, by later writes.
        store.discard(base + offset, length);
        model.fill(0, offset, offset + length);
      } else if (kind === 0) {
        const data = pattern(length, step);
        store.write(base + offset, data);
        model.set(data, offset);
      } else if (kind === 1) {
        const value = next(256);
        store.fill(base + offset, length, value);
        model.fill(value, offset, offset + length);
      } else {
        const to = next(window - length + 1);
        store.copy(base + offset, base + to, length);
        model.copyWithin(to, offset, offset + length);
      }
    }
    expectBytes(store.read(base, window), model);
  });
});

describe("MemoryStore tensors (ADR-0020 D7: byte semantics are canonical)", () => {
  it("reading with another dtype reinterprets the bytes", () => {
    const store = new MemoryStore();
    store.writeTensor(0, Tensor.fromArray([1], [1], "f32"));
    // 1.0f is 0x3f800000.
    expect(store.readTensor(0, [1], "i32").getFlat(0)).toBe(0x3f800000);
    // Its upper half read as bf16 is 1.0 (bf16 is the top 16 bits of f32).
    expect(store.readTensor(2, [1], "bf16").getFlat(0)).toBe(1);
  });

  it("a read straddling two tensors, or longer than one, is resolved byte by byte", () => {
    const store = new MemoryStore();
    store.writeTensor(0, Tensor.fromArray([1, 2], [2], "f32"));
    store.writeTensor(8, Tensor.fromArray([3, 4], [2], "f32"));
    expect([...store.readTensor(4, [2], "f32").toFloat64Array()]).toEqual([2, 3]);
    expect([...store.readTensor(0, [6], "f32").toFloat64Array()]).toEqual([1, 2, 3, 4, 0, 0]);
  });

  it("a tensor access misaligned for its dtype is a clear error", () => {
    const store = new MemoryStore();
    expect(() => store.readTensor(2, [1], "f32")).toThrow(/0x2/);
    expect(() => store.writeTensor(6, Tensor.fromArray([1], [1], "i32"))).toThrow(/alignment|aligned/);
  });
});

describe("touched", () => {
  it("is true where a page holding the range was written, false where everything reads as zeros", () => {
    const store = new MemoryStore();
    expect(store.touched(0, 1 << 20)).toBe(false);
    store.write(70_000, new Uint8Array([0])); // page 1 (64 KiB pages)
    expect(store.touched(0, 65_536)).toBe(false); // page 0 only
    expect(store.touched(65_535, 2)).toBe(true); // pages 0 and 1
    expect(store.touched(2 ** 40, 2 ** 30)).toBe(false); // more pages than exist: scans the pages held
    expect(store.touched(0, 2 ** 40)).toBe(true);
    expect(store.touched(70_000, 0)).toBe(false);
  });
});

describe("discard", () => {
  it("hands dropped pages out again zeroed, over more than a block of pages", () => {
    const store = new MemoryStore();
    const big = pattern(40 * 2 ** 20, 5); // 640 pages: more than one 32 MiB block
    store.write(0, big);
    store.discard(0, big.length);
    expect(store.pageCount).toBe(0);
    store.write(2 ** 30 + 3, new Uint8Array([1]));
    store.write(2 * PAGE + 1, new Uint8Array([2]));
    expect(store.read(2 ** 30, 6)).toEqual(new Uint8Array([0, 0, 0, 1, 0, 0]));
    expect(store.read(2 * PAGE, PAGE)).toEqual(new Uint8Array(PAGE).fill(2, 1, 2));
    store.write(0, big);
    expectBytes(store.read(0, big.length), big);
    // One page dropped among held ones is the next page handed out, zeroed.
    const small = new MemoryStore();
    small.write(0, pattern(3 * PAGE, 9));
    small.discard(PAGE, PAGE);
    small.write(10 * PAGE + 5, new Uint8Array([7]));
    expect(small.read(10 * PAGE, PAGE)).toEqual(new Uint8Array(PAGE).fill(7, 5, 6));
    expectBytes(small.read(0, PAGE), pattern(PAGE, 9));
    expectBytes(small.read(2 * PAGE, PAGE), pattern(3 * PAGE, 9).subarray(2 * PAGE));
    expect(small.pageCount).toBe(3);
  }, 60_000); // 40 MiB written, compared and rewritten: seconds on a loaded 2-core machine

  it("forgets a range: it reads as zeros, whole pages are dropped, bytes around it stay", () => {
    const store = new MemoryStore();
    store.write(PAGE - 4, pattern(3 * PAGE + 8, 1)); // pages 0..4
    expect(store.pageCount).toBe(5);
    const written = store.bytesWritten;
    store.discard(PAGE - 2, 3 * PAGE + 4); // from 2 bytes before page 1 to 2 bytes into page 4
    expect(store.pageCount).toBe(2); // pages 1..3 dropped; pages 0 and 4 zeroed in part
    expect(store.bytesWritten).toBe(written);
    const data = pattern(3 * PAGE + 8, 1);
    expect(store.read(PAGE - 4, 4)).toEqual(new Uint8Array([data[0]!, data[1]!, 0, 0]));
    expect(store.touched(PAGE, 3 * PAGE)).toBe(false);
    expect(store.read(4 * PAGE, 4)).toEqual(new Uint8Array([0, 0, data.at(-2)!, data.at(-1)!]));
    // The memory can be written again afterwards.
    store.write(2 * PAGE, new Uint8Array([9]));
    expect(store.read(2 * PAGE, 2)).toEqual(new Uint8Array([9, 0]));
  });

  it("walks the pages it holds when the range spans more than that, and checks the range", () => {
    const store = new MemoryStore();
    store.write(3 * PAGE, new Uint8Array([1]));
    store.write(2 ** 40, new Uint8Array([2]));
    store.discard(0, 2 ** 40); // 2^24 pages in range, 2 held
    expect(store.pageCount).toBe(1);
    expect(store.read(2 ** 40, 1)).toEqual(new Uint8Array([2]));
    store.discard(5, 0);
    expect(thrown(() => store.discard(2 ** 53 - 1, 2)).code).toBe("MEMORY_ACCESS");
  });
});
