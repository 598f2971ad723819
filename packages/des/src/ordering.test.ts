import { describe, expect, it } from "vitest";
import { Environment, type Interrupt, type ProcessGenerator, Resource, Store } from "./index.js";

// Every expected trace below was derived by hand from SimPy 4's rules: the schedule is ordered by
// (time, priority, insertion order) with URGENT (process start, interrupt) before NORMAL; a process
// runs synchronously from one yield to the next; a resource put/get event is triggered when it is
// granted and its callbacks (retry the other queue, then resume the waiter) run when it is
// processed.

describe("equal-time events", () => {
  it("run in the order they were scheduled, whatever the order the processes were created", () => {
    const env = new Environment();
    const trace: string[] = [];
    const sleeper = (name: string, start: number, delay: number): ProcessGenerator =>
      (function* (): ProcessGenerator<void> {
        yield env.timeout(start);
        yield env.timeout(delay);
        trace.push(`${env.now}:${name}`);
      })();
    // a: schedules its second timeout at 2 (2 + 4 = 6); b at 1 (1 + 5 = 6); c at 0 (0 + 6 = 6).
    // All end at 6, in the order the 6-timeouts were scheduled: c (t=0), b (t=1), a (t=2).
    env.process(sleeper("a", 2, 4));
    env.process(sleeper("b", 1, 5));
    env.process(sleeper("c", 0, 6));
    env.run();
    expect(trace).toEqual(["6:c", "6:b", "6:a"]);
  });

  // Regression (time-queue.ts, FutureQueue.bucketAt): future instants are found through a ring
  // indexed by `time & 1023`, with colliding instants in an overflow map. When the ring slot is
  // free again, a new event for an instant that already has an overflow bucket must join that
  // bucket, not open a second one in the ring that would be served first.
  it("run in scheduling order even when the instant was first scheduled long before", () => {
    // For each distance d = 2^k: "early" schedules timeout(5 + d) at 0; "late" waits 5, then
    // schedules timeout(d), due at the same 5 + d. early's was scheduled first, so it runs first.
    for (let k = 4; k <= 16; k++) {
      const distance = 2 ** k;
      const env = new Environment();
      const trace: string[] = [];
      env.process(
        (function* (): ProcessGenerator<void> {
          yield env.timeout(5);
          yield env.timeout(distance);
          trace.push(`${env.now}:late`);
        })(),
      );
      env.process(
        (function* (): ProcessGenerator<void> {
          yield env.timeout(5 + distance);
          trace.push(`${env.now}:early`);
        })(),
      );
      env.run();
      expect(trace).toEqual([`${5 + distance}:early`, `${5 + distance}:late`]);
    }
  });

  // The same regression seen through run(until): the stop event (urgent, at `until`) may sit in
  // the overflow bucket; a normal event scheduled later for `until` must still run after it.
  it("run(until) does not process an event at exactly `until` scheduled after the call", () => {
    for (let k = 4; k <= 16; k++) {
      const distance = 2 ** k;
      const env = new Environment();
      const trace: string[] = [];
      env.process(
        (function* (): ProcessGenerator<void> {
          yield env.timeout(5);
          // due at 5 + distance, exactly the `until` below
          yield env.timeout(distance);
          trace.push(`${env.now}:at until`);
        })(),
      );
      env.run(1);
      env.run(5 + distance);
      expect(trace).toEqual([]);
      expect(env.now).toBe(5 + distance);
      env.run();
      expect(trace).toEqual([`${5 + distance}:at until`]);
    }
  });

  it("succeed() calls at one instant are processed in call order", () => {
    const env = new Environment();
    const trace: string[] = [];
    const events = ["x", "y", "z"].map((name) => {
      const event = env.event();
      event.addCallback(() => trace.push(`${env.now}:${name}`));
      return event;
    });
    // triggered in the order z, x, y
    events[2]?.succeed();
    events[0]?.succeed();
    events[1]?.succeed();
    env.run();
    expect(trace).toEqual(["0:z", "0:x", "0:y"]);
  });
});

