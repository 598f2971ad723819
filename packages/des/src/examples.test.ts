import { describe, expect, it } from "vitest";
import { type ConditionValue, Environment, Interrupt, type ProcessGenerator, Resource } from "./index.js";

// Small complete models in the style of the SimPy examples; the expected traces were derived by hand
// (and agree with SimPy running the same model).

describe("bank with reneging customers", () => {
  it("serves customers in order and lets the impatient ones leave", () => {
    const env = new Environment();
    const counter = new Resource(env, { capacity: 1, name: "counter" });
    const trace: string[] = [];
    const customer = (name: string, arrive: number, patience: number, service: number): ProcessGenerator =>
      (function* (): ProcessGenerator<void> {
        yield env.timeout(arrive);
        trace.push(`${env.now}:${name} arrives`);
        const request = counter.request();
        const result: ConditionValue = yield env.anyOf([request, env.timeout(patience)]);
        if (result.has(request)) {
          trace.push(`${env.now}:${name} served`);
          yield env.timeout(service);
          counter.release(request);
          trace.push(`${env.now}:${name} leaves`);
        } else {
          // like SimPy's `with counter.request() as request:` on exit: withdraw, or free the slot if
          // the request was granted in the meantime
          request.cancel();
          counter.release(request);
          trace.push(`${env.now}:${name} reneges`);
        }
      })();
    const customers: [string, number, number, number][] = [
      ["c0", 0, 10, 4],
      ["c1", 1, 3, 4],
      ["c2", 2, 8, 3],
      ["c3", 3, 2, 1],
      ["c4", 5, 9, 2],
    ];
    for (const [name, arrive, patience, service] of customers) {
      env.process(customer(name, arrive, patience, service), name);
    }
    env.run();
    // c0 is served 0-4. At 4 c0's service timeout (scheduled at 0) comes before c1's patience
    // timeout (scheduled at 1): c0 releases, then c1's patience ends and its anyOf triggers; the
    // release is processed next and grants c1's request, but c1 resumes with only the patience
    // timeout processed, so it reneges and frees the slot; c2 (queued at 2) is served 4-7.
    // c3 (patience 2) reneges at 5, after c4 arrives at 5 (c4's arrival timeout was scheduled at
    // 0, c3's patience at 3). c4 is served 7-9. c4's patience timeout still ends the run at 14.
    expect(trace).toEqual([
      "0:c0 arrives",
      "0:c0 served",
      "1:c1 arrives",
      "2:c2 arrives",
      "3:c3 arrives",
      "4:c0 leaves",
      "4:c1 reneges",
      "4:c2 served",
      "5:c4 arrives",
      "5:c3 reneges",
      "7:c2 leaves",
      "7:c4 served",
      "9:c4 leaves",
    ]);
    expect(env.now).toBe(14);
    expect(counter.count).toBe(0);
    expect(counter.queue).toEqual([]);
    expect(env.blocked()).toEqual([]);
  });
});

describe("machine shop with breakdowns", () => {
  it("resumes interrupted work with the remaining time", () => {
    const env = new Environment();
    const trace: string[] = [];
    let parts = 0;
    const machine = env.process(
      (function* (): ProcessGenerator<void> {
        for (;;) {
          let left = 5;
          while (left > 0) {
            const start = env.now;
            try {
              yield env.timeout(left);
              left = 0;
            } catch (error) {
              if (!(error instanceof Interrupt)) throw error;
              left -= env.now - start;
              trace.push(`${env.now}:broken (${left} left)`);
              yield env.timeout(2);
              trace.push(`${env.now}:repaired`);
            }
          }
          parts += 1;
          trace.push(`${env.now}:part ${parts}`);
        }
      })(),
      "machine",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        for (const at of [7, 16, 25]) {
          yield env.timeout(at - env.now);
          machine.interrupt("failure");
        }
      })(),
      "breaker",
    );
    env.run(30);
    // part 1: 0-5. part 2: 5-7 (2 done, 3 left), repair 7-9, 9-12. part 3: 12-16 (1 left),
    // repair 16-18, 18-19. part 4: 19-24. part 5: 24-25 (4 left), repair 25-27, would end at 31.
    expect(trace).toEqual([
      "5:part 1",
      "7:broken (3 left)",
      "9:repaired",
      "12:part 2",
      "16:broken (1 left)",
      "18:repaired",
      "19:part 3",
      "24:part 4",
      "25:broken (4 left)",
      "27:repaired",
    ]);
    expect(parts).toBe(4);
    expect(env.now).toBe(30);
    expect(machine.isAlive).toBe(true);
  });
});
