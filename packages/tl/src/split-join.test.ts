import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { hbmAt, timeOf } from "./test-support.js";

// The timing of tl.join / split / permute / cat: the PE_MATH data movement ops they are made of
// (docs/latency-model.md, "Split, join, permute, cat"), each `overhead_cycles + vectors` cycles
// (copy and transpose: 1 cycle a vector of `lanes` elements, no lane tree). The schema's
// pe_math_v1: 64 lanes at 1 GHz, overhead 4 cycles; each command also pays the PE_CPU's
// dispatch_ns (2 ns).

/** Two f32 tiles of `shape` loaded from HBM (the part every kernel below shares). */
async function loads(tl: TLContext, shape: number[]) {
  return [await tl.load(hbmAt(0), shape, "f32"), await tl.load(hbmAt(65536), shape, "f32")] as const;
}

// Each op also fetches its operand from PE_TCM and stores its result there (1 ns + B / 512 GB/s each).
const tcm = (bytes: number) => 2 * (1 + bytes / 512);

describe("split, join, permute, cat are timed as PE_MATH data movement (hand-computed)", () => {
  it("join of two [128] f32: copy 128 (2 + 4) twice, transpose 256 (4 + 4), 3 dispatches = 26 ns, + TCM 4 + 4 + 6", async () => {
    const base = await timeOf(async (tl: TLContext) => void (await loads(tl, [128])));
    const joined = await timeOf(async (tl: TLContext) => {
      const [a, b] = await loads(tl, [128]);
      await tl.join(a, b);
    });
    expect(joined - base).toBeCloseTo(6 + 6 + 8 + 3 * 2 + 2 * tcm(512) + tcm(1024), 9);
  });

  it("split of [128, 2]: one transpose of 256 elements = 8 + 2 ns + TCM 6; cat of two [128]: two copies = 2 x (6 + 2 + 4) ns", async () => {
    const base = await timeOf(async (tl: TLContext) => void (await loads(tl, [128, 2])));
    const split = await timeOf(async (tl: TLContext) => {
      const [a] = await loads(tl, [128, 2]);
      await tl.split(a);
    });
    expect(split - base).toBeCloseTo(8 + 2 + tcm(1024), 9);
    const catBase = await timeOf(async (tl: TLContext) => void (await loads(tl, [128])));
    const cat = await timeOf(async (tl: TLContext) => {
      const [a, b] = await loads(tl, [128]);
      await tl.cat(a, b);
    });
    expect(cat - catBase).toBeCloseTo(2 * (6 + 2 + tcm(512)), 9);
  });

  it("permute [2, 3, 64] by [2, 0, 1]: two transposes of 384 elements, (6 + 4 + 2 + TCM 8) ns each; no byte moved, no op", async () => {
    const base = await timeOf(async (tl: TLContext) => void (await loads(tl, [2, 3, 64])));
    const permuted = await timeOf(async (tl: TLContext) => {
      const [a] = await loads(tl, [2, 3, 64]);
      await tl.permute(a, [2, 0, 1]);
    });
    expect(permuted - base).toBeCloseTo(2 * (6 + 4 + 2 + tcm(1536)), 9);
    const same = await timeOf(async (tl: TLContext) => {
      const [a] = await loads(tl, [2, 3, 64]);
      expect((await tl.permute(tl.reshape(a, [2, 1, 192]), [1, 0, 2])).shape).toEqual([1, 2, 192]);
    });
    expect(same).toBe(base);
  });
});