describe("process start is urgent", () => {
  it("a new process starts before normal events already scheduled at that instant, after urgent ones", () => {
    const env = new Environment();
    const trace: string[] = [];
    // ev: NORMAL at 0, scheduled first of all
    const ev = env.event();
    ev.addCallback(() => trace.push(`${env.now}:ev`));
    ev.succeed();
    // A and B starts: URGENT at 0, in that order. A's step schedules C's start (URGENT, after B's)
    // and a NORMAL timeout(0) behind ev. So: A, B, C (urgent, FIFO), then ev, then A's timeout.
    env.process(
      (function* (): ProcessGenerator<void> {
        trace.push(`${env.now}:A`);
        env.process(
          (function* (): ProcessGenerator<void> {
            trace.push(`${env.now}:C`);
            yield env.timeout(0);
          })(),
        );
        yield env.timeout(0);
        trace.push(`${env.now}:A after 0`);
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        trace.push(`${env.now}:B`);
        yield env.timeout(0);
      })(),
    );
    env.run();
    expect(trace).toEqual(["0:A", "0:B", "0:C", "0:ev", "0:A after 0"]);
  });

  it("a process started at t runs before another process whose timeout is due at t", () => {
    const env = new Environment();
    const trace: string[] = [];
    // X and Y both wait until 5, X's timeout scheduled first. At 5 X starts Z: Z's start is URGENT,
    // so Z runs before Y's (NORMAL) timeout. Z's timeout(0) then goes behind Y's.
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(5);
        trace.push(`${env.now}:X`);
        env.process(
          (function* (): ProcessGenerator<void> {
            trace.push(`${env.now}:Z start`);
            yield env.timeout(0);
            trace.push(`${env.now}:Z after 0`);
          })(),
        );
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(5);
        trace.push(`${env.now}:Y`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["5:X", "5:Z start", "5:Y", "5:Z after 0"]);
  });
});

describe("interrupts are urgent", () => {
  it("an interrupt is handled before normal events already due at that instant", () => {
    const env = new Environment();
    const trace: string[] = [];
    const w = env.process(
      (function* (): ProcessGenerator<void> {
        try {
          yield env.timeout(10);
          trace.push(`${env.now}:W timeout`);
        } catch (error) {
          trace.push(`${env.now}:W interrupted ${String((error as Interrupt).cause)}`);
        }
        yield env.timeout(1);
        trace.push(`${env.now}:W done`);
      })(),
    );
    // X's and Y's timeouts are both due at 5, X's first. X interrupts W at 5 and goes on (the
    // interrupt is only scheduled); the interrupt is URGENT, so W handles it before Y's timeout.
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(5);
        trace.push(`${env.now}:X`);
        w.interrupt("stop");
        trace.push(`${env.now}:X after interrupt`);
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(5);
        trace.push(`${env.now}:Y`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["5:X", "5:X after interrupt", "5:W interrupted stop", "5:Y", "6:W done"]);
    // W's abandoned timeout is still processed at 10, without resuming W
    expect(env.now).toBe(10);
  });
});

