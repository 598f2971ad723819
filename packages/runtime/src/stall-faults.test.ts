import type { KbError } from "@kb/errors";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_STALL_CALLS, type DeviceTensor, type RunLimits, Simulator } from "./index.js";
import { failure } from "./test-support.js";

// Fault (issue 32, item 6): a kernel that never ends stops in seconds, not after hours. The stall
// detector counts tl calls (never wall time): a run stops with RUN_LIMIT once that many calls in a
// row, of all kernels together, left the machine without progress (no component processed a
// message: no byte moved, nothing computed, nothing passed through a queue).

/** Never ends: one PE_CPU cycle after another (simulated time advances, nothing else happens). */
const spin = async (tl: TL) => {
  for (;;) await tl.cycles(1);
};

/** Never ends and never lets simulated time advance. */
const zeroSpin = async (tl: TL) => {
  for (;;) await tl.cycles(0);
};

/**
 * A backstop so that a run the detector misses fails the test in seconds instead of hours. (The
 * tests with the default budget take a few seconds: 250,000 calls; their time limit is the test
 * runner's, not an assertion.)
 */
const BACKSTOP = { maxEvents: 5_000_000 };

async function stall(kernel: (tl: TL) => Promise<void>, limits: RunLimits, pes = 1) {
  const sim = await Simulator.fromTopology({ name: "demo" }, { limits: { ...BACKSTOP, ...limits } });
  const error = await failure(sim.launch(kernel, { grid: { pes }, args: [] }));
  return { sim, error };
}

describe("fault: kernels that never end stop at the stall limit", () => {
  it("a tl.cycles(1) loop stops with the defaults, naming PE, kernel, call site and call", async () => {
    const { sim, error } = await stall(spin, {});
    expect(error.code).toBe("RUN_LIMIT");
    expect(DEFAULT_MAX_STALL_CALLS).toBe(250_000);
    expect(error.detail).toMatch(
      /^the run stalled: 250,000 tl calls in a row left the machine without progress \(no byte moved, nothing computed, nothing passed through a queue\) while simulated time advanced 250 µs \(--max-stall-calls\); 1 kernel\(s\) made those calls:\n {2}sip0\.cube0\.pe0: kernel spin, 250,000 calls of tl\.cycles\(1\) at .*stall-faults\.test\.ts:14:21\n/,
    );
    expect(error.detail).toContain(
      "If a kernel really waits this long without work, raise the limit (--max-stall-calls), or turn the check off with --max-stall-calls Infinity.",
    );
    // Located at the repeated call; well before the backstop.
    expect(error.context).toMatchObject({ kernel: "spin", pe: "sip0.cube0.pe0", line: 14, col: 21 });
    expect(error.context.simTimeNs).toBe(sim.now);
    expect(sim.machine.env.processedEventCount).toBeLessThan(BACKSTOP.maxEvents);
  }, 60_000);

  it("a zero-time tl.cycles(0) loop stops with the defaults and says time did not advance", async () => {
    const { sim, error } = await stall(zeroSpin, {});
    expect(error.code).toBe("RUN_LIMIT");
    expect(error.detail).toMatch(
      /^the run stalled: 250,000 tl calls in a row left the machine without progress \(no byte moved, nothing computed, nothing passed through a queue\) and simulated time did not advance \(--max-stall-calls\); 1 kernel\(s\) made those calls:\n {2}sip0\.cube0\.pe0: kernel zeroSpin, 250,000 calls of tl\.cycles\(0\) at .*stall-faults\.test\.ts:19:21\n/,
    );
    expect(error.context).toMatchObject({ kernel: "zeroSpin", line: 19, col: 21 });
    expect(sim.machine.env.processedEventCount).toBeLessThan(BACKSTOP.maxEvents);
  }, 60_000);

  it("maxStallCalls sets the budget; every spinning PE is named with its share of the calls", async () => {
    const { error } = await stall(spin, { maxStallCalls: 1000 }, 2);
    expect(error.detail).toMatch(
      /^the run stalled: 1,000 tl calls in a row .* \(--max-stall-calls\); 2 kernel\(s\) made those calls:\n {2}sip0\.cube0\.pe0: kernel spin, 500 calls of tl\.cycles\(1\) at .*stall-faults\.test\.ts:14:21\n {2}sip0\.cube0\.pe1: kernel spin, 500 calls of tl\.cycles\(1\) at .*stall-faults\.test\.ts:14:21\n/,
    );
  });

  it("names a loop's every call, and a kernel that waits meanwhile on a tl call that never completes", async () => {
    const waitsAndSpins = async (tl: TL) => {
      if (tl.programId(0) === 1) {
        await tl.recv("west", { shape: [1, 4], dtype: "f32" }); // no one sends
        return;
      }
      for (;;) {
        await tl.cycles(2);
        await tl.wait();
      }
    };
    const { error } = await stall(waitsAndSpins, { maxStallCalls: 2000 }, 2);
    // 1,000 iterations of 2 cycles at the PE_CPU's 1 GHz.
    expect(error.detail).toContain("2,000 tl calls in a row left the machine without progress");
    expect(error.detail).toContain("while simulated time advanced 2 µs");
    expect(error.detail).toMatch(
      /1 kernel\(s\) made those calls:\n {2}sip0\.cube0\.pe0: kernel waitsAndSpins, 2,000 calls of tl\.cycles\(2\) at .*stall-faults\.test\.ts:76:18, tl\.wait at .*stall-faults\.test\.ts:77:18\n1 other kernel\(s\) still running:\n {2}sip0\.cube0\.pe1: kernel waitsAndSpins, tl\.recv\("west"\) at .*stall-faults\.test\.ts:72:18 \(since t=[\d.]+ ns\)\n/,
    );
  });

  it("Infinity turns the check off (the event limit stops the loop instead)", async () => {
    const { error } = await stall(spin, { maxStallCalls: Number.POSITIVE_INFINITY, maxEvents: 300_000 });
    expect(error.detail).toMatch(/^the run reached its limit of 300,000 DES events \(--max-events\)/);
  });

  it("refuses a budget that is not a number > 0", async () => {
    await expect(Simulator.fromTopology({ name: "demo" }, { limits: { maxStallCalls: 0 } })).rejects.toThrow(
      "limits.maxStallCalls must be a number > 0 (Infinity for no limit), got 0.",
    );
  });
});

