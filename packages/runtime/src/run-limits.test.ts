import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Environment } from "@kb/des";
import type { KbError } from "@kb/errors";
import { KernelHost, type TL } from "@kb/tl";
import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_EVENTS, LIMIT_OPTIONS, type RunLimits, Simulator } from "./index.js";
import { limitSlices } from "./run-limits.js";

// Run limits: a run that reaches one stops with RUN_LIMIT naming the kernels still running; a run
// within them is the same as without them.

const spin = async (tl: TL) => {
  for (;;) await tl.cycles(1);
};

async function stopped(limits: RunLimits) {
  const sim = await Simulator.fromTopology({ name: "demo" }, { limits });
  const error = (await sim.launch(spin, { grid: { pes: 2 }, args: [] }).catch((e: unknown) => e)) as KbError;
  return { sim, error };
}

describe("run limits", () => {
  it("maxEvents stops at exactly that many events and names every kernel still running", async () => {
    const { sim, error } = await stopped({ maxEvents: 250_000 });
    expect(error.code).toBe("RUN_LIMIT");
    expect(sim.machine.env.processedEventCount).toBe(250_000);
    expect(error.detail).toMatch(
      /^the run reached its limit of 250,000 DES events \(--max-events\) after 250,000 events; 2 kernel\(s\) still running:\n {2}sip0\.cube0\.pe0: kernel spin, tl\.cycles at .*run-limits\.test\.ts:17:\d+ \(since t=[\d.]+ ns\)\n {2}sip0\.cube0\.pe1: kernel spin, tl\.cycles/,
    );
    expect(error.context.simTimeNs).toBe(sim.now);
  });

  it("maxEvents counts one wait of the host program: a run of many launches is not cut short", async () => {
    const work = async (tl: TL) => {
      for (let i = 0; i < 50; i++) await tl.cycles(3);
    };
    // The events of each of three launches, without a limit.
    const free = await Simulator.fromTopology({ name: "demo" }, {});
    const each: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = free.machine.env.processedEventCount;
      await free.launch(work, { grid: { pes: 4 }, args: [] });
      each.push(free.machine.env.processedEventCount - before);
    }
    const cap = Math.max(...each) + 1;
    const total = each.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(cap);
    // With the cap just above the largest launch, all three run, as without it.
    const sim = await Simulator.fromTopology({ name: "demo" }, { limits: { maxEvents: cap } });
    for (let i = 0; i < 3; i++) await sim.launch(work, { grid: { pes: 4 }, args: [] });
    expect([sim.now, sim.machine.env.processedEventCount]).toEqual([free.now, total]);
    // A kernel that never ends stops `cap` events into its own launch, and the message says so.
    const error = (await sim
      .launch(spin, { grid: { pes: 2 }, args: [] })
      .catch((e: unknown) => e)) as KbError;
    expect(error.code).toBe("RUN_LIMIT");
    expect(sim.machine.env.processedEventCount).toBe(total + cap);
    expect(error.detail).toContain(
      `the run reached its limit of ${cap.toLocaleString("en-US")} DES events (--max-events) after ${cap.toLocaleString("en-US")} events of one wait of the host program (a launch, a copy or a synchronisation; ${(total + cap).toLocaleString("en-US")} in the whole run); 2 kernel(s) still running:`,
    );
  });

  it("maxSimTimeNs stops at the last event within the limit, without an event of its own", async () => {
    const { sim, error } = await stopped({ maxSimTimeNs: 5000 });
    expect(error.code).toBe("RUN_LIMIT");
    expect(error.detail).toContain("the run reached its limit of 5000 ns of simulated time (--max-sim-time)");
    expect(sim.now).toBeLessThanOrEqual(5000);
    expect(sim.machine.env.peek()).toBeGreaterThan(5000);
  });

  it("names a limit as the front end that set it asks (names), kb run's option by default", async () => {
    const { error } = await stopped({ maxSimTimeNs: 5000, names: { maxSimTimeNs: "Max sim time" } });
    expect(error.detail).toContain("the run reached its limit of 5000 ns of simulated time (Max sim time)");
    expect(error.detail).toContain("If the run is just long, raise the limit (Max sim time).");
    expect(error.detail).not.toContain("--max-sim-time");
    // A name given for another limit leaves this one's default.
    const other = await stopped({ maxEvents: 250_000, names: { maxSimTimeNs: "Max sim time" } });
    expect(other.error.detail).toContain("(--max-events)");
    expect(LIMIT_OPTIONS).toEqual({
      maxEvents: "--max-events",
      maxSimTimeNs: "--max-sim-time",
      timeoutMs: "--timeout",
      maxStallCalls: "--max-stall-calls",
    });
  });

  it("timeoutMs stops at the first check after the wall time passed (a clock the test turns)", async () => {
    const env = new Environment();
    const host = new KernelHost(env);
    let nowMs = 0;
    const slices = limitSlices(
      host,
      { timeoutMs: 1000 },
      () => nowMs,
      () => 0,
    );
    await slices.between(); // 0 ms: within the limit
    nowMs = 999;
    await slices.between();
    nowMs = 1000;
    await expect(slices.between()).rejects.toThrow(
      "the run reached its limit of 1 s of wall time (--timeout) after 0 events; no kernel was running",
    );
  });

  it("limits that are not reached change nothing: same time and events as without them", async () => {
    const copy = async (tl: TL) => {
      for (let i = 0; i < 50; i++) await tl.cycles(3);
    };
    const run = async (limits?: { maxEvents: number; maxSimTimeNs: number; timeoutMs: number }) => {
      const sim = await Simulator.fromTopology({ name: "demo" }, limits ? { limits } : {});
      await sim.launch(copy, { grid: { pes: 4 }, args: [] });
      return [sim.now, sim.machine.env.processedEventCount];
    };
    expect(await run({ maxEvents: 1e9, maxSimTimeNs: 1e12, timeoutMs: 3.6e6 })).toEqual(await run());
  });

  it("refuses a limit that is not a number > 0, and caps events at 500 million by default", async () => {
    await expect(Simulator.fromTopology({ name: "demo" }, { limits: { maxEvents: 0 } })).rejects.toThrow(
      "limits.maxEvents must be a number > 0 (Infinity for no limit), got 0.",
    );
    expect(DEFAULT_MAX_EVENTS).toBe(500_000_000);
  });
});

