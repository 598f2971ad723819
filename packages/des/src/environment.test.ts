import type { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { ConditionValue, Environment, type Event, Process, type ProcessGenerator } from "./index.js";
import { kbError, thrown } from "./test-support.js";

describe("Environment clock and timeouts", () => {
  it("starts at 0 ns and advances to the time of each processed timeout", () => {
    const env = new Environment();
    const trace: string[] = [];
    expect(env.now).toBe(0);
    env.process(
      (function* (): ProcessGenerator<void> {
        // starts at 0, waits 3 then 4: ends at 7
        yield env.timeout(3);
        trace.push(`${env.now}:after 3`);
        yield env.timeout(4);
        trace.push(`${env.now}:after 4`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["3:after 3", "7:after 4"]);
    expect(env.now).toBe(7);
  });

  it("honours initialTime: timeouts are relative to it", () => {
    const env = new Environment({ initialTime: 100 });
    expect(env.now).toBe(100);
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        // starts at 100, waits 5: 105
        trace.push(`${env.now}:start`);
        yield env.timeout(5);
        trace.push(`${env.now}:end`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["100:start", "105:end"]);
  });

  it("delivers the timeout's value at the yield (undefined when none was given)", () => {
    const env = new Environment();
    const got: unknown[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        got.push(yield env.timeout(2, "payload"));
        got.push(yield env.timeout(1, { n: 42 }));
        got.push(yield env.timeout(1));
      })(),
    );
    env.run();
    expect(got).toEqual(["payload", { n: 42 }, undefined]);
    expect(env.now).toBe(4);
  });

  it("a zero timeout does not advance the clock", () => {
    const env = new Environment();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        yield env.timeout(0);
        trace.push(`${env.now}:after zero`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["2:after zero"]);
  });

  it("accepts fractional delays", () => {
    const env = new Environment();
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(0.5);
        yield env.timeout(0.25);
      })(),
    );
    env.run();
    expect(env.now).toBe(0.75);
  });
});

describe("env.event()", () => {
  it("returns a pending event that a waiting process receives the value of once it is succeeded", () => {
    const env = new Environment();
    const signal = env.event<string>();
    const trace: string[] = [];
    expect(signal.triggered).toBe(false);
    env.process(
      (function* (): ProcessGenerator<void> {
        const value: string = yield signal;
        trace.push(`${env.now}:waiter got ${value}`);
      })(),
      "waiter",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        // fires the signal at 4: the waiter resumes at 4
        yield env.timeout(4);
        signal.succeed("go");
        trace.push(`${env.now}:fired`);
      })(),
      "firer",
    );
    env.run();
    expect(trace).toEqual(["4:fired", "4:waiter got go"]);
  });
});

describe("env.process()", () => {
  it("returns a Process carrying the given name", () => {
    const env = new Environment();
    const proc = env.process((function* (): ProcessGenerator<void> {})(), "worker-7");
    expect(proc).toBeInstanceOf(Process);
    expect(proc.name).toBe("worker-7");
  });

  it("gives unnamed processes distinct default names", () => {
    const env = new Environment();
    const a = env.process((function* (): ProcessGenerator<void> {})());
    const b = env.process((function* (): ProcessGenerator<void> {})());
    expect(a.name).not.toBe("");
    expect(a.name).not.toBe(b.name);
  });

  it("does not run the generator before the simulation runs", () => {
    const env = new Environment();
    let started = false;
    env.process(
      (function* (): ProcessGenerator<void> {
        started = true;
        yield env.timeout(1);
      })(),
    );
    expect(started).toBe(false);
    env.run();
    expect(started).toBe(true);
  });
});

