import { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { Environment, type Event, type ProcessGenerator, Resource, Store } from "./index.js";
import { kbError, thrown } from "./test-support.js";

/** Checks that `error` names the process `name` in its context and its message. */
function expectNamesProcess(error: KbError, name: string): void {
  expect(error.context.process).toBe(name);
  expect(error.message).toContain(`"${name}"`);
}

describe("invalid delays (DES_INVALID_DELAY)", () => {
  const bad: [string, unknown][] = [
    ["negative", -1],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["-Infinity", Number.NEGATIVE_INFINITY],
    ["a string", "5"],
    ["undefined", undefined],
  ];

  for (const [what, delay] of bad) {
    it(`rejects a ${what} delay, naming the running process`, () => {
      const env = new Environment();
      let error: KbError | null = null;
      env.process(
        (function* (): ProcessGenerator<void> {
          yield env.timeout(2);
          error = kbError(() => env.timeout(delay as number), "DES_INVALID_DELAY");
        })(),
        "timer",
      );
      env.run();
      const caught = error as unknown as KbError;
      expectNamesProcess(caught, "timer");
      expect(caught.context.simTimeNs).toBe(2);
    });
  }

  it("outside a process, the error has no process in its context", () => {
    const env = new Environment();
    const error = kbError(() => env.timeout(-5), "DES_INVALID_DELAY");
    expect(error.context.process).toBeUndefined();
    expect(error.message).toContain("-5");
  });

  it("an uncaught invalid delay fails the process and stops run() with that error", () => {
    const env = new Environment();
    const proc = env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        yield env.timeout(-1);
      })(),
      "careless",
    );
    const error = thrown(() => env.run());
    expect(error).toBeInstanceOf(KbError);
    expect((error as KbError).code).toBe("DES_INVALID_DELAY");
    expectNamesProcess(error as KbError, "careless");
    expect(proc.ok).toBe(false);
    expect(proc.value).toBe(error);
  });
});

describe("invalid yields (DES_INVALID_YIELD)", () => {
  it("yielding a number throws at the yield, where the process can catch it", () => {
    const env = new Environment();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(3);
        try {
          yield 42 as unknown as Event;
          trace.push("not reached");
        } catch (error) {
          expect(error).toBeInstanceOf(KbError);
          expect((error as KbError).code).toBe("DES_INVALID_YIELD");
          expectNamesProcess(error as KbError, "numbers");
          trace.push(`${env.now}:caught`);
        }
        // the process goes on: 3 + 1 = 4
        yield env.timeout(1);
        trace.push(`${env.now}:after`);
      })(),
      "numbers",
    );
    env.run();
    expect(trace).toEqual(["3:caught", "4:after"]);
  });

  it("yielding a Store (instead of store.get()) fails the process; run() throws it", () => {
    const env = new Environment();
    const store = new Store<number>(env, { name: "inbox" });
    const proc = env.process(
      (function* (): ProcessGenerator<void> {
        yield store as unknown as Event;
      })(),
      "forgetful",
    );
    const error = thrown(() => env.run());
    expect(error).toBeInstanceOf(KbError);
    expect((error as KbError).code).toBe("DES_INVALID_YIELD");
    expectNamesProcess(error as KbError, "forgetful");
    expect(proc.ok).toBe(false);
    expect(proc.isAlive).toBe(false);
  });

  it("a bare `yield` (undefined) is an invalid yield too", () => {
    const env = new Environment();
    env.process(
      (function* (): ProcessGenerator<void> {
        yield undefined as unknown as Event;
      })(),
      "bare",
    );
    const error = thrown(() => env.run());
    expect((error as KbError).code).toBe("DES_INVALID_YIELD");
  });

  it("the failure reaches a process waiting on the bad one", () => {
    const env = new Environment();
    const bad = env.process(
      (function* (): ProcessGenerator<void> {
        yield "soon" as unknown as Event;
      })(),
      "bad",
    );
    const codes: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        try {
          yield bad;
        } catch (error) {
          codes.push((error as KbError).code);
        }
      })(),
    );
    env.run();
    expect(codes).toEqual(["DES_INVALID_YIELD"]);
  });
});