describe("README run limits example", () => {
  it("stops a kernel that never ends at the time limit", async () => {
    const printed: unknown[][] = [];
    const console = { log: (...values: unknown[]) => printed.push(values) };
    // README example start

    const sim = await Simulator.fromTopology({ name: "demo" }, { limits: { maxSimTimeNs: 5000 } });
    const spin = async (tl: TL) => {
      for (;;) await tl.cycles(1); // a loop that never ends
    };
    const failure = (await sim
      .launch(spin, { grid: { pes: 1 }, args: [] })
      .catch((error: unknown) => error)) as KbError;
    console.log(failure.message.split("\n")[0]);
    // [RUN_LIMIT] at t=4999.565 ns: the run reached its limit of 5000 ns of simulated time (--max-sim-time) after 10,090 events; 1 kernel(s) still running:
    console.log(failure.detail.split("\n")[1]);
    //   sip0.cube0.pe0: kernel spin, tl.cycles at README.md:5:23 (since t=4999.565 ns)

    // README example end
    expect(printed[0]).toEqual([
      "[RUN_LIMIT] at t=4999.565 ns: the run reached its limit of 5000 ns of simulated time (--max-sim-time) after 10,090 events; 1 kernel(s) still running:",
    ]);
    expect(printed[1]?.[0]).toMatch(
      /^ {2}sip0\.cube0\.pe0: kernel spin, tl\.cycles at .*:\d+:\d+ \(since t=4999\.565 ns\)$/,
    );
  });

  it("is the code of the README's Run limits section", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("## Run limits"));
    const dir = mkdtempSync(join(tmpdir(), "kb-readme-"));
    try {
      const file = join(dir, "README.md");
      writeFileSync(file, section);
      const { readme: block, test } = readmeExample(pathToFileURL(file), import.meta.url);
      expect(block).toContain("maxSimTimeNs");
      expect(test.replace(/^import .*\n\n?/gm, "")).toBe(block.replace(/^import .*\n\n?/gm, ""));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