describe("allOf / anyOf", () => {
  it("allOf waits for the last event and gives every value in the given order", () => {
    const env = new Environment();
    let at = -1;
    let values: unknown[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        const slow = env.timeout(5, "slow");
        const fast = env.timeout(3, "fast");
        // both done at max(5, 3) = 5
        const result: ConditionValue = yield env.allOf([slow, fast]);
        at = env.now;
        values = result.values();
        expect(result.get(fast)).toBe("fast");
        expect(result.get(slow)).toBe("slow");
      })(),
    );
    env.run();
    expect(at).toBe(5);
    expect(values).toEqual(["slow", "fast"]);
  });

  it("anyOf resumes at the first event and holds only the events processed by then", () => {
    const env = new Environment();
    let at = -1;
    let result: ConditionValue | null = null;
    let slow: Event | null = null;
    env.process(
      (function* (): ProcessGenerator<void> {
        slow = env.timeout(5, "slow");
        const fast = env.timeout(3, "fast");
        // first one done at min(5, 3) = 3
        result = yield env.anyOf([slow, fast]);
        at = env.now;
        expect(result?.has(fast)).toBe(true);
      })(),
    );
    env.run();
    expect(at).toBe(3);
    expect(result).toBeInstanceOf(ConditionValue);
    const value = result as unknown as ConditionValue;
    expect(value.values()).toEqual(["fast"]);
    expect(value.has(slow as unknown as Event)).toBe(false);
    // the remaining timeout is still processed: the run ends at 5
    expect(env.now).toBe(5);
  });

  it("anyOf's value holds every event processed before the condition itself", () => {
    const env = new Environment();
    let values: unknown[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        const a = env.timeout(3, "a");
        const b = env.timeout(3, "b");
        const c = env.timeout(4, "c");
        // a triggers the anyOf at 3; b (scheduled before the anyOf's own event) is processed too
        const result: ConditionValue = yield env.anyOf([a, b, c]);
        values = result.values();
      })(),
    );
    env.run();
    expect(values).toEqual(["a", "b"]);
  });

  it("nested conditions are flattened into one value", () => {
    const env = new Environment();
    let values: unknown[] = [];
    let at = -1;
    env.process(
      (function* (): ProcessGenerator<void> {
        // inner anyOf holds at 1 (x); z at 1: the allOf holds at 1, y (at 2) is not part of it
        const result: ConditionValue = yield env.allOf([
          env.anyOf([env.timeout(1, "x"), env.timeout(2, "y")]),
          env.timeout(1, "z"),
        ]);
        values = result.values();
        at = env.now;
      })(),
    );
    env.run();
    expect(at).toBe(1);
    expect(values).toEqual(["x", "z"]);
  });

  it("an empty allOf succeeds at once, without time passing", () => {
    const env = new Environment();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        const result: ConditionValue = yield env.allOf([]);
        trace.push(`${env.now}:empty allOf with ${result.events.length} events`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["2:empty allOf with 0 events"]);
  });

  it("a condition over already-processed events succeeds at the current time", () => {
    const env = new Environment();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        const early = env.timeout(1, "e");
        yield env.timeout(4);
        // `early` was processed at 1: the allOf holds at 4
        const result: ConditionValue = yield env.allOf([early]);
        trace.push(`${env.now}:${String(result.get(early))}`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["4:e"]);
  });

  it("allOf fails with the error of the first failing event; the waiter can catch it", () => {
    const env = new Environment();
    const boom = new Error("boom");
    const trace: string[] = [];
    const failing = env.event();
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        failing.fail(boom);
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        try {
          yield env.allOf([env.timeout(10), failing]);
          trace.push(`${env.now}:allOf succeeded`);
        } catch (error) {
          // fails when `failing` is processed at 2
          trace.push(`${env.now}:caught ${(error as Error).message}`);
          expect(error).toBe(boom);
        }
      })(),
    );
    env.run();
    expect(trace).toEqual(["2:caught boom"]);
  });

  it("rejects events of another environment", () => {
    const env = new Environment();
    const other = new Environment();
    kbError(() => env.allOf([env.timeout(1), other.timeout(1)]), "DES_FOREIGN_EVENT");
    kbError(() => env.anyOf([other.event()]), "DES_FOREIGN_EVENT");
  });
});

