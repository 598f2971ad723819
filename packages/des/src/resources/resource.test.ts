import type { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import {
  Environment,
  Interrupt,
  PriorityResource,
  type ProcessGenerator,
  type Request,
  Resource,
} from "../index.js";
import { kbError } from "../test-support.js";

describe("Resource", () => {
  it("has capacity 1 by default and grants up to `capacity` requests at once", () => {
    const env = new Environment();
    expect(new Resource(env).capacity).toBe(1);
    const resource = new Resource(env, { capacity: 2, name: "bus" });
    const r1 = resource.request();
    const r2 = resource.request();
    const r3 = resource.request();
    expect(r1.triggered).toBe(true);
    expect(r2.triggered).toBe(true);
    expect(r3.triggered).toBe(false);
    expect(resource.count).toBe(2);
    expect(resource.users).toEqual([r1, r2]);
    expect(resource.queue).toEqual([r3]);
    resource.release(r1);
    env.run();
    expect(r3.triggered).toBe(true);
    expect(resource.users).toEqual([r2, r3]);
    expect(resource.queue).toEqual([]);
  });

  it("grants requests in FIFO order and tracks count, users and queue over time", () => {
    const env = new Environment();
    const resource = new Resource(env, { capacity: 2, name: "desk" });
    const trace: string[] = [];
    const requests = new Map<string, Request>();
    // five users arrive at 0,1,2,3,4 and each holds for 5
    for (let i = 0; i < 5; i++) {
      env.process(
        (function* (): ProcessGenerator<void> {
          yield env.timeout(i);
          const request = resource.request();
          requests.set(`u${i}`, request);
          yield request;
          trace.push(`${env.now}:u${i} granted`);
          yield env.timeout(5);
          resource.release(request);
        })(),
        `u${i}`,
      );
    }
    // u0 0-5, u1 1-6, u2 waits from 2 and gets u0's slot at 5 (5-10), u3 gets u1's at 6 (6-11),
    // u4 gets u2's at 10 (10-15)
    env.run(4.5);
    expect(resource.count).toBe(2);
    expect(resource.users).toEqual([requests.get("u0"), requests.get("u1")]);
    expect(resource.queue).toEqual([requests.get("u2"), requests.get("u3"), requests.get("u4")]);
    env.run();
    expect(trace).toEqual(["0:u0 granted", "1:u1 granted", "5:u2 granted", "6:u3 granted", "10:u4 granted"]);
    expect(resource.count).toBe(0);
    expect(env.now).toBe(15);
  });

  it("records when a request was made and granted", () => {
    const env = new Environment();
    const resource = new Resource(env);
    const first = resource.request();
    let second: Request | null = null;
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        second = resource.request();
        yield env.timeout(3);
        resource.release(first);
      })(),
    );
    env.run();
    const request = second as unknown as Request;
    expect(first.usageSince).toBe(0);
    expect(request.time).toBe(2);
    expect(request.usageSince).toBe(5);
  });

  it("rejects capacities that are not positive integers", () => {
    const env = new Environment();
    for (const capacity of [0, -2, 2.5, Number.NaN]) {
      kbError(() => new Resource(env, { capacity }), "DES_INVALID_ARGUMENT");
      kbError(() => new PriorityResource(env, { capacity }), "DES_INVALID_ARGUMENT");
    }
  });
});

describe("Resource release errors", () => {
  it("releasing a request on the wrong resource throws DES_WRONG_RESOURCE naming the process", () => {
    const env = new Environment();
    const a = new Resource(env, { name: "alpha" });
    const b = new Resource(env, { name: "beta" });
    let error: KbError | null = null;
    env.process(
      (function* (): ProcessGenerator<void> {
        const request = a.request();
        yield request;
        error = kbError(() => b.release(request), "DES_WRONG_RESOURCE");
        a.release(request);
      })(),
      "confused",
    );
    env.run();
    const caught = error as unknown as KbError;
    expect(caught.context.process).toBe("confused");
    expect(caught.message).toContain('"confused"');
    expect(a.count).toBe(0);
  });

  it("releasing twice throws DES_RELEASED_TWICE naming the process", () => {
    const env = new Environment();
    const resource = new Resource(env, { capacity: 2 });
    let error: KbError | null = null;
    env.process(
      (function* (): ProcessGenerator<void> {
        const request = resource.request();
        yield request;
        yield resource.release(request);
        error = kbError(() => resource.release(request), "DES_RELEASED_TWICE");
      })(),
      "double",
    );
    env.run();
    const caught = error as unknown as KbError;
    expect(caught.context.process).toBe("double");
    expect(caught.message).toContain('"double"');
    expect(resource.count).toBe(0);
  });
});

