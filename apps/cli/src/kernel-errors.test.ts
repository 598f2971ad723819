import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runKb } from "./test-support.js";

const fixture = (name: string) => fileURLToPath(new URL(`__fixtures__/${name}`, import.meta.url));
const run = (...argv: string[]) => runKb(["run", ...argv]);

// Mistakes in a kernel end the run with a located error and exit 1, before any result is printed:
// a report that looks successful must never come from a kernel that went wrong.
describe("kb run with a kernel that misuses tl", () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  beforeEach(() => {
    rejections.length = 0;
    process.on("unhandledRejection", onRejection);
  });
  afterEach(async () => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    process.off("unhandledRejection", onRejection);
    expect(rejections).toEqual([]);
  });

  it("a tl call that is not awaited: KERNEL_FAILED naming both calls and lines, exit 1, no results", async () => {
    const failed = await run(fixture("unawaited-bench.ts"), "--verify");
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toMatch(
      /^\[KERNEL_FAILED\] \S*unawaited-bench\.ts:9:\d+ kernel forgetful on sip0\.cube0\.pe0 at t=[\d.]+ ns: tl\.store at \S*unawaited-bench\.ts:8:\d+ was still in flight when tl\.load at \S*unawaited-bench\.ts:9:\d+ was issued: await every tl call/,
    );
  });

  it("an f32 tile stored into an f16 tensor: refused at the store, naming tensor, dtypes, kernel, PE and tl.cast", async () => {
    const failed = await run(fixture("dtype-store-bench.ts"));
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toMatch(
      /^\[TL_INVALID_CALL\] \S*dtype-store-bench\.ts:10:\d+ kernel rowsExp on sip0\.cube0\.pe0/,
    );
    expect(failed.stderr).toContain(
      "tl.store of handle #2 (f32 [4, 16] in tcm) from tl.exp into y (f16 [16, 16])",
    );
    expect(failed.stderr).toContain('await tl.cast(x, "f16")');
  });

  it("the same store after three tl calls on its line: the column is the one node gives without call-site tags", async () => {
    // The tags added to the line before the store (after the load's, exp's and cast's arguments)
    // are taken back out of the column: 123 is what the build before tags (870efb9) printed.
    const failed = await run(fixture("same-line-bench.ts"));
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /^\[TL_INVALID_CALL\] \S*same-line-bench\.ts:9:123 kernel rowsExpOneLine on sip0\.cube0\.pe0 at t=[\d.]+ ns: tl\.store of handle #2/,
    );
  });
});