describe("run()", () => {
  it("without argument runs until no event is left and returns undefined", () => {
    const env = new Environment();
    const trace: string[] = [];
    for (const [name, delay] of [
      ["a", 4],
      ["b", 9],
      ["c", 1],
    ] as const) {
      env.process(
        (function* (): ProcessGenerator<void> {
          yield env.timeout(delay);
          trace.push(`${env.now}:${name}`);
        })(),
      );
    }
    // last timeout ends at 9
    expect(env.run()).toBeUndefined();
    expect(trace).toEqual(["1:c", "4:a", "9:b"]);
    expect(env.now).toBe(9);
    expect(env.peek()).toBe(Number.POSITIVE_INFINITY);
  });

  it("run(until) stops at `until` without processing events at exactly that time; a second run continues", () => {
    const env = new Environment();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        // ticks at 5, 10, 15
        for (let i = 0; i < 3; i++) {
          yield env.timeout(5);
          trace.push(`${env.now}:tick`);
        }
      })(),
    );
    expect(env.run(10)).toBeUndefined();
    // the tick due at 10 is still scheduled
    expect(trace).toEqual(["5:tick"]);
    expect(env.now).toBe(10);
    expect(env.peek()).toBe(10);
    env.run(12);
    expect(trace).toEqual(["5:tick", "10:tick"]);
    expect(env.now).toBe(12);
    env.run();
    expect(trace).toEqual(["5:tick", "10:tick", "15:tick"]);
    expect(env.now).toBe(15);
  });

  it("run(until) stops before events at `until` that were scheduled before the call", () => {
    const env = new Environment();
    const trace: string[] = [];
    const early = env.timeout(10, "early");
    env.process(
      (function* (): ProcessGenerator<void> {
        // scheduled at 0 for 10, before run(10) is called
        yield env.timeout(10);
        trace.push(`${env.now}:woke`);
      })(),
    );
    env.step(); // the process start: its timeout(10) is now scheduled
    env.run(10);
    expect(env.now).toBe(10);
    expect(early.processed).toBe(false);
    expect(trace).toEqual([]);
    env.run();
    expect(early.processed).toBe(true);
    expect(trace).toEqual(["10:woke"]);
  });

  it("run(until) moves the clock to `until` even when nothing is scheduled before it", () => {
    const env = new Environment();
    env.run(7);
    expect(env.now).toBe(7);
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        // starts at 7, waits 1: 8
        yield env.timeout(1);
        trace.push(`${env.now}:done`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["8:done"]);
  });

  it("run(until) rejects a time that is not after now", () => {
    const env = new Environment();
    env.run(5);
    kbError(() => env.run(5), "DES_INVALID_ARGUMENT");
    kbError(() => env.run(3), "DES_INVALID_ARGUMENT");
    kbError(() => env.run(Number.NaN), "DES_INVALID_ARGUMENT");
    expect(env.now).toBe(5);
  });

  it("run(event) returns the event's value once it is processed", () => {
    const env = new Environment();
    const proc = env.process(
      (function* (): ProcessGenerator<string> {
        yield env.timeout(6);
        return "result";
      })(),
    );
    // other work continues after 6 but is not processed by run(proc)
    const later = env.timeout(20);
    expect(env.run(proc)).toBe("result");
    expect(env.now).toBe(6);
    expect(later.processed).toBe(false);
    // an already-processed event gives its value at once
    expect(env.run(proc)).toBe("result");
    expect(env.now).toBe(6);
  });

  it("run(timeout) returns the timeout's value", () => {
    const env = new Environment();
    expect(env.run(env.timeout(3, 99))).toBe(99);
    expect(env.now).toBe(3);
  });

  it("run(event) throws the event's error when it fails", () => {
    const env = new Environment();
    const problem = new Error("process failed");
    const proc = env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        throw problem;
      })(),
    );
    expect(thrown(() => env.run(proc))).toBe(problem);
    expect(env.now).toBe(2);
  });

  it("run(event) rejects an event of another environment", () => {
    const env = new Environment();
    const other = new Environment();
    kbError(() => env.run(other.timeout(1)), "DES_FOREIGN_EVENT");
  });
});

