import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// Fault (issue 32, item 6) as a user meets it: `kb run` of a kernel that never ends stops in
// seconds with RUN_LIMIT (exit 1, no stack) naming the PE, the kernel, the call site and the call.

const fixture = (name: string) => fileURLToPath(new URL(`__fixtures__/${name}`, import.meta.url));
const spinBench = fixture("spin-bench.ts");
const zeroTimeSpinBench = fixture("zero-time-spin-bench.ts");

describe("fault: kb run of a kernel that never ends", () => {
  it("a zero-time tl.cycles(0) loop stops at the default stall limit, located, without a stack", async () => {
    // The event cap is a backstop: without the stall detector the test fails instead of hanging.
    const stopped = await kb("run", zeroTimeSpinBench, "--max-events", "5e6");
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(
      /^\[RUN_LIMIT\] .*zero-time-spin-bench\.ts:7:21 kernel zeroSpin on sip0\.cube0\.pe0 at t=[\d.]+ ns: the run stalled: 250,000 tl calls in a row left the machine without progress \(no byte moved, nothing computed, nothing passed through a queue\) and simulated time did not advance \(--max-stall-calls\); 1 kernel\(s\) made those calls:\n {2}sip0\.cube0\.pe0: kernel zeroSpin, 250,000 calls of tl\.cycles\(0\) at .*zero-time-spin-bench\.ts:7:21\n/,
    );
    expect(stopped.stderr).toContain(
      "raise the limit (--max-stall-calls), or turn the check off with --max-stall-calls Infinity.",
    );
    expect(stopped.stderr).not.toMatch(/^\s+at /m);
  }, 60_000);

  it("--max-stall-calls sets the budget of a tl.cycles(1) loop", async () => {
    const stopped = await kb("run", spinBench, "--max-stall-calls", "2000");
    expect(stopped.code).toBe(1);
    // 2,000 calls of one cycle at the PE_CPU's 1 GHz.
    expect(stopped.stderr).toContain(
      "the run stalled: 2,000 tl calls in a row left the machine without progress (no byte moved, nothing computed, nothing passed through a queue) while simulated time advanced 2 µs (--max-stall-calls)",
    );
    expect(stopped.stderr).toMatch(
      / {2}sip0\.cube0\.pe0: kernel spin, 2,000 calls of tl\.cycles\(1\) at .*spin-bench\.ts:7:21\n/,
    );
  });

  it("refuses a budget that is not a number > 0, and --help shows the option with its default", async () => {
    const bad = await kb("run", spinBench, "--max-stall-calls", "0");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--max-stall-calls needs a number > 0, such as 1e9; got "0"');
    const help = await kb("run", "--help");
    expect(help.stdout.replace(/\s+/g, " ")).toContain(
      "--max-stall-calls <n> stop the run after N tl calls in a row",
    );
    expect(help.stdout.replace(/\s+/g, " ")).toContain("(default 250,000, a few seconds;");
  });
});
