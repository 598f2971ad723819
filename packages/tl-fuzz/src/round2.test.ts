import { describe, expect, it } from "vitest";
import { buildProgram, type RawStep } from "./build.js";
import { check } from "./check.js";
import { kernelSource } from "./codegen.js";
import { evaluate } from "./evaluate.js";
import * as ref from "./reference/index.js";

/** A program of 10 rows in blocks of 4 (3 blocks, one PE each) from `steps`. */
function program(steps: RawStep[]) {
  return buildProgram({ seed: 5, rows: 9, blockRows: 3, pes: 1, persistent: false, special: false, steps });
}

/** Kind 0 with a = 0: a new split input of 7 columns (b = 4) of DTYPES[c] (0 f32, 3 i8, 4 i32). */
const load = (c: number): RawStep => ({ kind: 0, a: 0, b: 4, c, d: 0 });

describe("the evaluator's integer bit ops (README: two's-complement bits, shifts out of range)", () => {
  const i32 = (values: number[]) => ref.tensor(values, [values.length], "i32");
  const i8 = (values: number[]) => ref.tensor(values, [values.length], "i8");
  it("and, or, xor act on the two's-complement bits; not is -x - 1 wrapped", () => {
    expect([...ref.bits("and", i32([-6, 12]), i32([3, 10])).data]).toEqual([2, 8]);
    expect([...ref.bits("or", i32([-8]), 5).data]).toEqual([-3]);
    expect([...ref.bits("xor", i32([5]), -1).data]).toEqual([-6]);
    expect([...ref.bits("not", i32([7, -2147483648])).data]).toEqual([-8, 2147483647]);
    expect([...ref.bits("not", i8([-128])).data]).toEqual([127]);
  });
  it("shl wraps, shr floors (arithmetic), amounts outside [0, bits) shift everything out", () => {
    expect([...ref.bits("shl", i8([100]), 1).data]).toEqual([-56]);
    expect([...ref.bits("shl", i32([1, 3, 3]), i32([31, 32, -1])).data]).toEqual([-2147483648, 0, 0]);
    expect([...ref.bits("shr", i32([-7, -7, 7]), i32([1, 32, 40])).data]).toEqual([-4, -1, 0]);
    expect([...ref.bits("shr", i8([-128]), 7).data]).toEqual([-1]);
  });
  it("on u32 the bits are unsigned: shr is logical, not and shl wrap into [0, 2^32)", () => {
    const u32 = (values: number[]) => ref.tensor(values, [values.length], "u32");
    expect([...ref.bits("shr", u32([2 ** 31, 2 ** 32 - 1]), 31).data]).toEqual([1, 1]);
    expect([...ref.bits("not", u32([0, 5])).data]).toEqual([2 ** 32 - 1, 2 ** 32 - 6]);
    expect([...ref.bits("shl", u32([3]), 31).data]).toEqual([2 ** 31]);
    expect([...ref.bits("xor", u32([2 ** 32 - 1]), 1).data]).toEqual([2 ** 32 - 2]);
    expect([...ref.binary("sub", u32([0]), 1).data]).toEqual([2 ** 32 - 1]);
    expect([...ref.binary("div", u32([7]), 0).data]).toEqual([2 ** 32 - 1]);
  });
});