describe("step() and peek()", () => {
  it("peek() gives the time of the next event, Infinity when none is left; step() processes one event", () => {
    const env = new Environment();
    expect(env.peek()).toBe(Number.POSITIVE_INFINITY);
    const first = env.timeout(4, "first");
    const second = env.timeout(9, "second");
    expect(env.peek()).toBe(4);
    env.step();
    expect(env.now).toBe(4);
    expect(first.processed).toBe(true);
    expect(second.processed).toBe(false);
    expect(env.peek()).toBe(9);
    env.step();
    expect(env.now).toBe(9);
    expect(second.processed).toBe(true);
    expect(env.peek()).toBe(Number.POSITIVE_INFINITY);
  });

  it("step() runs one process resumption at a time", () => {
    const env = new Environment();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        trace.push(`${env.now}:start`);
        yield env.timeout(2);
        trace.push(`${env.now}:end`);
      })(),
    );
    // the process start is due now
    expect(env.peek()).toBe(0);
    env.step();
    expect(trace).toEqual(["0:start"]);
    expect(env.peek()).toBe(2);
    env.step(); // the timeout at 2 resumes the process, which returns
    expect(trace).toEqual(["0:start", "2:end"]);
    env.step(); // the process's own completion event
    expect(env.peek()).toBe(Number.POSITIVE_INFINITY);
  });

  it("step() on an empty schedule throws", () => {
    const env = new Environment();
    kbError(() => env.step(), "DES_INVALID_ARGUMENT");
  });
});

describe("activeProcess", () => {
  it("is the running process inside its generator and null outside", () => {
    const env = new Environment();
    const seen: (Process | null)[] = [];
    let callbackSaw: Process | null | undefined;
    expect(env.activeProcess).toBeNull();
    const a = env.process(
      (function* (): ProcessGenerator<void> {
        seen.push(env.activeProcess);
        yield env.timeout(1);
        seen.push(env.activeProcess);
      })(),
      "a",
    );
    const b = env.process(
      (function* (): ProcessGenerator<void> {
        seen.push(env.activeProcess);
        const tick = env.timeout(1);
        tick.addCallback(() => {
          callbackSaw = env.activeProcess;
        });
        yield tick;
      })(),
      "b",
    );
    env.run();
    expect(seen).toEqual([a, b, a]);
    expect(seen[0]).toBe(a);
    expect(seen[1]).toBe(b);
    // a plain callback runs between process steps
    expect(callbackSaw).toBeNull();
    expect(env.activeProcess).toBeNull();
  });
});

describe("determinism", () => {
  function model(): string[] {
    const env = new Environment();
    const trace: string[] = [];
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    for (let i = 0; i < 20; i++) {
      const delays = [random() % 4, random() % 4, random() % 4];
      env.process(
        (function* (): ProcessGenerator<void> {
          for (const delay of delays) {
            yield env.timeout(delay);
            trace.push(`${env.now}:p${i}`);
          }
        })(),
      );
    }
    env.run();
    return trace;
  }

  it("the same program gives the same trace on every run", () => {
    const first = model();
    const second = model();
    expect(first.length).toBe(60);
    expect(second).toEqual(first);
  });
});

describe("run() guards", () => {
  it("refuses run() and step() from inside a running process", () => {
    const env = new Environment();
    const codes: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        for (const call of [() => env.run(), () => env.step()]) {
          try {
            call();
          } catch (error) {
            codes.push((error as KbError).code);
          }
        }
      })(),
    );
    env.run();
    expect(codes).toEqual(["DES_INVALID_ARGUMENT", "DES_INVALID_ARGUMENT"]);
  });

  it("a run(until) that ends with an unhandled failure does not stop a later run at that time", () => {
    // The failure at 5 ends run(10) early; the later run() must go on to the timeout at 20.
    const env = new Environment();
    const boom = new Error("boom");
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(5);
        throw boom;
      })(),
    );
    const done = env.timeout(20, "done");
    expect(() => env.run(10)).toThrow(boom);
    expect(env.now).toBe(5);
    env.run();
    expect(env.now).toBe(20);
    expect(done.processed).toBe(true);
  });
});
