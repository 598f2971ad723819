// Triton's random numbers of packages/tl/README.md ("Random numbers"): philox(seed, offset) is
// Philox 4x32 with 10 rounds of the counter (offset mod 2^32, 0, 0, 0) keyed by the seed's two
// words, written here from the README's round formula with BigInt products; `uniform` is Triton's
// `uint_to_uniform_float`, and `randn` the README's Box-Muller in f32 steps.

import { invalid } from "./dtype.js";
import { fromRounded, type RefTensor } from "./tensor.js";

const WORD = (1n << 32n) - 1n;

/** The four words of Philox 4x32-10 for `seed` at `offset`, as the README's round formula says. */
export function philox(seed: number, offset: number): bigint[] {
  const key = BigInt.asUintN(64, BigInt(seed));
  let k0 = key & WORD;
  let k1 = key >> 32n;
  let c = [BigInt.asUintN(32, BigInt(offset)), 0n, 0n, 0n] as [bigint, bigint, bigint, bigint];
  for (let round = 0; round < 10; round++) {
    const b = 0xcd9e8d57n * c[2];
    const a = 0xd2511f53n * c[0];
    c = [(b >> 32n) ^ c[1] ^ k0, b & WORD, (a >> 32n) ^ c[3] ^ k1, a & WORD];
    k0 = (k0 + 0x9e3779b9n) & WORD;
    k1 = (k1 + 0xbb67ae85n) & WORD;
  }
  return c;
}

/** `uniform(w)`: w as an i32 x, -x - 1 when negative, times 4.6566127342e-10, all in f32. */
export function uniform(word: bigint): number {
  const x = Number(BigInt.asIntN(32, word));
  return Math.fround(Math.fround(x < 0 ? -x - 1 : x) * Math.fround(4.6566127342e-10));
}

/**
 * `tl.randint(seed, offsets)` (u32: the first word), `tl.rand` / `tl.randn` (f32), of `offsets`'
 * shape (i32 offsets).
 */
export function random(op: "randint" | "rand" | "randn", seed: number, offsets: RefTensor): RefTensor {
  if (!Number.isSafeInteger(seed)) throw invalid(op, `the seed must be an integer, got ${seed}.`);
  if (offsets.dtype !== "i32") throw invalid(op, `offsets must be i32, got ${offsets.dtype}.`);
  const out = new Float64Array(offsets.data.length);
  for (let i = 0; i < out.length; i++) {
    const [w0, w1] = philox(seed, offsets.data[i] as number) as [bigint, bigint];
    if (op === "randint") {
      out[i] = Number(w0);
      continue;
    }
    if (op === "rand") {
      out[i] = uniform(w0);
      continue;
    }
    const f = Math.fround;
    const u1 = Math.max(f(1e-7), uniform(w0));
    const r = f(Math.sqrt(f(-2 * f(Math.log(u1)))));
    out[i] = f(r * f(Math.cos(f(f(6.283185307179586) * uniform(w1)))));
  }
  return fromRounded(out, offsets.shape, op === "randint" ? "u32" : "f32");
}
