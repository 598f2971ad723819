import type { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { Environment, Event, Interrupt, Process, type ProcessGenerator } from "./index.js";
import { kbError, thrown } from "./test-support.js";

describe("Process basics", () => {
  it("is an Event", () => {
    const env = new Environment();
    const proc = env.process((function* (): ProcessGenerator<void> {})());
    expect(proc).toBeInstanceOf(Event);
    expect(proc).toBeInstanceOf(Process);
  });

  it("its return value becomes the process event's value", () => {
    const env = new Environment();
    const proc = env.process(
      (function* (): ProcessGenerator<number> {
        yield env.timeout(3);
        return 21 * 2;
      })(),
    );
    expect(proc.triggered).toBe(false);
    env.run();
    expect(proc.ok).toBe(true);
    expect(proc.value).toBe(42);
    expect(proc.processed).toBe(true);
  });

  it("another process yielding it receives the return value when it ends", () => {
    const env = new Environment();
    const trace: string[] = [];
    const child = env.process(
      (function* (): ProcessGenerator<string> {
        // child ends at 5
        yield env.timeout(5);
        return "child-result";
      })(),
      "child",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        const result: string = yield child;
        trace.push(`${env.now}:parent got ${result}`);
      })(),
      "parent",
    );
    env.run();
    expect(trace).toEqual(["5:parent got child-result"]);
  });

  it("a process can start a child and wait for it", () => {
    const env = new Environment();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        // child starts at 1 and waits 2: parent resumes at 3
        const value: number = yield env.process(
          (function* (): ProcessGenerator<number> {
            trace.push(`${env.now}:child start`);
            yield env.timeout(2);
            return 7;
          })(),
          "child",
        );
        trace.push(`${env.now}:parent got ${value}`);
      })(),
      "parent",
    );
    env.run();
    expect(trace).toEqual(["1:child start", "3:parent got 7"]);
  });

  it("isAlive is true until the generator returns; target is what it waits on, null once ended", () => {
    const env = new Environment();
    let timeout: Event | null = null;
    const proc = env.process(
      (function* (): ProcessGenerator<void> {
        timeout = env.timeout(4);
        yield timeout;
      })(),
    );
    expect(proc.isAlive).toBe(true);
    env.run(2);
    expect(proc.isAlive).toBe(true);
    expect(proc.target).toBe(timeout);
    env.run();
    expect(proc.isAlive).toBe(false);
    expect(proc.target).toBeNull();
  });

  it("a process waiting on an already-processed event continues at once, without time passing", () => {
    const env = new Environment();
    const trace: string[] = [];
    const done = env.event<string>();
    done.succeed("early");
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(3);
        // `done` was processed at 0; a process with a timeout at 3 was scheduled after ours
        const value: string = yield done;
        trace.push(`${env.now}:A got ${value}`);
      })(),
      "A",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(3);
        trace.push(`${env.now}:B`);
      })(),
      "B",
    );
    env.run();
    // A continues inside its own step at 3, before B's timeout (scheduled after A's) resumes B
    expect(trace).toEqual(["3:A got early", "3:B"]);
  });

  it("a finished process can be yielded again and gives its value at once", () => {
    const env = new Environment();
    const trace: string[] = [];
    const child = env.process(
      (function* (): ProcessGenerator<string> {
        yield env.timeout(1);
        return "x";
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(10);
        const value: string = yield child;
        trace.push(`${env.now}:${value}`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["10:x"]);
  });
});

describe("Process failures", () => {
  it("an exception fails the process event and reaches the waiter, who can catch it", () => {
    const env = new Environment();
    const problem = new Error("worker broke");
    const trace: string[] = [];
    const worker = env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        throw problem;
      })(),
      "worker",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        try {
          yield worker;
        } catch (error) {
          expect(error).toBe(problem);
          trace.push(`${env.now}:supervisor caught ${(error as Error).message}`);
        }
      })(),
      "supervisor",
    );
    expect(() => env.run()).not.toThrow();
    expect(trace).toEqual(["2:supervisor caught worker broke"]);
    expect(worker.ok).toBe(false);
    expect(worker.value).toBe(problem);
    expect(worker.isAlive).toBe(false);
  });

  it("an exception nobody waits for stops run() with that error", () => {
    const env = new Environment();
    const problem = new Error("unobserved");
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(3);
        throw problem;
      })(),
    );
    env.timeout(10);
    expect(thrown(() => env.run())).toBe(problem);
    expect(env.now).toBe(3);
  });

  it("an exception thrown before the first yield fails the process too", () => {
    const env = new Environment();
    const problem = new Error("at start");
    const proc = env.process(
      // biome-ignore lint/correctness/useYield: the generator fails before it yields
      (function* (): ProcessGenerator<void> {
        throw problem;
      })(),
    );
    expect(thrown(() => env.run())).toBe(problem);
    expect(proc.ok).toBe(false);
  });
});