describe("fault: a kernel that polls legitimately is not stopped", () => {
  /** PE 1 copies `x` row by row; PE 0 spins on tl.cycles(1) until PE 1 says it is done. */
  async function pollWhileOtherWorks(limits: RunLimits, rows: number) {
    const sim = await Simulator.fromTopology({ name: "demo" }, { limits: { ...BACKSTOP, ...limits } });
    const x = await sim.toDevice(sim.random([rows, 64], "f32", { seed: 1 }));
    const y = sim.empty([rows, 64], "f32");
    const state = { done: false, polls: 0 };
    const kernel = async (tl: TL, src: DeviceTensor, dst: DeviceTensor) => {
      if (tl.programId(0) === 0) {
        while (!state.done) {
          state.polls++;
          await tl.cycles(1);
        }
        return;
      }
      for (let row = 0; row < rows; row++)
        await tl.store(dst.at(row, 0), await tl.load(src.at(row, 0), [1, 64], "f32"));
      state.done = true;
    };
    await sim.launch(kernel, { grid: { pes: 2 }, args: [x, y] });
    return state.polls;
  }

  it("a spin that ends while another PE moves data is not stopped, at a budget below its length", async () => {
    // The poller makes thousands of calls, far more than the budget, but the other PE's loads and
    // stores are progress all along.
    const polls = await pollWhileOtherWorks({ maxStallCalls: 100 }, 400);
    expect(polls).toBeGreaterThan(1000);
  });

  it("a bounded spin while the other PE waits for it is stopped only when it exceeds the budget", async () => {
    // PE 0 spins `n` cycles, then sends to PE 1, which waits for it: no progress during the spin.
    const handOff = (n: number) => async (tl: TL) => {
      if (tl.programId(0) === 0) {
        for (let i = 0; i < n; i++) await tl.cycles(1);
        await tl.send("east", tl.zeros([1, 16], "f32"));
      } else {
        await tl.recv("west", { shape: [1, 16], dtype: "f32" });
      }
    };
    const run = async (n: number, maxStallCalls: number) => {
      const sim = await Simulator.fromTopology({ name: "demo" }, { limits: { ...BACKSTOP, maxStallCalls } });
      return sim.launch(handOff(n), { grid: { pes: 2 }, args: [] }).then(
        () => "ended",
        (error: KbError) => error.code,
      );
    };
    expect(await run(3000, 8000)).toBe("ended");
    expect(await run(3000, 1000)).toBe("RUN_LIMIT");
  });
});
