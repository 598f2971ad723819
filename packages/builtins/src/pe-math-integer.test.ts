import { describe, expect, it } from "vitest";
import { simdNs } from "./pe-impls.js";

// PE_MATH timing of the integer ops (docs/latency-model.md, `pe_math_v1`), by hand: 64 lanes at
// 1 GHz, 4 cycles of overhead; 4096 elements are 64 vectors.
describe("pe_math_v1 timing of mod, shifts, floor and ceil", () => {
  const params = { freq_ghz: 1, lanes: 64, op_cycles: {}, overhead_cycles: 4, queue_depth: 4 };

  it("charges mod as a division, a multiply and a subtract, a shift or floor as one ALU op", () => {
    expect(simdNs(params, "mod", 4096, 0)).toBe(64 * 6 + 4); // 388
    expect(simdNs(params, "shl", 4096, 0)).toBe(64 * 1 + 4); // 68
    expect(simdNs(params, "shr", 4096, 0)).toBe(64 * 1 + 4);
    expect(simdNs(params, "floor", 100, 0)).toBe(2 * 1 + 4); // 100 elements: 2 vectors
    expect(simdNs(params, "ceil", 4096, 0)).toBe(64 * 1 + 4);
  });
});

describe("pe_math_v1 timing of Triton's random numbers", () => {
  const params = { freq_ghz: 1, lanes: 64, op_cycles: {}, overhead_cycles: 4, queue_depth: 4 };

  it("charges Philox 4x32-10 as 100 ALU cycles a vector, plus the conversions", () => {
    // A BLOCK of 1024 offsets = 16 vectors: randint 16 x 100 + 4 = 1604 ns at 1 GHz.
    expect(simdNs(params, "randint", 1024, 0)).toBe(16 * 100 + 4);
    // rand: + select, convert, multiply = 103 a vector: 1652 ns.
    expect(simdNs(params, "rand", 1024, 0)).toBe(16 * 103 + 4);
    // randn: 100 + 2 x 3 + Box-Muller 18 = 124 a vector: 1988 ns.
    expect(simdNs(params, "randn", 1024, 0)).toBe(16 * 124 + 4);
  });
});
