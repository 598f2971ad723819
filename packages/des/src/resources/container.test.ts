import type { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { Container, Environment, type ProcessGenerator } from "../index.js";
import { kbError } from "../test-support.js";

describe("Container", () => {
  it("defaults to level 0 and unbounded capacity; init sets the starting level", () => {
    const env = new Environment();
    const unbounded = new Container(env);
    expect(unbounded.level).toBe(0);
    expect(unbounded.capacity).toBe(Number.POSITIVE_INFINITY);
    const tank = new Container(env, { capacity: 50, init: 20, name: "tank" });
    expect(tank.level).toBe(20);
    expect(tank.capacity).toBe(50);
  });

  it("a put or get that can be served changes the level at once", () => {
    const env = new Environment();
    const tank = new Container(env, { capacity: 10, init: 5 });
    const put = tank.put(3);
    expect(put.triggered).toBe(true);
    expect(tank.level).toBe(8);
    const get = tank.get(6);
    expect(get.triggered).toBe(true);
    expect(tank.level).toBe(2);
    env.run();
    expect(env.now).toBe(0);
  });

  it("a get waits until the level covers its amount", () => {
    const env = new Environment();
    const tank = new Container(env, { capacity: 100, name: "tank" });
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield tank.get(30);
        trace.push(`${env.now}:got 30, level ${tank.level}`);
      })(),
      "consumer",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        // level 10 at 1, 20 at 2, 30 at 3: the get is served at 3
        for (let i = 0; i < 4; i++) {
          yield env.timeout(1);
          yield tank.put(10);
        }
      })(),
      "producer",
    );
    env.run();
    expect(trace).toEqual(["3:got 30, level 0"]);
    expect(tank.level).toBe(10);
  });

  it("a put waits until the amount fits under the capacity", () => {
    const env = new Environment();
    const tank = new Container(env, { capacity: 10, init: 8 });
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield tank.put(5);
        trace.push(`${env.now}:put 5, level ${tank.level}`);
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        // at 2: 8 - 4 = 4, then the waiting put fits: 4 + 5 = 9
        yield env.timeout(2);
        yield tank.get(4);
        trace.push(`${env.now}:got 4`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["2:got 4", "2:put 5, level 9"]);
  });

  it("serves several waiting gets with one put, in FIFO order, while each fits", () => {
    const env = new Environment();
    const tank = new Container(env);
    const trace: string[] = [];
    for (const [name, amount] of [
      ["a", 2],
      ["b", 3],
      ["c", 4],
    ] as const) {
      env.process(
        (function* (): ProcessGenerator<void> {
          yield tank.get(amount);
          trace.push(`${env.now}:${name} got ${amount}`);
        })(),
      );
    }
    env.process(
      (function* (): ProcessGenerator<void> {
        // 6 at 1 covers a (2) and b (3), leaving 1 < 4 for c; 3 more at 2 gives c its 4
        yield env.timeout(1);
        yield tank.put(6);
        yield env.timeout(1);
        yield tank.put(3);
      })(),
    );
    env.run();
    expect(trace).toEqual(["1:a got 2", "1:b got 3", "2:c got 4"]);
    expect(tank.level).toBe(0);
  });

  it("serves several waiting puts with one get, in FIFO order, while each fits", () => {
    const env = new Environment();
    const tank = new Container(env, { capacity: 10, init: 10 });
    const trace: string[] = [];
    for (const [name, amount] of [
      ["a", 2],
      ["b", 3],
      ["c", 4],
    ] as const) {
      env.process(
        (function* (): ProcessGenerator<void> {
          yield tank.put(amount);
          trace.push(`${env.now}:${name} put ${amount}`);
        })(),
      );
    }
    env.process(
      (function* (): ProcessGenerator<void> {
        // taking 5 at 1 makes room for a (2) and b (3) but not c (4); taking 4 at 2 lets c in
        yield env.timeout(1);
        yield tank.get(5);
        yield env.timeout(1);
        yield tank.get(4);
      })(),
    );
    env.run();
    expect(trace).toEqual(["1:a put 2", "1:b put 3", "2:c put 4"]);
    expect(tank.level).toBe(10);
  });

  it("a large get at the head of the queue holds back smaller later gets (FIFO, as SimPy)", () => {
    const env = new Environment();
    const tank = new Container(env);
    const trace: string[] = [];
    for (const [name, amount] of [
      ["big", 5],
      ["small", 1],
    ] as const) {
      env.process(
        (function* (): ProcessGenerator<void> {
          yield tank.get(amount);
          trace.push(`${env.now}:${name}`);
        })(),
      );
    }
    env.process(
      (function* (): ProcessGenerator<void> {
        // level 3 at 1 would cover "small" but "big" is first; at 2 the level is 6: both served
        yield env.timeout(1);
        yield tank.put(3);
        yield env.timeout(1);
        yield tank.put(3);
      })(),
    );
    env.run();
    expect(trace).toEqual(["2:big", "2:small"]);
  });

  it("a waiting get can be cancelled", () => {
    const env = new Environment();
    const tank = new Container(env);
    const get = tank.get(5);
    expect(get.cancel()).toBe(true);
    tank.put(5);
    env.run();
    expect(get.triggered).toBe(false);
    expect(tank.level).toBe(5);
  });

  it("rejects amounts that are <= 0, not numbers, or above the capacity, naming the process", () => {
    const env = new Environment();
    const tank = new Container(env, { capacity: 10, name: "tank" });
    for (const amount of [0, -1, Number.NaN, 11]) {
      kbError(() => tank.put(amount), "DES_INVALID_ARGUMENT");
      kbError(() => tank.get(amount), "DES_INVALID_ARGUMENT");
    }
    kbError(() => tank.put("3" as unknown as number), "DES_INVALID_ARGUMENT");
    let error: KbError | null = null;
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        error = kbError(() => tank.get(20), "DES_INVALID_ARGUMENT");
      })(),
      "greedy",
    );
    env.run();
    const caught = error as unknown as KbError;
    expect(caught.context.process).toBe("greedy");
    expect(caught.message).toContain('"greedy"');
    expect(tank.level).toBe(0);
  });

  it("accepts amounts equal to the capacity", () => {
    const env = new Environment();
    const tank = new Container(env, { capacity: 10 });
    expect(tank.put(10).triggered).toBe(true);
    expect(tank.get(10).triggered).toBe(true);
  });

  it("rejects a capacity <= 0 and an init outside [0, capacity]", () => {
    const env = new Environment();
    kbError(() => new Container(env, { capacity: 0 }), "DES_INVALID_ARGUMENT");
    kbError(() => new Container(env, { capacity: -5 }), "DES_INVALID_ARGUMENT");
    kbError(() => new Container(env, { capacity: Number.NaN }), "DES_INVALID_ARGUMENT");
    kbError(() => new Container(env, { capacity: 10, init: 11 }), "DES_INVALID_ARGUMENT");
    kbError(() => new Container(env, { init: -1 }), "DES_INVALID_ARGUMENT");
  });
});
