import type { KbError } from "@kb/errors";
import type { PeCommand } from "@kb/spec";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { failure, hbmAt, listCommands, machineOf, runKernel } from "./test-support.js";

// A handle is valid or it is an error (issue 33, point 2): the accumulator a `tl.dot` consumed
// and scratch a `tl.scratchRelease` freed name no value any more; using them is TL_INVALID_CALL
// naming the consuming call and its line, at the line of the use. Lines are this file's, counted
// by hand.

/** `consumed-faults.test.ts:LINE:COL` of the error. */
function at(error: KbError): string {
  const { file, line, col } = error.context;
  return `${file?.split("/").at(-1) ?? "no file"}:${line ?? "?"}:${col ?? "?"}`;
}

async function run(kernel: (tl: TLContext) => Promise<void>): Promise<KbError> {
  return failure(runKernel(machineOf(), kernel));
}

/** Two f32 operands [2, 2] loaded from HBM. */
async function operands(tl: TLContext) {
  return [await tl.load(hbmAt(0), [2, 2], "f32"), await tl.load(hbmAt(64), [2, 2], "f32")] as const;
}

describe("fault: a dot's accumulator is consumed", () => {
  it("reading the tl.zeros accumulator after the dot (not the returned handle) is refused", async () => {
    const error = await run(async (tl) => {
      const [a, b] = await operands(tl);
      const acc = tl.zeros([2, 2], "f32");
      await tl.dot(a, b, acc);
      acc.data;
    });
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toMatch(
      /handle #2 \(f32 \[2, 2\] in tcm\)\.data is the accumulator of tl\.dot at .*consumed-faults\.test\.ts:32:16, which took its bytes/,
    );
    expect(error.message).toContain("use the handle tl.dot returned (`acc = await tl.dot(a, b, acc)`)");
    expect(at(error)).toBe("consumed-faults.test.ts:33:11");
  });

  it("storing an earlier result used as { acc } is refused at the store", async () => {
    const error = await run(async (tl) => {
      const [a, b] = await operands(tl);
      const sum = await tl.dot(a, b);
      await tl.dot(a, b, { acc: sum });
      await tl.store(hbmAt(128), sum);
    });
    expect(error.message).toMatch(/^\[TL_INVALID_CALL\].*tl\.store: handle #2 .*tl\.dot at .*:47:16/);
    expect(at(error)).toBe("consumed-faults.test.ts:48:16");
  });

  it("a reshape of the accumulator made before the dot is consumed with it", async () => {
    const error = await run(async (tl) => {
      const [a, b] = await operands(tl);
      const acc = tl.zeros([2, 2], "f32");
      const flat = tl.reshape(acc, [4]);
      await tl.dot(a, b, acc);
      await tl.exp(flat);
    });
    expect(error.message).toContain(
      "tl.exp: handle #3 (f32 [4] in tcm) from tl.reshape is the accumulator of tl.dot",
    );
    expect(at(error)).toBe("consumed-faults.test.ts:60:16");
  });

  it("the returned handle accumulates and stores (Triton's value semantics)", async () => {
    const commands = await listCommands(async (tl) => {
      const [a, b] = await operands(tl);
      let acc = tl.zeros([2, 2], "f32");
      acc = await tl.dot(a, b, acc);
      acc = await tl.dot(a, b, acc);
      await tl.store(hbmAt(128), acc);
    });
    expect(commands.map((c) => (c.kind === "gemm" ? `gemm+${c.accumulate}` : c.kind))).toEqual([
      "dma",
      "dma",
      "gemm+false",
      "gemm+true",
      "dma",
    ]);
  });

  it("a zeros view as the accumulator is written before the dot, never over its result", async () => {
    // The dot adds into the first half of z; storing the second half writes z's zeros to TCM.
    // Were the first dot to skip the fill (as for a whole fresh tl.zeros), that later fill would
    // overwrite the dot's result with zeros.
    const commands: PeCommand[] = await listCommands(async (tl) => {
      const [a, b] = await operands(tl);
      const z = tl.zeros([4, 2], "f32");
      const top = await tl.dot(a, b, tl.view(z, 0, [2, 2]));
      await tl.store(hbmAt(128), tl.view(z, 4, [2, 2]));
      await tl.store(hbmAt(256), top);
    });
    expect(commands.map((c) => (c.kind === "math" ? c.op : c.kind))).toEqual([
      "dma",
      "dma",
      "fill",
      "gemm",
      "dma",
      "dma",
    ]);
    expect(commands[3]).toMatchObject({ kind: "gemm", accumulate: true });
  });
});

describe("fault: released scratch names the release", () => {
  it("a tile used after tl.scratchRelease names the release's line", async () => {
    const error = await run(async (tl) => {
      const mark = tl.scratchMark();
      const x = await tl.load(hbmAt(0), [4], "f32");
      tl.scratchRelease(mark);
      await tl.exp(x);
    });
    expect(error.message).toMatch(
      /tl\.exp: handle #0 \(f32 \[4\] in tcm\) from tl\.load was released by tl\.scratchRelease at .*consumed-faults\.test\.ts:113:10; its TCM may hold other data now/,
    );
    expect(at(error)).toBe("consumed-faults.test.ts:114:16");
  });
});
