import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { commandList } from "./command-list.js";
import type { TLContext } from "./context.js";
import { failure, placementOf } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
const run = (kernel: (tl: TLContext) => Promise<void>) =>
  commandList(kernel, [], {
    kernel: "k",
    placement: placementOf(),
    scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
  });

// A view changes what the bytes mean without moving them. Every command that reads a view must
// read it as what it means, or refuse it: a command that read a transposed view in stored order
// would compute on the wrong elements and no one would notice until --verify.
describe("views reach only the commands that read them as views", () => {
  it("a transposed ref operand of a composite GEMM is streamed transposed (transposeA / transposeB)", async () => {
    const commands = await run(async (tl) => {
      const x = tl.ref(hbm(0), [32, 24], "f16");
      const w = tl.trans(tl.ref(hbm(65536), [40, 24], "f16")); // W stored [N, K]
      await tl.composite("gemm", x, w, { outPtr: hbm(131072) });
      const xt = tl.trans(tl.ref(hbm(0), [24, 32], "f16")); // A stored [K, M]
      await tl.composite("gemm", xt, tl.ref(hbm(65536), [24, 40], "f16"), { outPtr: hbm(131072) });
    });
    expect(commands[0]).toMatchObject({ kind: "composite_gemm", m: 32, n: 40, k: 24, transposeB: true });
    expect(commands[0]).not.toHaveProperty("transposeA");
    expect(commands[1]).toMatchObject({ kind: "composite_gemm", m: 32, n: 40, k: 24, transposeA: true });
    expect(commands[1]).not.toHaveProperty("transposeB");
  });

  it("math ops, stores and sends refuse a transposed TCM view", async () => {
    for (const use of [
      (tl: TLContext, t: Awaited<ReturnType<TLContext["load"]>>) => tl.exp(t),
      (tl: TLContext, t: Awaited<ReturnType<TLContext["load"]>>) => tl.add(t, 1),
      (tl: TLContext, t: Awaited<ReturnType<TLContext["load"]>>) => tl.sum(t, 0),
      (tl: TLContext, t: Awaited<ReturnType<TLContext["load"]>>) => tl.cast(t, "f32"),
      (tl: TLContext, t: Awaited<ReturnType<TLContext["load"]>>) => tl.store(hbm(4096), t),
      (tl: TLContext, t: Awaited<ReturnType<TLContext["load"]>>) => tl.send("east", t),
    ]) {
      const error = await failure(
        run(async (tl) => {
          const t = await tl.load(hbm(0), [4, 8], "f16");
          await use(tl, tl.trans(t));
        }),
      );
      expect(error.code).toBe("TL_INVALID_CALL");
      expect(error.message).toContain("transposed view (tl.trans)");
    }
  });

  it("a composite math op refuses a transposed operand", async () => {
    const error = await failure(
      run(async (tl) => {
        await tl.composite("math", tl.trans(tl.ref(hbm(0), [8, 4], "f16")), null, {
          outPtr: hbm(4096),
          mathOp: "exp",
        });
      }),
    );
    expect(error.message).toContain("only a composite GEMM streams a transposed operand");
  });

  it("a tile loaded with a stride is not streamed again as if contiguous", async () => {
    const error = await failure(
      run(async (tl) => {
        // Columns 16..31 of a [16, 64] f16 matrix: not contiguous in HBM.
        const a = await tl.load(hbm(32), [16, 16], "f16", { stride: 64 });
        await tl.composite("gemm", a, tl.ref(hbm(65536), [16, 8], "f16"), { outPtr: hbm(131072) });
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toContain("was loaded with stride 64");
    // A stride equal to the row length is contiguous: streamed from where it was loaded.
    const commands = await run(async (tl) => {
      const a = await tl.load(hbm(0), [16, 16], "f16", { stride: 16 });
      await tl.composite("gemm", a, tl.ref(hbm(65536), [16, 8], "f16"), { outPtr: hbm(131072) });
    });
    expect(commands[1]).toMatchObject({ kind: "composite_gemm", a: hbm(0) });
  });
});

describe("calls refused where phase 2 would compute something else", () => {
  it("an integer dot accumulates only into i32 (a float accumulator would be truncated)", async () => {
    const error = await failure(
      run(async (tl) => {
        const a = await tl.load(hbm(0), [4, 4], "i8");
        await tl.dot(a, a, { acc: tl.zeros([4, 4], "f32") });
      }),
    );
    expect(error.message).toContain("i8 operands accumulate in i32, but the accumulator");
  });

  it("a composite math op is given the tensors and scalars it needs at the call", async () => {
    const ref = (tl: TLContext) => tl.ref(hbm(0), [4, 8], "f16");
    const cases: [string, (tl: TLContext) => Promise<unknown>, string][] = [
      [
        "add without b",
        (tl) => tl.composite("math", ref(tl), null, { outPtr: hbm(4096), mathOp: "add" }),
        "needs b or a scalar",
      ],
      [
        "clamp without bounds",
        (tl) => tl.composite("math", ref(tl), null, { outPtr: hbm(4096), mathOp: "clamp" }),
        "needs one input and scalars [lo, hi]",
      ],
      [
        "where",
        (tl) => tl.composite("math", ref(tl), ref(tl), { outPtr: hbm(4096), mathOp: "where" }),
        "cannot run as a composite",
      ],
      [
        "exp with b",
        (tl) => tl.composite("math", ref(tl), ref(tl), { outPtr: hbm(4096), mathOp: "exp" }),
        "takes one input, got 2",
      ],
    ];
    for (const [, call, text] of cases) {
      const error = await failure(run(async (tl) => void (await call(tl))));
      expect(error.code).toBe("TL_INVALID_CALL");
      expect(error.message).toContain(text);
    }
    // With a scalar, a binary op runs.
    await run(async (tl) => {
      await tl.composite("math", ref(tl), null, { outPtr: hbm(4096), mathOp: "add", scalars: [-Infinity] });
    });
  });
});
