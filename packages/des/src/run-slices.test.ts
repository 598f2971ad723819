import { describe, expect, it } from "vitest";
import { Environment, type ProcessGenerator } from "./index.js";

// Leaving a run between events: env.pause(), and env.run(until, { maxEvents, stopAfterNs }), a run
// in slices for drivers that check limits or let the event loop turn between them.

describe("pause()", () => {
  it("makes run() return after the current event; a later run() continues with the rest", () => {
    const env = new Environment();
    const trace: string[] = [];
    const done = env.timeout(10, "done");
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        trace.push(`${env.now}:a`);
        env.pause();
        yield env.timeout(3);
        trace.push(`${env.now}:b`);
      })(),
    );
    expect(env.run(done)).toBeUndefined();
    // Paused at 2 ns, before the 5 ns timeout and the 10 ns "done".
    expect(env.now).toBe(2);
    expect(done.processed).toBe(false);
    expect(env.run(done)).toBe("done");
    expect(trace).toEqual(["2:a", "5:b"]);
    expect(env.now).toBe(10);
  });

  it("does nothing outside run(), and does not hide the value of a run(until) that ended in the same event", () => {
    const env = new Environment();
    env.pause();
    const until = env.timeout(4, 42);
    until.addCallback(() => env.pause());
    expect(env.isRunning).toBe(false);
    expect(env.run(until)).toBe(42);
  });
});

describe("Environment run slices", () => {
  /** A process that times out every 10 ns forever. */
  function ticking(env: Environment): void {
    env.process(
      (function* () {
        for (;;) yield env.timeout(10);
      })(),
    );
  }

  it("run(until, { maxEvents }) returns after that many events, and a later run continues", () => {
    const env = new Environment();
    ticking(env);
    expect(env.run(1000, { maxEvents: 5 })).toBeUndefined();
    expect(env.processedEventCount).toBe(5);
    const at = env.now;
    env.run(1000, { maxEvents: 5 });
    expect(env.processedEventCount).toBe(10);
    expect(env.now).toBeGreaterThanOrEqual(at);
  });

  it("run(until, { stopAfterNs }) stops before the first event later than that time, adding none", () => {
    const env = new Environment();
    ticking(env);
    env.run(1000, { stopAfterNs: 35 });
    expect(env.now).toBe(30); // the timeouts at 10, 20, 30; the next one (40) is left scheduled
    expect(env.peek()).toBe(40);
  });

  it("refuses maxEvents < 1", () => {
    const env = new Environment();
    expect(() => env.run(10, { maxEvents: 0 })).toThrow(
      "run(until, { maxEvents }) needs maxEvents >= 1, got 0.",
    );
    expect(env.isRunning).toBe(false);
  });
});
