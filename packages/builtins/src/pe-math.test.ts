import { describe, expect, it } from "vitest";
import { simdNs } from "./pe-impls.js";

// pe_math_v1's timing reads each op's default cycles and lane-tree passes from the op table
// (@kb/oplog's MATH_OPS); the expected times are worked out by hand from its formula.
describe("pe_math_v1 timing (simdNs)", () => {
  const params = { freq_ghz: 1, lanes: 64, op_cycles: {}, overhead_cycles: 4, queue_depth: 4 };

  it("charges the table's cycles per vector of lanes plus the overhead", () => {
    // 128 x 128 = 16384 elements = 256 vectors of 64; exp costs 4 cycles a vector.
    expect(simdNs(params, "exp", 16384, 0)).toBe(256 * 4 + 4);
    expect(simdNs(params, "div", 16384, 0)).toBe(256 * 4 + 4);
    expect(simdNs(params, "add", 16384, 0)).toBe(256 + 4);
    expect(simdNs({ ...params, freq_ghz: 2 }, "exp", 16384, 0)).toBe((256 * 4 + 4) / 2);
  });

  it("adds a lane tree per row for a reduction, twice for softmax", () => {
    // [8, 128] along the last axis: 16 vectors; 8 rows; tree ceil(log2(min(128, 64))) = 6 cycles.
    expect(simdNs(params, "sum", 1024, 128)).toBe(16 * 1 + 8 * 6 + 4);
    expect(simdNs(params, "max", 1024, 128)).toBe(16 * 1 + 8 * 6 + 4);
    expect(simdNs(params, "softmax", 1024, 128)).toBe(16 * 11 + 8 * 6 * 2 + 4);
    // An elementwise op has no tree even with a row length.
    expect(simdNs(params, "relu", 1024, 128)).toBe(16 + 4);
  });

  it("lets op_cycles override the table, and adds up ops joined with +", () => {
    expect(simdNs({ ...params, op_cycles: { exp: 2 } }, "exp", 16384, 0)).toBe(256 * 2 + 4);
    expect(simdNs(params, "relu+mul+sigmoid", 64, 0)).toBe(1 + 1 + 6 + 4);
    // An op the table does not know costs one cycle a vector.
    expect(simdNs(params, "unknown", 64, 0)).toBe(1 + 4);
  });
});
