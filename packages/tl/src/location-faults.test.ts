import type { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { failure, hbmAt, machineOf, runKernel } from "./test-support.js";

// Every tl error names the kernel's line (issue 33, point 5): the argument checks of the
// synchronous calls and of the math calls made before the command, and a misspelt tl op. Each
// kernel below is run on the simulator (runner mode), as kb run runs it; the expected
// `file:line:col` is the line of the call in this file, counted by hand.

/** `location-faults.test.ts:LINE:COL` of the error, or what is missing. */
function at(error: KbError): string {
  const { file, line, col } = error.context;
  return `${file?.split("/").at(-1) ?? "no file"}:${line ?? "?"}:${col ?? "?"}`;
}

async function run(kernel: (tl: TLContext) => Promise<void>): Promise<KbError> {
  return failure(runKernel(machineOf(), kernel));
}

describe("fault: argument checks name the kernel's line", () => {
  it("tl.where with operands of two dtypes", async () => {
    const error = await run(async (tl) => {
      const a = tl.zeros([4], "f32");
      const b = tl.zeros([4], "f16");
      await tl.where(await tl.lt(a, 0), a, b);
    });
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toContain("tl.where: cond must be i1");
    expect(at(error)).toBe("location-faults.test.ts:26:16");
  });

  it("tl.cast to an unknown dtype", async () => {
    const error = await run(async (tl) => {
      await tl.cast(tl.zeros([4], "f32"), "f64" as never);
    });
    expect(error.message).toContain('tl.cast: unknown dtype "f64"');
    expect(at(error)).toBe("location-faults.test.ts:35:16");
  });

  it("tl.reshape to a shape of another size", async () => {
    const error = await run(async (tl) => {
      const x = await tl.load(hbmAt(0), [4, 4], "f32");
      tl.reshape(x, [3, 5]);
    });
    expect(error.message).toContain("does not hold them");
    expect(at(error)).toBe("location-faults.test.ts:44:10");
  });

  it("tl.expandDims at an axis out of range", async () => {
    const error = await run(async (tl) => {
      const x = await tl.load(hbmAt(0), [4, 4], "f32");
      tl.expandDims(x, 5);
    });
    expect(error.message).toContain("tl.expandDims: axis 5 is out of range");
    expect(at(error)).toBe("location-faults.test.ts:53:10");
  });

  it("a scalar that is not finite, through a handle's method", async () => {
    const error = await run(async (tl) => {
      const x = tl.zeros([4], "f32");
      await x.add(Number.NaN);
    });
    expect(error.message).toContain("tl.add: scalar must be finite");
    expect(at(error)).toBe("location-faults.test.ts:62:15");
  });
});

describe("fault: a misspelt tl op", () => {
  it("names the nearest op and the kernel's line", async () => {
    const error = await run(async (tl) => {
      const x = await tl.load(hbmAt(0), [4], "f32");
      await (tl as unknown as { expp(x: unknown): Promise<void> }).expp(x);
    });
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toContain("tl.expp is not a function: tl has no op expp; did you mean tl.exp?");
    expect(at(error)).toBe("location-faults.test.ts:73:68");
  });

  it("an unknown name far from every op is named without a guess", async () => {
    const error = await run(async (tl) => {
      (tl as unknown as { frobnicate(): void }).frobnicate();
    });
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toContain("tl has no op frobnicate");
    expect(error.message).not.toContain("did you mean");
    expect(at(error)).toBe("location-faults.test.ts:82:49");
  });
});