describe("timeout(0)", () => {
  it("yields to everything already scheduled at the same instant", () => {
    const env = new Environment();
    const trace: string[] = [];
    // A and B start at 0 (A first). Each logs, then waits 0: A's timeout is scheduled before B's,
    // so the second halves run A then B, after both first halves.
    for (const name of ["A", "B"]) {
      env.process(
        (function* (): ProcessGenerator<void> {
          trace.push(`${env.now}:${name}1`);
          yield env.timeout(0);
          trace.push(`${env.now}:${name}2`);
        })(),
      );
    }
    env.run();
    expect(trace).toEqual(["0:A1", "0:B1", "0:A2", "0:B2"]);
  });

  it("lets a process woken by an event at the same instant run first", () => {
    const env = new Environment();
    const trace: string[] = [];
    const signal = env.event<string>();
    env.process(
      (function* (): ProcessGenerator<void> {
        const value: string = yield signal;
        trace.push(`${env.now}:Q got ${value}`);
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        // signal is scheduled before the timeout(0): Q resumes first
        signal.succeed("s");
        yield env.timeout(0);
        trace.push(`${env.now}:P after 0`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["2:Q got s", "2:P after 0"]);
  });
});

describe("long chains at one instant", () => {
  it("keep their order over a hundred thousand zero-delay steps", () => {
    const env = new Environment();
    const order: string[] = [];
    const steps = 60_000;
    // A and B alternate: each timeout(0) goes behind the other's, so the order is A B A B ...
    for (const name of ["A", "B"]) {
      env.process(
        (function* (): ProcessGenerator<void> {
          for (let i = 0; i < steps; i++) {
            yield env.timeout(0);
            order.push(name);
          }
        })(),
      );
    }
    env.run();
    expect(env.now).toBe(0);
    expect(order.length).toBe(2 * steps);
    let mismatches = 0;
    for (let i = 0; i < order.length; i++) if (order[i] !== (i % 2 === 0 ? "A" : "B")) mismatches += 1;
    expect(mismatches).toBe(0);
  });
});

describe("store put/get chaining", () => {
  it("a get blocked on an empty store is satisfied when the put's event is processed", () => {
    const env = new Environment();
    const store = new Store<string>(env, { name: "box" });
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        const item: string = yield store.get();
        trace.push(`${env.now}:C got ${item}`);
      })(),
      "C",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        // put: item stored, put event scheduled (N1). timeout(0): N2.
        // N1 processed -> the waiting get is granted (N3). N2 -> "P after0". N3 -> C resumes.
        store.put("x");
        trace.push(`${env.now}:P put`);
        yield env.timeout(0);
        trace.push(`${env.now}:P after0`);
      })(),
      "P",
    );
    env.run();
    expect(trace).toEqual(["1:P put", "1:P after0", "1:C got x"]);
  });

  it("a 2-stage pipeline with capacity-1 stores follows the SimPy trace", () => {
    // feeder -> s0 -> stage0 (latency 1) -> s1 -> stage1 (latency 3) -> s2 -> sink, every store of
    // capacity 1, tokens 0..3. Processes start in the order feeder, stage0, stage1, sink.
    const env = new Environment();
    const stores = [0, 1, 2].map((i) => new Store<number>(env, { capacity: 1, name: `s${i}` }));
    const [s0, s1, s2] = stores as [Store<number>, Store<number>, Store<number>];
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < 4; i++) {
          yield s0.put(i);
          trace.push(`${env.now}:feed ${i}`);
        }
      })(),
      "feeder",
    );
    const stage = (j: number, from: Store<number>, to: Store<number>, latency: number): ProcessGenerator =>
      (function* (): ProcessGenerator<void> {
        for (;;) {
          const token: number = yield from.get();
          trace.push(`${env.now}:s${j} got ${token}`);
          yield env.timeout(latency);
          yield to.put(token);
          trace.push(`${env.now}:s${j} put ${token}`);
        }
      })();
    env.process(stage(0, s0, s1, 1), "stage0");
    env.process(stage(1, s1, s2, 3), "stage1");
    env.process(
      (function* (): ProcessGenerator<void> {
        for (;;) {
          const token: number = yield s2.get();
          trace.push(`${env.now}:sink got ${token}`);
        }
      })(),
      "sink",
    );
    env.run();
    // Hand derivation (Nk = k-th NORMAL event of the instant):
    // t=0  starts (urgent): F put0 -> s0=[0], granted (N1). S0 get -> takes 0 (N2). S1, K wait.
    //      N1: F "feed 0", put1 -> s0=[1] (N3). N2: S0 "got 0", timeout 1.
    //      N3: F "feed 1", put2 -> s0 full, waits.
    // t=1  S0 put0 -> s1=[0] (N1). N1: S1's get granted (N2); S0 "put 0", get -> takes 1 (N3).
    //      N2: S1 "got 0", timeout 3 (->4). N3: retries s0 puts: put2 -> s0=[2] (N4); S0 "got 1",
    //      timeout 1. N4: F "feed 2", put3 -> s0 full, waits.
    // t=2  S0 put1 -> s1=[1] (N1). N1: no getter; S0 "put 1", get -> takes 2 (N2).
    //      N2: put3 -> s0=[3] (N3); S0 "got 2", timeout 1. N3: F "feed 3", F ends.
    // t=3  S0 put2 -> s1 full, waits.
    // t=4  S1 put0 -> s2=[0] (N1). N1: sink's get granted (N2); S1 "put 0", get -> takes 1 (N3).
    //      N2: sink "got 0", waits. N3: put2 -> s1=[2] (N4); S1 "got 1", timeout 3 (->7).
    //      N4: S0 "put 2", get -> takes 3 (N5). N5: S0 "got 3", timeout 1.
    // t=5  S0 put3 -> s1 full, waits.
    // t=7  S1 put1, sink "got 1", S1 takes 2 -> frees s1 -> put3 granted; S0 "put 3" (s0 drained).
    // t=10 S1 "put 2", sink "got 2", S1 "got 3". t=13 S1 "put 3", sink "got 3".
    expect(trace).toEqual([
      "0:feed 0",
      "0:s0 got 0",
      "0:feed 1",
      "1:s0 put 0",
      "1:s1 got 0",
      "1:s0 got 1",
      "1:feed 2",
      "2:s0 put 1",
      "2:s0 got 2",
      "2:feed 3",
      "4:s1 put 0",
      "4:sink got 0",
      "4:s1 got 1",
      "4:s0 put 2",
      "4:s0 got 3",
      "7:s1 put 1",
      "7:sink got 1",
      "7:s1 got 2",
      "7:s0 put 3",
      "10:s1 put 2",
      "10:sink got 2",
      "10:s1 got 3",
      "13:s1 put 3",
      "13:sink got 3",
    ]);
    expect(env.now).toBe(13);
    // stage0, stage1 and the sink wait on empty stores forever; the feeder has ended
    expect(env.blocked().map((entry) => entry.name)).toEqual(["stage0", "stage1", "sink"]);
  });
});

