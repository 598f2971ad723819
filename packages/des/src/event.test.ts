import type { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { Environment, type Event, type ProcessGenerator, Store } from "./index.js";
import { kbError, thrown } from "./test-support.js";

describe("Event lifecycle", () => {
  it("is pending, then triggered by succeed(value), then processed by the run", () => {
    const env = new Environment();
    const event = env.event<number>();
    expect(event.triggered).toBe(false);
    expect(event.processed).toBe(false);
    event.succeed(5);
    expect(event.triggered).toBe(true);
    expect(event.processed).toBe(false);
    expect(event.ok).toBe(true);
    expect(event.value).toBe(5);
    env.run();
    expect(event.processed).toBe(true);
    expect(event.value).toBe(5);
    // succeeding schedules at the current time: no time passes
    expect(env.now).toBe(0);
  });

  it("fail(error) makes ok false and value the error", () => {
    const env = new Environment();
    const event = env.event();
    const error = new Error("nope");
    event.fail(error);
    expect(event.triggered).toBe(true);
    expect(event.ok).toBe(false);
    expect(event.value).toBe(error);
    event.defused = true;
    env.run();
    expect(event.processed).toBe(true);
  });

  it("reading value or ok while pending throws", () => {
    const env = new Environment();
    const event = env.event();
    kbError(() => event.value, "DES_INVALID_ARGUMENT");
    kbError(() => event.ok, "DES_INVALID_ARGUMENT");
  });

  it("triggers exactly once: a second succeed or fail throws DES_ALREADY_TRIGGERED", () => {
    const env = new Environment();
    const succeeded = env.event();
    succeeded.succeed(1);
    kbError(() => succeeded.succeed(2), "DES_ALREADY_TRIGGERED");
    kbError(() => succeeded.fail(new Error("late")), "DES_ALREADY_TRIGGERED");
    expect(succeeded.value).toBe(1);
    expect(succeeded.ok).toBe(true);

    const failed = env.event();
    const error = new Error("first");
    failed.fail(error);
    kbError(() => failed.succeed(3), "DES_ALREADY_TRIGGERED");
    kbError(() => failed.fail(new Error("second")), "DES_ALREADY_TRIGGERED");
    expect(failed.value).toBe(error);
    failed.defused = true;

    // a timeout is created triggered
    const timeout = env.timeout(1);
    kbError(() => timeout.succeed(undefined), "DES_ALREADY_TRIGGERED");
    env.run();
    // and after processing it still cannot be triggered again
    kbError(() => succeeded.succeed(4), "DES_ALREADY_TRIGGERED");
  });

  it("names the running process when triggered twice inside it", () => {
    const env = new Environment();
    const event = env.event();
    let error: KbError | null = null;
    env.process(
      (function* (): ProcessGenerator<void> {
        event.succeed();
        error = kbError(() => event.succeed(), "DES_ALREADY_TRIGGERED");
      })(),
      "twice",
    );
    env.run();
    const caught = error as unknown as KbError;
    expect(caught.context.process).toBe("twice");
    expect(caught.message).toContain('"twice"');
  });
});

describe("Event callbacks", () => {
  it("run in the order they were added, when the event is processed, with the event", () => {
    const env = new Environment();
    const event = env.event<string>();
    const calls: string[] = [];
    const received: Event[] = [];
    for (const name of ["first", "second", "third", "fourth"]) {
      event.addCallback((e) => {
        calls.push(`${env.now}:${name}:${e.value}`);
        received.push(e);
      });
    }
    env.process(
      (function* (): ProcessGenerator<void> {
        // succeed at 3: callbacks run at 3, not before processing
        yield env.timeout(3);
        event.succeed("v");
        expect(calls).toEqual([]);
      })(),
    );
    env.run();
    expect(calls).toEqual(["3:first:v", "3:second:v", "3:third:v", "3:fourth:v"]);
    expect(received.every((e) => e === event)).toBe(true);
  });

  it("a removed callback is not called and the order of the others is kept", () => {
    const env = new Environment();
    const event = env.event();
    const calls: string[] = [];
    const a = (): void => {
      calls.push("a");
    };
    const b = (): void => {
      calls.push("b");
    };
    const c = (): void => {
      calls.push("c");
    };
    event.addCallback(a);
    event.addCallback(b);
    event.addCallback(c);
    expect(event.removeCallback(a)).toBe(true);
    expect(event.removeCallback(a)).toBe(false);
    event.addCallback(a);
    event.succeed();
    env.run();
    expect(calls).toEqual(["b", "c", "a"]);
  });

  it("removing callbacks at any position among many keeps the others in order", () => {
    // The engine stores the first callback inline and the rest in one slot that turns into an
    // array from the third on: every position of that layout is removed from here.
    const env = new Environment();
    const event = env.event();
    const calls: string[] = [];
    const make = (name: string) => (): void => {
      calls.push(name);
    };
    const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map(make) as [
      () => void,
      () => void,
      () => void,
      () => void,
      () => void,
    ];
    for (const callback of [a, b, c, d, e]) event.addCallback(callback);
    expect(event.removeCallback(c)).toBe(true);
    expect(event.removeCallback(a)).toBe(true);
    expect(event.callbacks).toHaveLength(3);
    expect(event.removeCallback(e)).toBe(true);
    expect(event.removeCallback(b)).toBe(true);
    expect(event.removeCallback(d)).toBe(true);
    expect(event.callbacks).toEqual([]);
    event.addCallback(d);
    event.addCallback(b);
    event.addCallback(a);
    expect(event.removeCallback(b)).toBe(true);
    event.addCallback(e);
    event.succeed();
    env.run();
    expect(calls).toEqual(["d", "a", "e"]);
  });

  it("state, outcome and handling of an event change independently of one another", () => {
    // The engine keeps all three (and a request's put/get kind) as bits of one number.
    const env = new Environment();
    const event = env.event<number>();
    event.defused = true;
    expect([event.triggered, event.processed, event.defused]).toEqual([false, false, true]);
    event.defused = false;
    const calls: string[] = [];
    event.addCallback((e) => calls.push(`a:${e.ok}:${e.defused}`));
    event.addCallback((e) => calls.push(`b:${e.ok}:${e.defused}`));
    event.addCallback((e) => {
      calls.push(`c:${e.ok}:${e.defused}`);
      e.defused = true;
    });
    event.fail(new Error("handled by the third callback"));
    expect([event.triggered, event.processed, event.ok, event.defused]).toEqual([true, false, false, false]);
    env.run();
    expect(calls).toEqual(["a:false:false", "b:false:false", "c:false:false"]);
    expect([event.triggered, event.processed, event.ok, event.defused]).toEqual([true, true, false, true]);

    const store = new Store<number>(env, { capacity: 1 });
    const put = store.put(1);
    const get = store.get();
    env.run();
    expect([put.isPut, put.processed, put.ok, get.isPut, get.processed, get.value]).toEqual([
      true,
      true,
      true,
      false,
      true,
      1,
    ]);
  });

  it("processed events have run their callbacks exactly once", () => {
    const env = new Environment();
    const event = env.event();
    let count = 0;
    event.addCallback(() => {
      count += 1;
    });
    event.succeed();
    env.run();
    env.timeout(1);
    env.run();
    expect(count).toBe(1);
  });
});

describe("failed events", () => {
  it("a failure nobody handles stops run() with exactly that error object", () => {
    const env = new Environment();
    const error = new Error("unhandled");
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        env.event().fail(error);
        yield env.timeout(5);
        trace.push(`${env.now}:never`);
      })(),
    );
    expect(thrown(() => env.run())).toBe(error);
    // the failed event is processed at 2; the run stops there
    expect(env.now).toBe(2);
    expect(trace).toEqual([]);
  });

  it("a failure with a non-Error value is thrown as that value", () => {
    const env = new Environment();
    const reason = { reason: "plain object" };
    env.event().fail(reason);
    expect(thrown(() => env.run())).toBe(reason);
  });

  it("defused = true swallows the failure", () => {
    const env = new Environment();
    const event = env.event();
    event.fail(new Error("ignored"));
    event.defused = true;
    env.timeout(3);
    expect(() => env.run()).not.toThrow();
    expect(env.now).toBe(3);
  });

  it("a callback can defuse the failure while it is processed", () => {
    const env = new Environment();
    const event = env.event();
    const seen: unknown[] = [];
    event.addCallback((e) => {
      seen.push(e.value);
      e.defused = true;
    });
    const error = new Error("handled by callback");
    event.fail(error);
    expect(() => env.run()).not.toThrow();
    expect(seen).toEqual([error]);
  });

  it("a process that yields a failed event gets the error at its yield and can catch it", () => {
    const env = new Environment();
    const error = new Error("bad news");
    const event = env.event();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        try {
          yield event;
          trace.push("not reached");
        } catch (caught) {
          expect(caught).toBe(error);
          trace.push(`${env.now}:caught ${(caught as Error).message}`);
        }
        // the process goes on afterwards: 4 + 1 = 5
        yield env.timeout(1);
        trace.push(`${env.now}:continued`);
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(4);
        event.fail(error);
      })(),
    );
    expect(() => env.run()).not.toThrow();
    expect(trace).toEqual(["4:caught bad news", "5:continued"]);
    expect(event.defused).toBe(true);
  });
});

describe("Event.trigger", () => {
  it("copies the outcome of another event", () => {
    const env = new Environment();
    const source = env.event<number>();
    source.succeed(8);
    const copy = env.event<number>();
    copy.trigger(source);
    expect(copy.ok).toBe(true);
    expect(copy.value).toBe(8);
    env.run();
    expect(copy.processed).toBe(true);
  });
});
