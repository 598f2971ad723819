import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "./index.js";

// The example of packages/data-executor/README.md, run as written: `console` is a local that
// collects what the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("writes, overwrites, copies and reads typed data", () => {
    const printed: unknown[] = [];
    const console = { log: (...values: unknown[]) => printed.push(values.length === 1 ? values[0] : values) };
    // README example start

    const store = new MemoryStore();
    // A device address: SIP 0, cube 1, HBM offset 0xfff8 (encodeAddress of @kb/topology), 8 bytes
    // before a 64 KiB page boundary.
    const x = 0x400_0000_fff8;

    // The host injects a tensor: four f32 values, as bytes.
    store.writeTyped(x, new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer), 4);

    // A later, smaller write wins for the bytes it covers: the high half of element 1 (little-endian)
    // turns 2.0f (0x40000000) into 5.0f (0x40a00000).
    store.write(x + 6, new Uint8Array([0xa0, 0x40]));
    console.log(new Float32Array(store.readTyped(x, 16, 4).buffer)); // Float32Array(4) [ 1, 5, 3, 4 ]

    // Memory never written reads as zeros; copies may overlap (memmove).
    console.log(store.read(x + 16, 4)); // Uint8Array(4) [ 0, 0, 0, 0 ]
    store.copy(x, x + 4, 12); // shift elements 0..2 up by one
    console.log(new Float32Array(store.readTyped(x + 4, 12, 4).buffer)); // Float32Array(3) [ 1, 5, 3 ]

    // Addresses of typed accesses must be multiples of the element size.
    try {
      store.readTyped(x + 2, 4, 4);
    } catch (error) {
      console.log((error as Error).message.split(":")[0]); // [MEMORY_ACCESS] readTyped at 0x4000000fffa (length 4)
    }
    console.log(store.pageCount, store.bytesWritten); // 2 30
    // README example end
    expect(x).toBe(1 * 2 ** 42 + 0xfff8); // cube 1 is bits [42, 48) of the address
    expect(printed).toEqual([
      new Float32Array([1, 5, 3, 4]),
      new Uint8Array(4),
      new Float32Array([1, 5, 3]),
      "[MEMORY_ACCESS] readTyped at 0x4000000fffa (length 4)",
      [2, 30],
    ]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