describe("resource handover", () => {
  it("a released slot goes to the next request when the release event is processed", () => {
    const env = new Environment();
    const resource = new Resource(env, { capacity: 1, name: "r" });
    const trace: string[] = [];
    const user = (name: string, start: number, hold: number): ProcessGenerator =>
      (function* (): ProcessGenerator<void> {
        yield env.timeout(start);
        const request = resource.request();
        trace.push(`${env.now}:${name} request`);
        yield request;
        trace.push(`${env.now}:${name} granted`);
        yield env.timeout(hold);
        resource.release(request);
        trace.push(`${env.now}:${name} released`);
      })();
    env.process(user("a", 0, 3));
    env.process(user("b", 1, 2));
    env.process(user("c", 1, 1));
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(3);
        trace.push(`${env.now}:O`);
      })(),
    );
    env.run();
    // a holds 0..3. O's timeout(3) was scheduled at its start (urgent), before a's hold timeout
    // (scheduled when a's request was processed), so O logs first at 3. a releases at 3; b (queued
    // first) is granted at 3 and holds to 5; c is granted at 5 and holds to 6.
    expect(trace).toEqual([
      "0:a request",
      "0:a granted",
      "1:b request",
      "1:c request",
      "3:O",
      "3:a released",
      "3:b granted",
      "5:b released",
      "5:c granted",
      "6:c released",
    ]);
  });

  it("a request made in the same instant as a release does not overtake a waiting request", () => {
    const env = new Environment();
    const resource = new Resource(env, { capacity: 1 });
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        const request = resource.request();
        yield request;
        yield env.timeout(2);
        resource.release(request);
        // re-request at once: the slot is free until the release is processed, but the waiting
        // request of "waiter" is first in the queue
        const again = resource.request();
        yield again;
        trace.push(`${env.now}:holder again`);
        resource.release(again);
      })(),
      "holder",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        const request = resource.request();
        yield request;
        trace.push(`${env.now}:waiter granted`);
        yield env.timeout(4);
        resource.release(request);
      })(),
      "waiter",
    );
    env.run();
    // waiter granted at 2 and holds to 6; holder gets its second request at 6
    expect(trace).toEqual(["2:waiter granted", "6:holder again"]);
  });
});
