import { encodeAddress } from "@kb/topology";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commandList } from "./command-list.js";
import type { TLContext } from "./context.js";
import { failure, machineOf, placementOf, runKernel } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });

// A kernel that forgets one await used to print a complete, successful-looking report, then
// Node's unhandled-rejection dump (the exit code came from Node, not from kb).
describe("a tl call that is not awaited", () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  beforeEach(() => {
    rejections.length = 0;
    process.on("unhandledRejection", onRejection);
  });
  afterEach(async () => {
    // Unhandled rejections are reported after a macrotask turn.
    await new Promise((resolve) => setTimeout(resolve, 10));
    process.off("unhandledRejection", onRejection);
    expect(rejections).toEqual([]);
  });

  async function forgetsStoreAwait(tl: TLContext) {
    const x = await tl.load(hbm(0), [8], "f32");
    tl.store(hbm(4096), x); // no await
    await tl.load(hbm(64), [8], "f32");
  }

  async function forgetsLastAwait(tl: TLContext) {
    const x = await tl.load(hbm(0), [8], "f32");
    tl.store(hbm(4096), x); // no await, and the kernel returns
  }

  it("is a located KERNEL_FAILED naming both calls and their lines (runner mode)", async () => {
    const error = await failure(runKernel(machineOf(), forgetsStoreAwait));
    expect(error.code).toBe("KERNEL_FAILED");
    expect(error.message).toMatch(
      /kernel forgetsStoreAwait on sip0\.cube0\.pe0 at t=[\d.]+ ns: tl\.store at packages\/tl\/src\/await\.test\.ts:(\d+):\d+ was still in flight when tl\.load at packages\/tl\/src\/await\.test\.ts:(\d+):\d+ was issued: await every tl call/,
    );
    const [, storeLine, loadLine] = /await\.test\.ts:(\d+):\d+ was still.*await\.test\.ts:(\d+):/.exec(
      error.message,
    ) as RegExpExecArray;
    expect(Number(loadLine)).toBe(Number(storeLine) + 1);
    expect(error.context).toMatchObject({ file: "packages/tl/src/await.test.ts", line: Number(loadLine) });
  });

  it("fails the kernel when it returns with the call still in flight (runner mode)", async () => {
    const error = await failure(runKernel(machineOf(), forgetsLastAwait));
    expect(error.code).toBe("KERNEL_FAILED");
    expect(error.message).toMatch(
      /the kernel returned while tl\.store at packages\/tl\/src\/await\.test\.ts:\d+:\d+ was still in flight: await it/,
    );
  });

  it("fails the same way in command-list mode", async () => {
    const options = { kernel: "k", placement: placementOf(), scratch: { offset: 2 ** 20, bytes: 2 ** 20 } };
    const both = await failure(commandList(forgetsStoreAwait, [], options));
    expect(both.message).toMatch(/tl\.store at .* was still in flight when tl\.load at .* was issued/);
    const last = await failure(commandList(forgetsLastAwait, [], options));
    expect(last.message).toMatch(/the kernel returned while tl\.store at .* was still in flight/);
  });

  it("a failed call fails the kernel even when the kernel catches it", async () => {
    const error = await failure(
      runKernel(machineOf(), async function swallows(tl: TLContext) {
        try {
          await tl.load(hbm(0), [0], "f32");
        } catch {
          // ignored on purpose
        }
        await tl.cycles(1);
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toContain("tl.load: shape must be a non-empty list of positive integers");
  });

  it("errors of an awaited call name its line", async () => {
    const error = await failure(
      runKernel(machineOf(), async function badShape(tl: TLContext) {
        await tl.load(hbm(0), [4, 0], "f32");
      }),
    );
    expect(error.message).toMatch(
      /^\[TL_INVALID_CALL\] packages\/tl\/src\/await\.test\.ts:\d+:\d+ kernel badShape/,
    );
  });
});
