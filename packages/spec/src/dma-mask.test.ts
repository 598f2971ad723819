import { describe, expect, it } from "vitest";
import { maskPieces, maskRunsProblem } from "./dma-mask.js";

describe("maskPieces", () => {
  it("a 1-D tail is one shorter block", () => {
    expect(maskPieces([0, 4000], 4096, 4096, 4096)).toEqual([
      { srcOffset: 0, dstOffset: 0, rows: 1, bytes: 4000, srcStride: 4000, dstStride: 4000 },
    ]);
  });

  it("a column mask over a strided 2-D tile is one block of shorter rows", () => {
    // 4 rows of 64 f32 (256 B) 1024 B apart in HBM, packed in TCM; columns < 32 on.
    const runs = [0, 128, 256, 128, 512, 128, 768, 128];
    expect(maskPieces(runs, 256, 1024, 256)).toEqual([
      { srcOffset: 0, dstOffset: 0, rows: 4, bytes: 128, srcStride: 1024, dstStride: 256 },
    ]);
  });

  it("a row mask is one block of fewer rows; uneven runs are pieces of their own", () => {
    expect(maskPieces([0, 256, 256, 256], 256, 1024, 256)).toEqual([
      { srcOffset: 0, dstOffset: 0, rows: 2, bytes: 256, srcStride: 1024, dstStride: 256 },
    ]);
    // Rows 0 and 1 have 8 bytes on at the start, row 2 has 16: spacing breaks after row 1.
    expect(maskPieces([0, 8, 256, 8, 512, 16], 256, 1024, 256)).toEqual([
      { srcOffset: 0, dstOffset: 0, rows: 2, bytes: 8, srcStride: 1024, dstStride: 256 },
      { srcOffset: 2048, dstOffset: 512, rows: 1, bytes: 16, srcStride: 16, dstStride: 16 },
    ]);
  });

  it("maskRunsProblem names runs that overlap or cross a row's end", () => {
    expect(maskRunsProblem([0, 128, 256, 128], 2, 256)).toBeNull();
    expect(maskRunsProblem([0, 128, 100, 8], 2, 256)).toMatch(/after the previous run's end \(128\)/);
    expect(maskRunsProblem([200, 100], 2, 256)).toMatch(/past its row's end \(byte 256\)/);
    expect(maskRunsProblem([0], 1, 256)).toMatch(/pairs/);
  });
});