describe("round-2 steps drawn by the differential tester (kinds 20-22)", () => {
  it("kind 20 draws shl of an i32 value by a number; phase 1, phase 2 and the evaluator agree", async () => {
    // b = 3 -> shl, c = 1 -> a number amount, d = 1 -> 1.
    const p = program([load(4), { kind: 20, a: 0, b: 3, c: 1, d: 1 }]);
    expect(p.steps.map((step) => step.kind)).toEqual(["load", "bits", "store"]);
    expect(kernelSource(p)).toContain("const v1 = await tl.shl(v0, 1);");
    const x = p.inputs[0]?.values ?? [];
    expect([...(evaluate(p)[0]?.data ?? [])]).toEqual(x.map((v) => v * 2 + 0));
    expect((await check(p)).failure).toBeNull();
  });

  it("kind 20 draws xor of two i32 tensors, and casts a float value to i32 before not", async () => {
    // Two i32 inputs, then b = 2 -> xor, c = 0 -> a tensor partner, d = 1 -> v1.
    const xor = program([load(4), load(4), { kind: 20, a: 0, b: 2, c: 0, d: 1 }]);
    expect(kernelSource(xor)).toContain("const v2 = await tl.xor(v0, v1);");
    const [x0, x1] = [xor.inputs[0]?.values ?? [], xor.inputs[1]?.values ?? []];
    expect([...(evaluate(xor)[0]?.data ?? [])]).toEqual(x0.map((v, i) => v ^ (x1[i] as number)));
    expect((await check(xor)).failure).toBeNull();
    // An f32 value: b = 5 -> not, of its i32 cast (truncation toward zero: -1.875 -> -1, ~-1 = 0).
    const not = program([load(0), { kind: 20, a: 0, b: 5, c: 0, d: 0 }]);
    expect(not.steps.map((step) => step.kind)).toEqual(["load", "cast", "bits", "store", "store"]);
    expect(kernelSource(not)).toContain("const v2 = await tl.not(v1);");
    expect(not.inputs[0]?.values[0]).toBe(-1.875);
    expect(evaluate(not)[1]?.data[0]).toBe(0); // O0 holds the cast, O1 the not
    expect((await check(not)).failure).toBeNull();
    // a = 3 casts to the fourth width, i64 (then u8 for a = 1): ~-1 is 0 there too; u8 saturates
    // -1.875 -> -1 -> 0, and ~0 = 255.
    const wide = program([load(0), { kind: 20, a: 3, b: 5, c: 0, d: 0 }]);
    expect(wide.steps[1]).toMatchObject({ kind: "cast", dtype: "i64" });
    expect(evaluate(wide)[1]?.data[0]).toBe(0);
    expect((await check(wide)).failure).toBeNull();
    const narrow = program([load(0), { kind: 20, a: 1, b: 5, c: 0, d: 0 }]);
    expect(narrow.steps[1]).toMatchObject({ kind: "cast", dtype: "u8" });
    expect(evaluate(narrow)[1]?.data[0]).toBe(255);
    expect((await check(narrow)).failure).toBeNull();
  });

  it("kind 21 draws tl.sum(x) without an axis: one [1, 1] value per block, the block's total", async () => {
    const p = program([load(0), { kind: 21, a: 0, b: 0, c: 0, d: 0 }]);
    expect(kernelSource(p)).toContain("const v1 = await tl.sum(v0); // every axis");
    expect(p.outputs[0]?.shape).toEqual([3, 1]);
    const x = p.inputs[0]?.values ?? [];
    // Blocks of 4, 4 and 2 rows of 7: elements [0, 28), [28, 56), [56, 70).
    const total = (from: number, to: number) => x.slice(from, to).reduce((s, v) => s + v, 0);
    expect([...(evaluate(p)[0]?.data ?? [])]).toEqual([total(0, 28), total(28, 56), total(56, 70)]);
    expect(total(0, 28)).toBe(4.625);
    expect((await check(p)).failure).toBeNull();
    // b = 1 -> max, on i8.
    const max = program([load(3), { kind: 21, a: 0, b: 1, c: 0, d: 0 }]);
    expect(kernelSource(max)).toContain("await tl.max(v0); // every axis");
    expect((await check(max)).failure).toBeNull();
  });

  it("kind 22 draws tl.rand and tl.randn at offsets (b * BR + r) * cols + j, equal to Philox's known answer", async () => {
    // b = 1 -> 3 columns, c = 0 -> rand, d = 0 -> seed 0.
    const p = program([load(0), { kind: 22, a: 0, b: 1, c: 0, d: 0 }]);
    expect(kernelSource(p)).toContain(
      "const v1 = await tl.rand(0, await tl.add(await tl.mul(tl.expandDims(await tl.add(tl.arange(0, rows), b * BR), 1), 3), tl.expandDims(tl.arange(0, 3), 0)));",
    );
    // Random123's known answer: philox4x32_10 of counter 0, key 0 starts with 0x6627e8d5.
    const f = Math.fround;
    expect(evaluate(p)[0]?.data[0]).toBe(f(f(0x6627e8d5) * f(4.6566127342e-10)));
    expect((await check(p)).failure).toBeNull();
    // c = 1 -> randn, d = 4 -> seed 2^33 + 7 (a key with a high word).
    const randn = program([load(0), { kind: 22, a: 0, b: 4, c: 1, d: 4 }]);
    expect(kernelSource(randn)).toContain("await tl.randn(8589934599, ");
    expect((await check(randn)).failure).toBeNull();
    // c = 2 -> randint: the word itself, u32 (stored as u32), then xor-ed with 15 (kind 20).
    const randint = program([
      load(0),
      { kind: 22, a: 0, b: 1, c: 2, d: 0 },
      { kind: 20, a: 0, b: 2, c: 1, d: 0 },
    ]);
    expect(kernelSource(randint)).toContain("const v1 = await tl.randint(0, ");
    expect(kernelSource(randint)).toContain("const v2 = await tl.xor(v1, 15);");
    const [words, xored] = evaluate(randint);
    expect(words?.dtype).toBe("u32");
    expect(words?.data[0]).toBe(0x6627e8d5);
    expect(xored?.data[0]).toBe(0x6627e8d5 ^ 15);
    expect((await check(randint)).failure).toBeNull();
  });

  it("kind 23 draws join and cat (reshaped to [rows, 2C]), split and permute of [rows, C/2, 2]", async () => {
    // Two f32 inputs of 7 columns; b = 0 -> join, 1 -> cat; c = 1 -> the partner v1.
    const join = program([load(0), load(0), { kind: 23, a: 0, b: 0, c: 1, d: 0 }]);
    expect(kernelSource(join)).toContain("const v2 = tl.reshape(await tl.join(v0, v1), [rows, 14]);");
    const [x0, x1] = [join.inputs[0]?.values ?? [], join.inputs[1]?.values ?? []];
    // Row 0 interleaves the rows: x0[0], x1[0], x0[1], x1[1], ...
    expect([...(evaluate(join)[0]?.data ?? [])].slice(0, 4)).toEqual([x0[0], x1[0], x0[1], x1[1]]);
    expect((await check(join)).failure).toBeNull();
    const cat = program([load(0), load(0), { kind: 23, a: 0, b: 1, c: 1, d: 0 }]);
    expect(kernelSource(cat)).toContain("const v2 = tl.reshape(await tl.cat(v0, v1), [rows, 14]);");
    // Block 0 (4 rows): its [8, 7] cat is x0's 28 elements then x1's, so row 0 is x0[0 .. 13].
    expect([...(evaluate(cat)[0]?.data ?? [])].slice(0, 14)).toEqual(x0.slice(0, 14));
    expect((await check(cat)).failure).toBeNull();
    // 8 columns (b = 5); b = 2 -> split, d = 1 -> the odd columns; b = 3 -> permute.
    const split = program([
      { kind: 0, a: 0, b: 5, c: 0, d: 0 },
      { kind: 23, a: 0, b: 2, c: 0, d: 1 },
    ]);
    expect(kernelSource(split)).toContain("const v1 = (await tl.split(tl.reshape(v0, [rows, 4, 2])))[1];");
    const x = split.inputs[0]?.values ?? [];
    expect([...(evaluate(split)[0]?.data ?? [])].slice(0, 4)).toEqual([x[1], x[3], x[5], x[7]]);
    expect((await check(split)).failure).toBeNull();
    const permute = program([
      { kind: 0, a: 0, b: 5, c: 0, d: 0 },
      { kind: 23, a: 0, b: 3, c: 0, d: 0 },
    ]);
    expect(kernelSource(permute)).toContain(
      "const v1 = tl.reshape(await tl.permute(tl.reshape(v0, [rows, 4, 2]), [0, 2, 1]), [rows, 8]);",
    );
    // Row 0: the even columns, then the odd ones.
    expect([...(evaluate(permute)[0]?.data ?? [])].slice(0, 8)).toEqual(
      [0, 2, 4, 6, 1, 3, 5, 7].map((j) => x[j]),
    );
    expect((await check(permute)).failure).toBeNull();
  });

  it("kind 24 draws a masked gather: columns past `on` are off (offsets no allocation holds), other there", async () => {
    // c = 3 -> 4 columns, a = 2 -> the first 2 on, d = 1 -> other = -1.
    const p = program([load(0), { kind: 24, a: 2, b: 0, c: 3, d: 1 }]);
    expect(kernelSource(p)).toContain("mask: await tl.lt(tl.arange(0, 4), 2), other: -1 });");
    const idx = p.inputs[1]?.values ?? [];
    expect(idx.slice(2)).toEqual([2 ** 20, 2 ** 20]);
    const x = p.inputs[0]?.values ?? [];
    expect([...(evaluate(p)[0]?.data ?? [])].slice(0, 4)).toEqual([
      x[idx[0] as number],
      x[idx[1] as number],
      -1,
      -1,
    ]);
    expect((await check(p)).failure).toBeNull();
  });

  it("kind 25 draws a scatter of a value's columns through a permutation: out[r, idx[j]] = x[r, j]", async () => {
    const p = program([load(0), { kind: 25, a: 0, b: 0, c: 0, d: 0 }]);
    expect(p.steps.map((step) => step.kind)).toEqual(["load", "scatter"]);
    expect(kernelSource(p)).toContain("await tl.store(O0, v0, { offsets: ");
    const idx = p.inputs[1]?.values ?? [];
    expect([...idx].sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const x = p.inputs[0]?.values ?? [];
    const out = evaluate(p)[0]?.data ?? [];
    expect(idx.map((j) => out[j])).toEqual(x.slice(0, 7)); // row 0: x[0, c] lands in column idx[c]
    expect((await check(p)).failure).toBeNull();
    // c = 1 -> masked: d = 3 -> columns 0..2 on. A plain store of x first, then the scatter, so
    // column idx[c] of row 0 holds x[0, c] for c < 3 and x[0, j] elsewhere.
    const masked = program([load(0), { kind: 25, a: 0, b: 0, c: 1, d: 3 }]);
    expect(kernelSource(masked)).toContain("mask: await tl.lt(tl.arange(0, 7), 3) });");
    const m = masked.inputs[1]?.values ?? [];
    expect(m.slice(3)).toEqual([2 ** 20, 2 ** 20, 2 ** 20, 2 ** 20]);
    const row = x.slice(0, 7);
    m.slice(0, 3).forEach((j, c) => {
      row[j] = x[c] as number;
    });
    expect([...(evaluate(masked)[0]?.data ?? [])].slice(0, 7)).toEqual(row);
    expect((await check(masked)).failure).toBeNull();
  });

  it("kind 26 draws a masked tile wider than the row: [rows, 8] of a 7-column input, other in column 7", async () => {
    // An i8 input (c = 3), d = 1 -> other = -1.
    const p = program([load(3), { kind: 26, a: 0, b: 0, c: 0, d: 1 }]);
    expect(kernelSource(p)).toContain(
      'const v1 = await tl.load(X0.at(b * BR, 0), [rows, 8], "i8", { stride: 7, mask: await tl.lt(tl.arange(0, 8), 7), other: -1 });',
    );
    const x = (p.inputs[0]?.values ?? []).map((v) => v + 0); // i8 holds no -0
    expect([...(evaluate(p)[0]?.data ?? [])].slice(0, 16)).toEqual([
      ...x.slice(0, 7),
      -1,
      ...x.slice(7, 14),
      -1,
    ]);
    expect((await check(p)).failure).toBeNull();
  });
});