describe("events of another environment (DES_FOREIGN_EVENT)", () => {
  it("yielding an event of another Environment throws at the yield", () => {
    const env = new Environment();
    const other = new Environment();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        try {
          yield other.timeout(1);
        } catch (error) {
          expect(error).toBeInstanceOf(KbError);
          expect((error as KbError).code).toBe("DES_FOREIGN_EVENT");
          expectNamesProcess(error as KbError, "mixer");
          trace.push(`${env.now}:caught`);
        }
      })(),
      "mixer",
    );
    env.run();
    expect(trace).toEqual(["0:caught"]);
  });

  it("uncaught, it fails the process and run() throws it", () => {
    const env = new Environment();
    const other = new Environment();
    env.process(
      (function* (): ProcessGenerator<void> {
        yield other.event();
      })(),
      "mixer",
    );
    const error = thrown(() => env.run());
    expect((error as KbError).code).toBe("DES_FOREIGN_EVENT");
    expectNamesProcess(error as KbError, "mixer");
  });
});

describe("env.process() of something that is not a generator (DES_NOT_A_GENERATOR)", () => {
  it("rejects the generator function itself (forgot to call it)", () => {
    const env = new Environment();
    function* worker(): ProcessGenerator<void> {
      yield env.timeout(1);
    }
    const error = kbError(
      () => env.process(worker as unknown as ProcessGenerator, "worker"),
      "DES_NOT_A_GENERATOR",
    );
    expect(error.message).toContain("worker");
  });

  it("rejects other values", () => {
    const env = new Environment();
    for (const value of [42, null, undefined, {}, "gen", [1, 2]]) {
      kbError(() => env.process(value as unknown as ProcessGenerator), "DES_NOT_A_GENERATOR");
    }
  });

  // Regression (process.ts, Process constructor): an async generator has `next`/`throw` too, but
  // each step returns a Promise, which would be read as an invalid yield and thrown back in
  // forever; it must be refused when the process is created.
  it("rejects an async generator object (its steps are promises, not events)", () => {
    const env = new Environment();
    const asyncGenerator = (async function* () {
      yield env.timeout(1);
    })();
    // env.run() is deliberately not called: were the object accepted, it would never return
    kbError(() => env.process(asyncGenerator as unknown as ProcessGenerator, "async"), "DES_NOT_A_GENERATOR");
  });

  it("names the process that made the call", () => {
    const env = new Environment();
    let error: KbError | null = null;
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        error = kbError(() => env.process((() => 1) as unknown as ProcessGenerator), "DES_NOT_A_GENERATOR");
      })(),
      "spawner",
    );
    env.run();
    expectNamesProcess(error as unknown as KbError, "spawner");
  });
});

describe("other bad arguments", () => {
  it("run(until) with a time <= now is DES_INVALID_ARGUMENT", () => {
    const env = new Environment({ initialTime: 10 });
    kbError(() => env.run(10), "DES_INVALID_ARGUMENT");
    kbError(() => env.run(0), "DES_INVALID_ARGUMENT");
    kbError(() => env.run(-1), "DES_INVALID_ARGUMENT");
  });

  it("capacities <= 0 or non-integer are DES_INVALID_ARGUMENT", () => {
    const env = new Environment();
    kbError(() => new Store(env, { capacity: 0 }), "DES_INVALID_ARGUMENT");
    kbError(() => new Store(env, { capacity: 2.5 }), "DES_INVALID_ARGUMENT");
    kbError(() => new Resource(env, { capacity: -1 }), "DES_INVALID_ARGUMENT");
    kbError(() => new Resource(env, { capacity: 0.5 }), "DES_INVALID_ARGUMENT");
  });

  it("a bad capacity inside a process names it", () => {
    const env = new Environment();
    let error: KbError | null = null;
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        error = kbError(() => new Store(env, { capacity: 0 }), "DES_INVALID_ARGUMENT");
      })(),
      "builder",
    );
    env.run();
    expectNamesProcess(error as unknown as KbError, "builder");
  });

  it("a non-finite initialTime is DES_INVALID_ARGUMENT", () => {
    kbError(() => new Environment({ initialTime: Number.NaN }), "DES_INVALID_ARGUMENT");
    kbError(() => new Environment({ initialTime: Number.POSITIVE_INFINITY }), "DES_INVALID_ARGUMENT");
  });
});
