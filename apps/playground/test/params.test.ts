import { describe, expect, it } from "vitest";
import { parseParams } from "../src/ui/params.js";

// The playground's params field reads as `kb run --param key=value` does.
describe("the params field", () => {
  it("takes key=value pairs separated by spaces, commas or new lines", () => {
    expect(parseParams("n=65536 dtype=f32")).toEqual({ n: "65536", dtype: "f32" });
    expect(parseParams("n=1,dtype=f32\nseed=3,")).toEqual({ n: "1", dtype: "f32", seed: "3" });
  });

  it("keeps a comma-separated list value whole, as on the command line", () => {
    expect(parseParams("sizes=256x128x64,128x64x128,64x64x64 BLOCK_SIZE_M=64")).toEqual({
      sizes: "256x128x64,128x64x128,64x64x64",
      BLOCK_SIZE_M: "64",
    });
  });

  it("names a pair without key= that no key comes before", () => {
    expect(() => parseParams("65536 dtype=f32")).toThrow('params: "65536" is not key=value.');
    expect(() => parseParams(",x")).toThrow('params: "x" is not key=value.');
  });
});