describe("Resource cancel and withdrawal", () => {
  it("a request abandoned after an interrupt can be cancelled; the slot goes to the next waiter", () => {
    const env = new Environment();
    const resource = new Resource(env, { name: "machine" });
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        const request = resource.request();
        yield request;
        yield env.timeout(10);
        resource.release(request);
      })(),
      "holder",
    );
    let abandoned: Request | null = null;
    const impatient = env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        abandoned = resource.request();
        try {
          yield abandoned;
          trace.push(`${env.now}:impatient granted`);
        } catch (error) {
          if (!(error instanceof Interrupt)) throw error;
          expect(abandoned.cancel()).toBe(true);
          trace.push(`${env.now}:impatient cancelled`);
        }
      })(),
      "impatient",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        const request = resource.request();
        yield request;
        trace.push(`${env.now}:patient granted`);
        resource.release(request);
      })(),
      "patient",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(3);
        impatient.interrupt("no time");
      })(),
    );
    env.run();
    // holder 0-10; impatient queues at 1, is interrupted at 3 and cancels; patient (queued at 2)
    // gets the slot at 10
    expect(trace).toEqual(["3:impatient cancelled", "10:patient granted"]);
    const request = abandoned as unknown as Request;
    expect(request.triggered).toBe(false);
    expect(resource.users).toEqual([]);
    expect(resource.queue).toEqual([]);
  });

  it("release() of a still-waiting request withdraws it: it is never granted", () => {
    const env = new Environment();
    const resource = new Resource(env);
    const holder = resource.request();
    const waiting = resource.request();
    const after = resource.request();
    expect(resource.queue).toEqual([waiting, after]);
    resource.release(waiting);
    expect(resource.queue).toEqual([after]);
    expect(waiting.released).toBe(true);
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(4);
        resource.release(holder);
        yield after;
        trace.push(`${env.now}:after granted`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["4:after granted"]);
    expect(waiting.triggered).toBe(false);
    expect(resource.users).toEqual([after]);
  });

  it("cancel() on a granted request is a no-op returning false", () => {
    const env = new Environment();
    const resource = new Resource(env);
    const request = resource.request();
    expect(request.cancel()).toBe(false);
    expect(resource.users).toEqual([request]);
  });
});

describe("PriorityResource", () => {
  it("serves waiting requests by priority (lower first), FIFO among equals, without preemption", () => {
    const env = new Environment();
    const resource = new PriorityResource(env, { name: "cpu" });
    const trace: string[] = [];
    const user = (name: string, arrive: number, priority: number, hold: number): ProcessGenerator =>
      (function* (): ProcessGenerator<void> {
        yield env.timeout(arrive);
        const request = resource.request(priority);
        yield request;
        trace.push(`${env.now}:${name} granted`);
        yield env.timeout(hold);
        resource.release(request);
      })();
    // "low" holds 0-10 and is not preempted by the urgent arrivals. Waiting at 10:
    // b (prio 2, t=1), c (prio 0, t=2), d (prio 1, t=3), e (prio 0, t=4), f (prio 2, t=5).
    // Order: c, e (prio 0, FIFO), d (1), b, f (2, FIFO); each holds 1.
    env.process(user("low", 0, 5, 10));
    env.process(user("b", 1, 2, 1));
    env.process(user("c", 2, 0, 1));
    env.process(user("d", 3, 1, 1));
    env.process(user("e", 4, 0, 1));
    env.process(user("f", 5, 2, 1));
    env.run();
    expect(trace).toEqual([
      "0:low granted",
      "10:c granted",
      "11:e granted",
      "12:d granted",
      "13:b granted",
      "14:f granted",
    ]);
  });

  it("exposes the waiting requests in service order", () => {
    const env = new Environment();
    const resource = new PriorityResource(env);
    resource.request(0);
    const p3 = resource.request(3);
    const p1 = resource.request(1);
    const p1b = resource.request(1);
    const p0 = resource.request(0);
    expect(resource.queue).toEqual([p0, p1, p1b, p3]);
    expect(p3.priority).toBe(3);
  });

  it("defaults to priority 0 and rejects a NaN priority", () => {
    const env = new Environment();
    const resource = new PriorityResource(env);
    expect(resource.request().priority).toBe(0);
    kbError(() => resource.request(Number.NaN), "DES_INVALID_ARGUMENT");
  });
});