describe("interrupt", () => {
  it("throws an Interrupt with the cause at the yield, at the interrupter's time", () => {
    const env = new Environment();
    const trace: string[] = [];
    let caught: unknown = null;
    const sleeper = env.process(
      (function* (): ProcessGenerator<void> {
        try {
          yield env.timeout(100);
          trace.push(`${env.now}:woke normally`);
        } catch (error) {
          caught = error;
          trace.push(`${env.now}:interrupted`);
        }
      })(),
      "sleeper",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(7);
        sleeper.interrupt({ reason: "wake up" });
      })(),
      "alarm",
    );
    env.run();
    expect(trace).toEqual(["7:interrupted"]);
    expect(caught).toBeInstanceOf(Interrupt);
    expect((caught as Interrupt).cause).toEqual({ reason: "wake up" });
    // the abandoned timeout is still processed at 100, without resuming the sleeper
    expect(env.now).toBe(100);
  });

  it("the interrupted process can go on waiting on something else", () => {
    const env = new Environment();
    const trace: string[] = [];
    const worker = env.process(
      (function* (): ProcessGenerator<void> {
        let remaining = 10;
        // works 10 units; interrupted at 4 it has 6 left, pauses 2 then finishes: 4 + 2 + 6 = 12
        while (remaining > 0) {
          const start = env.now;
          try {
            yield env.timeout(remaining);
            remaining = 0;
          } catch (error) {
            if (!(error instanceof Interrupt)) throw error;
            remaining -= env.now - start;
            trace.push(`${env.now}:interrupted (${String(error.cause)}), ${remaining} left`);
            yield env.timeout(2);
            trace.push(`${env.now}:resuming`);
          }
        }
        trace.push(`${env.now}:done`);
      })(),
      "worker",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(4);
        worker.interrupt("breakdown");
      })(),
    );
    env.run();
    expect(trace).toEqual(["4:interrupted (breakdown), 6 left", "6:resuming", "12:done"]);
  });

  it("the interrupted process can resume waiting on the same event", () => {
    const env = new Environment();
    const trace: string[] = [];
    const deadline = env.timeout(10, "deadline");
    const waiter = env.process(
      (function* (): ProcessGenerator<void> {
        for (;;) {
          try {
            const value: string = yield deadline;
            trace.push(`${env.now}:${value}`);
            return;
          } catch (error) {
            trace.push(`${env.now}:interrupted by ${String((error as Interrupt).cause)}`);
          }
        }
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(3);
        waiter.interrupt("a");
        yield env.timeout(3);
        waiter.interrupt("b");
      })(),
    );
    env.run();
    // interrupts at 3 and 6; the deadline still resumes it at 10
    expect(trace).toEqual(["3:interrupted by a", "6:interrupted by b", "10:deadline"]);
  });

  it("an interrupt nobody catches fails the process with the Interrupt", () => {
    const env = new Environment();
    const victim = env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(50);
      })(),
      "victim",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        victim.interrupt("kill");
        try {
          yield victim;
        } catch (error) {
          expect(error).toBeInstanceOf(Interrupt);
          expect((error as Interrupt).cause).toBe("kill");
        }
      })(),
    );
    env.run();
    expect(victim.ok).toBe(false);
    expect(victim.value).toBeInstanceOf(Interrupt);
  });

  it("a process interrupted right after it was created starts first and gets the interrupt at its first yield", () => {
    const env = new Environment();
    const trace: string[] = [];
    const proc = env.process(
      (function* (): ProcessGenerator<void> {
        trace.push(`${env.now}:started`);
        try {
          yield env.timeout(5);
        } catch (error) {
          trace.push(`${env.now}:interrupted ${String((error as Interrupt).cause)}`);
        }
      })(),
    );
    proc.interrupt("early");
    env.run();
    expect(trace).toEqual(["0:started", "0:interrupted early"]);
  });

  it("a second interrupt scheduled at the same instant is ignored once the process has ended", () => {
    const env = new Environment();
    const trace: string[] = [];
    const victim = env.process(
      (function* (): ProcessGenerator<string> {
        try {
          yield env.timeout(10);
        } catch (error) {
          trace.push(`${env.now}:caught ${String((error as Interrupt).cause)}`);
        }
        return "ended";
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        // both are accepted: the victim is alive until the first one is processed
        victim.interrupt("first");
        victim.interrupt("second");
        trace.push(`${env.now}:sent two`);
      })(),
    );
    expect(() => env.run()).not.toThrow();
    // the victim returns after the first interrupt; the second finds it dead and does nothing
    expect(trace).toEqual(["2:sent two", "2:caught first"]);
    expect(victim.value).toBe("ended");
  });

  it("interrupting a process that has ended throws DES_INVALID_INTERRUPT", () => {
    const env = new Environment();
    const short = env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
      })(),
      "short",
    );
    env.run();
    const error = kbError(() => short.interrupt("too late"), "DES_INVALID_INTERRUPT");
    expect(error.message).toContain("short");
  });

  it("a process interrupting itself gets DES_INVALID_INTERRUPT naming it", () => {
    const env = new Environment();
    let error: KbError | null = null;
    const self: Process = env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        error = kbError(() => self.interrupt("me"), "DES_INVALID_INTERRUPT");
      })(),
      "narcissus",
    );
    env.run();
    const caught = error as unknown as KbError;
    expect(caught.context.process).toBe("narcissus");
    expect(caught.message).toContain('"narcissus"');
    expect(self.ok).toBe(true);
  });

  it("Interrupt is an Error carrying its cause", () => {
    const interrupt = new Interrupt("why");
    expect(interrupt).toBeInstanceOf(Error);
    expect(interrupt.cause).toBe("why");
  });
});
