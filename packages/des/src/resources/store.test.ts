import { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import {
  Environment,
  FilterStore,
  Interrupt,
  PriorityStore,
  type Process,
  type ProcessGenerator,
  Store,
  type StoreGet,
} from "../index.js";
import { kbError } from "../test-support.js";

describe("Store", () => {
  it("has unbounded capacity by default: puts never wait", () => {
    const env = new Environment();
    const store = new Store<number>(env);
    expect(store.capacity).toBe(Number.POSITIVE_INFINITY);
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < 1000; i++) yield store.put(i);
        trace.push(`${env.now}:all put`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["0:all put"]);
    expect(store.size).toBe(1000);
  });

  it("gives items out first in, first out", () => {
    const env = new Environment();
    const store = new Store<string>(env);
    const got: string[] = [];
    store.put("a");
    store.put("b");
    store.put("c");
    expect(store.items).toEqual(["a", "b", "c"]);
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < 3; i++) got.push(yield store.get());
      })(),
    );
    env.run();
    expect(got).toEqual(["a", "b", "c"]);
    expect(store.size).toBe(0);
  });

  it("applies backpressure: a put into a full store waits until a get frees a slot", () => {
    const env = new Environment();
    const store = new Store<number>(env, { capacity: 2, name: "buffer" });
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < 5; i++) {
          yield store.put(i);
          trace.push(`${env.now}:put ${i}`);
        }
      })(),
      "producer",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < 5; i++) {
          yield env.timeout(3);
          const item: number = yield store.get();
          trace.push(`${env.now}:got ${item}`);
        }
      })(),
      "consumer",
    );
    // puts 0 and 1 fit at 0; put 2 waits. Every 3 ns a get frees a slot and the waiting put goes
    // in at the same instant: put 2 at 3, put 3 at 6, put 4 at 9. Gets at 3, 6, 9, 12, 15.
    env.run(1);
    expect(store.items).toEqual([0, 1]);
    expect(store.putQueue.length).toBe(1);
    env.run();
    expect(trace).toEqual([
      "0:put 0",
      "0:put 1",
      "3:got 0",
      "3:put 2",
      "6:got 1",
      "6:put 3",
      "9:got 2",
      "9:put 4",
      "12:got 3",
      "15:got 4",
    ]);
  });

  it("serves waiting puts in FIFO order", () => {
    const env = new Environment();
    const store = new Store<string>(env, { capacity: 1 });
    store.put("first");
    const trace: string[] = [];
    for (const [name, delay] of [
      ["p1", 1],
      ["p2", 2],
      ["p3", 3],
    ] as const) {
      env.process(
        (function* (): ProcessGenerator<void> {
          yield env.timeout(delay);
          yield store.put(name);
          trace.push(`${env.now}:${name} put`);
        })(),
      );
    }
    const got: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(10);
        for (let i = 0; i < 4; i++) {
          got.push(yield store.get());
          yield env.timeout(1);
        }
      })(),
    );
    env.run();
    // p1, p2, p3 queue at 1, 2, 3 behind the full store; the gets at 10, 11, 12 let them in in order
    expect(got).toEqual(["first", "p1", "p2", "p3"]);
    expect(trace).toEqual(["10:p1 put", "11:p2 put", "12:p3 put"]);
  });

  it("serves gets waiting on an empty store in FIFO order", () => {
    const env = new Environment();
    const store = new Store<string>(env);
    const trace: string[] = [];
    for (const name of ["c1", "c2", "c3"]) {
      env.process(
        (function* (): ProcessGenerator<void> {
          const item: string = yield store.get();
          trace.push(`${env.now}:${name} got ${item}`);
        })(),
      );
    }
    env.process(
      (function* (): ProcessGenerator<void> {
        // puts at 1, 2, 3: each goes to the oldest waiting get
        for (const item of ["a", "b", "c"]) {
          yield env.timeout(1);
          yield store.put(item);
        }
      })(),
    );
    expect(store.getQueue.length).toBe(0);
    env.run(0.5);
    expect(store.getQueue.length).toBe(3);
    env.run();
    expect(trace).toEqual(["1:c1 got a", "2:c2 got b", "3:c3 got c"]);
  });

  it("a get on a store that holds an item succeeds without time passing", () => {
    const env = new Environment();
    const store = new Store<number>(env);
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(4);
        yield store.put(9);
        const item: number = yield store.get();
        trace.push(`${env.now}:${item}`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["4:9"]);
  });

  it("keeps FIFO order and the capacity bound over many put/get cycles", () => {
    for (const capacity of [1, 3, 17, Number.POSITIVE_INFINITY]) {
      const env = new Environment();
      const store = new Store<number>(env, { capacity });
      let seed = 7;
      const random = (): number => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed % 4;
      };
      const received: number[] = [];
      let maxSize = 0;
      env.process(
        (function* (): ProcessGenerator<void> {
          for (let i = 0; i < 300; i++) {
            yield env.timeout(random());
            yield store.put(i);
            maxSize = Math.max(maxSize, store.size);
          }
        })(),
      );
      env.process(
        (function* (): ProcessGenerator<void> {
          for (let i = 0; i < 300; i++) {
            yield env.timeout(random() * 2);
            received.push(yield store.get());
          }
        })(),
      );
      env.run();
      expect(received).toEqual(Array.from({ length: 300 }, (_, i) => i));
      expect(maxSize).toBeLessThanOrEqual(capacity);
      expect(store.size).toBe(0);
    }
  });

  it("keeps FIFO order when an unbounded store grows after items were taken", () => {
    const env = new Environment();
    const store = new Store<number>(env);
    let next = 0;
    for (let i = 0; i < 10; i++) store.put(next++);
    const got: number[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < 7; i++) got.push(yield store.get());
        // 3 left at the back of the buffer; 40 more wrap around and force growth
        for (let i = 0; i < 40; i++) yield store.put(next++);
        expect(store.items).toEqual(Array.from({ length: 43 }, (_, i) => i + 7));
        for (let i = 0; i < 43; i++) got.push(yield store.get());
      })(),
    );
    env.run();
    expect(got).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it("rejects capacities that are not positive integers", () => {
    const env = new Environment();
    for (const capacity of [0, -1, 1.5, Number.NaN]) {
      kbError(() => new Store(env, { capacity }), "DES_INVALID_ARGUMENT");
      kbError(() => new FilterStore(env, { capacity }), "DES_INVALID_ARGUMENT");
      kbError(() => new PriorityStore(env, { capacity }), "DES_INVALID_ARGUMENT");
    }
    kbError(() => new Store(env, { capacity: "3" as unknown as number }), "DES_INVALID_ARGUMENT");
  });
});

describe("Store cancel", () => {
  it("a get abandoned by an interrupted process can be cancelled; the item goes to the next getter", () => {
    const env = new Environment();
    const store = new Store<string>(env, { name: "jobs" });
    const trace: string[] = [];
    const impatient = env.process(
      (function* (): ProcessGenerator<void> {
        const get = store.get();
        try {
          yield get;
        } catch (error) {
          if (!(error instanceof Interrupt)) throw error;
          expect(get.cancel()).toBe(true);
          trace.push(`${env.now}:impatient gave up`);
        }
      })(),
      "impatient",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        const item: string = yield store.get();
        trace.push(`${env.now}:patient got ${item}`);
      })(),
      "patient",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        impatient.interrupt();
        yield env.timeout(1);
        yield store.put("job");
      })(),
    );
    env.run();
    // interrupted at 2; the put at 3 goes to the patient getter
    expect(trace).toEqual(["2:impatient gave up", "3:patient got job"]);
    expect(store.getQueue.length).toBe(0);
    expect(store.size).toBe(0);
  });

  it("an abandoned get that is not cancelled still takes an item (so cancel matters)", () => {
    const env = new Environment();
    const store = new Store<string>(env);
    let abandoned: StoreGet<string> | null = null;
    const quitter = env.process(
      (function* (): ProcessGenerator<void> {
        abandoned = store.get();
        try {
          yield abandoned;
        } catch {
          // gives up without cancelling
        }
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        quitter.interrupt();
        yield env.timeout(1);
        store.put("lost");
      })(),
    );
    env.run();
    const get = abandoned as unknown as StoreGet<string>;
    expect(get.ok).toBe(true);
    expect(get.value).toBe("lost");
    expect(store.size).toBe(0);
  });

  it("cancel() on a granted get is a no-op returning false", () => {
    const env = new Environment();
    const store = new Store<number>(env);
    store.put(1);
    const get = store.get();
    expect(get.triggered).toBe(true);
    expect(get.cancel()).toBe(false);
    env.run();
    expect(get.value).toBe(1);
  });

  it("a cancelled put into a full store never enters it", () => {
    const env = new Environment();
    const store = new Store<string>(env, { capacity: 1 });
    store.put("kept");
    const put = store.put("dropped");
    expect(put.triggered).toBe(false);
    expect(put.cancel()).toBe(true);
    const got: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        got.push(yield store.get());
        yield env.timeout(1);
        expect(store.size).toBe(0);
      })(),
    );
    env.run();
    expect(got).toEqual(["kept"]);
    expect(put.triggered).toBe(false);
  });
});

describe("Store close", () => {
  it("a put into a closed store throws DES_STORE_CLOSED naming the process", () => {
    const env = new Environment();
    const store = new Store<number>(env, { name: "outbox" });
    store.close();
    expect(store.closed).toBe(true);
    let error: KbError | null = null;
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(1);
        error = kbError(() => store.put(1), "DES_STORE_CLOSED");
      })(),
      "late-producer",
    );
    env.run();
    const caught = error as unknown as KbError;
    expect(caught.context.process).toBe("late-producer");
    expect(caught.message).toContain('"late-producer"');
    expect(caught.message).toContain("outbox");
    expect(store.size).toBe(0);
  });

  it("items left in a closed store can still be taken; then gets fail with DES_STORE_CLOSED", () => {
    const env = new Environment();
    const store = new Store<string>(env, { name: "queue" });
    store.put("a");
    store.put("b");
    store.close();
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (;;) {
          try {
            const item: string = yield store.get();
            trace.push(`${env.now}:got ${item}`);
            yield env.timeout(1);
          } catch (error) {
            expect(error).toBeInstanceOf(KbError);
            expect((error as KbError).code).toBe("DES_STORE_CLOSED");
            expect((error as KbError).context.process).toBe("drainer");
            trace.push(`${env.now}:closed`);
            return;
          }
        }
      })(),
      "drainer",
    );
    env.run();
    // a at 0, b at 1, the third get at 2 finds the store closed and drained
    expect(trace).toEqual(["0:got a", "1:got b", "2:closed"]);
  });

  it("closing fails a get that waits on the empty store", () => {
    const env = new Environment();
    const store = new Store<string>(env);
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        try {
          yield store.get();
        } catch (error) {
          trace.push(`${env.now}:${(error as KbError).code}`);
        }
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(5);
        store.close();
      })(),
    );
    env.run();
    expect(trace).toEqual(["5:DES_STORE_CLOSED"]);
    expect(env.blocked()).toEqual([]);
  });

  it("closing fails every get that waits on the empty store", () => {
    const env = new Environment();
    const store = new Store<string>(env, { name: "q" });
    const trace: string[] = [];
    for (const name of ["c1", "c2", "c3"]) {
      env.process(
        (function* (): ProcessGenerator<void> {
          try {
            yield store.get();
          } catch (error) {
            trace.push(`${env.now}:${name} ${(error as KbError).code}`);
          }
        })(),
        name,
      );
    }
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(5);
        store.close();
      })(),
    );
    env.run();
    expect(trace).toEqual(["5:c1 DES_STORE_CLOSED", "5:c2 DES_STORE_CLOSED", "5:c3 DES_STORE_CLOSED"]);
    expect(env.blocked()).toEqual([]);
  });

  it("closing a PriorityStore fails every get that waits on it", () => {
    const env = new Environment();
    const store = new PriorityStore<number>(env);
    const failed: string[] = [];
    const consumers: Process[] = [];
    for (const name of ["c1", "c2"]) {
      consumers.push(
        env.process(
          (function* (): ProcessGenerator<void> {
            try {
              yield store.get();
            } catch {
              failed.push(name);
            }
          })(),
          name,
        ),
      );
    }
    env.timeout(1).addCallback(() => store.close());
    env.run();
    expect(failed).toEqual(["c1", "c2"]);
    expect(consumers.every((consumer) => !consumer.isAlive)).toBe(true);
  });

  it("items of puts still waiting when the store was closed can be taken", () => {
    const env = new Environment();
    const store = new Store<string>(env, { capacity: 1 });
    store.put("in");
    store.put("queued"); // waits: the store is full
    store.close();
    const got: string[] = [];
    let end = "";
    env.process(
      (function* (): ProcessGenerator<void> {
        try {
          for (;;) got.push(yield store.get());
        } catch (error) {
          end = (error as KbError).code;
        }
      })(),
    );
    env.run();
    expect(got).toEqual(["in", "queued"]);
    expect(end).toBe("DES_STORE_CLOSED");
  });

  it("a FilterStore closed and drained fails its waiting gets", () => {
    const env = new Environment();
    const store = new FilterStore<number>(env);
    const failed: string[] = [];
    for (const name of ["even", "odd"]) {
      env.process(
        (function* (): ProcessGenerator<void> {
          try {
            yield store.get((n) => n % 2 === (name === "even" ? 0 : 1));
          } catch (error) {
            failed.push(`${env.now}:${name} ${(error as KbError).code}`);
          }
        })(),
      );
    }
    env.timeout(2).addCallback(() => store.close());
    env.run();
    expect(failed).toEqual(["2:even DES_STORE_CLOSED", "2:odd DES_STORE_CLOSED"]);
  });
});

describe("FilterStore", () => {
  it("get(filter) takes the first (oldest) matching item", () => {
    const env = new Environment();
    const store = new FilterStore<number>(env);
    for (const n of [1, 2, 3, 4, 5]) store.put(n);
    const got: number[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        got.push(yield store.get((n) => n % 2 === 0));
        got.push(yield store.get((n) => n % 2 === 0));
        got.push(yield store.get((n) => n > 2));
        got.push(yield store.get());
      })(),
    );
    env.run();
    expect(got).toEqual([2, 4, 3, 1]);
    expect(store.items).toEqual([5]);
  });

  it("a later get may be served before an earlier one whose filter matches nothing", () => {
    const env = new Environment();
    const store = new FilterStore<number>(env);
    const trace: string[] = [];
    const getter = (name: string, filter: (n: number) => boolean): ProcessGenerator =>
      (function* (): ProcessGenerator<void> {
        const item: number = yield store.get(filter);
        trace.push(`${env.now}:${name} got ${item}`);
      })();
    env.process(getter("even", (n) => n % 2 === 0));
    env.process(getter("odd", (n) => n % 2 === 1));
    env.process(
      (function* (): ProcessGenerator<void> {
        // 1 at 1 only matches the later "odd" get; 2 at 2 then serves "even"
        yield env.timeout(1);
        yield store.put(1);
        yield env.timeout(1);
        yield store.put(2);
      })(),
    );
    env.run();
    expect(trace).toEqual(["1:odd got 1", "2:even got 2"]);
  });

  it("applies backpressure like a Store", () => {
    const env = new Environment();
    const store = new FilterStore<string>(env, { capacity: 1 });
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        yield store.put("x");
        yield store.put("y");
        trace.push(`${env.now}:y in`);
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        // frees the slot at 4: y goes in at 4
        yield env.timeout(4);
        yield store.get((s) => s === "x");
      })(),
    );
    env.run();
    expect(trace).toEqual(["4:y in"]);
    expect(store.items).toEqual(["y"]);
  });
});

describe("PriorityStore", () => {
  it("gives the lowest number first", () => {
    const env = new Environment();
    const store = new PriorityStore<number>(env);
    for (const n of [5, 1, 4, 2, 3]) store.put(n);
    expect(store.items).toEqual([1, 2, 3, 4, 5]);
    const got: number[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < 5; i++) got.push(yield store.get());
      })(),
    );
    env.run();
    expect(got).toEqual([1, 2, 3, 4, 5]);
  });

  it("orders objects by their priority field, FIFO among equal priorities", () => {
    const env = new Environment();
    const store = new PriorityStore<{ priority: number; name: string }>(env);
    const items = [
      { priority: 1, name: "a" },
      { priority: 0, name: "b" },
      { priority: 1, name: "c" },
      { priority: 0, name: "d" },
      { priority: 1, name: "e" },
      { priority: -1, name: "f" },
      { priority: 0, name: "g" },
    ];
    for (const item of items) store.put(item);
    const got: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < items.length; i++) got.push((yield store.get()).name);
      })(),
    );
    env.run();
    expect(got).toEqual(["f", "b", "d", "g", "a", "c", "e"]);
  });

  it("keeps FIFO order among many equal items", () => {
    const env = new Environment();
    const store = new PriorityStore<{ priority: number; id: number }>(env);
    for (let id = 0; id < 50; id++) store.put({ priority: id % 2, id });
    const got: number[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < 50; i++) got.push((yield store.get()).id);
      })(),
    );
    env.run();
    const evens = Array.from({ length: 25 }, (_, i) => 2 * i);
    const odds = Array.from({ length: 25 }, (_, i) => 2 * i + 1);
    expect(got).toEqual([...evens, ...odds]);
  });

  it("uses a custom compare, FIFO among items it calls equal", () => {
    const env = new Environment();
    // longest word first
    const store = new PriorityStore<string>(env, { compare: (a, b) => b.length - a.length });
    for (const word of ["ab", "abcd", "xy", "q", "wxyz"]) store.put(word);
    const got: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (let i = 0; i < 5; i++) got.push(yield store.get());
      })(),
    );
    env.run();
    expect(got).toEqual(["abcd", "wxyz", "ab", "xy", "q"]);
  });

  it("a waiting get receives the lowest of the items present when it is served", () => {
    const env = new Environment();
    const store = new PriorityStore<number>(env);
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        const first: number = yield store.get();
        trace.push(`${env.now}:got ${first}`);
        yield env.timeout(5);
        for (let i = 0; i < 3; i++) {
          const item: number = yield store.get();
          trace.push(`${env.now}:got ${item}`);
        }
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        // 7 at 1 goes straight to the waiting get; 9, 3, 6 wait in the store until 6
        yield env.timeout(1);
        yield store.put(7);
        yield env.timeout(1);
        yield store.put(9);
        yield store.put(3);
        yield store.put(6);
      })(),
    );
    env.run();
    expect(trace).toEqual(["1:got 7", "6:got 3", "6:got 6", "6:got 9"]);
  });

  it("applies backpressure with a capacity", () => {
    const env = new Environment();
    const store = new PriorityStore<number>(env, { capacity: 2 });
    const trace: string[] = [];
    env.process(
      (function* (): ProcessGenerator<void> {
        for (const n of [3, 2, 1]) {
          yield store.put(n);
          trace.push(`${env.now}:put ${n}`);
        }
      })(),
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        // a get at 2 takes 2 (lowest of 3, 2) and lets 1 in
        yield env.timeout(2);
        const item: number = yield store.get();
        trace.push(`${env.now}:got ${item}`);
      })(),
    );
    env.run();
    expect(trace).toEqual(["0:put 3", "0:put 2", "2:got 2", "2:put 1"]);
    expect(store.items).toEqual([1, 3]);
  });

  it("rejects an item it cannot order at the put", () => {
    const env = new Environment();
    const store = new PriorityStore<unknown>(env);
    kbError(() => store.put({ name: "no priority" }), "DES_INVALID_ARGUMENT");
    kbError(() => store.put("text"), "DES_INVALID_ARGUMENT");
    expect(store.size).toBe(0);
  });
});

describe("Store.tryPut / tryGet (event-free fast paths)", () => {
  it("tryPut puts while there is room and no put waits, and hands over to a waiting get at once", () => {
    const env = new Environment();
    const store = new Store<string>(env, { capacity: 2, name: "s" });
    const log: string[] = [];
    env.process(
      (function* () {
        const item: string = yield store.get();
        log.push(`${env.now}: got ${item}`);
      })(),
      "getter",
    );
    env.run();
    // "a" goes to the waiting getter inside the call, so the store is empty again and holds
    // "b" and "c"; "d" finds it full.
    expect(store.tryPut("a")).toBe(true);
    expect(store.size).toBe(0);
    expect(store.tryPut("b")).toBe(true);
    expect(store.tryPut("c")).toBe(true);
    expect(store.tryPut("d")).toBe(false);
    env.run();
    expect(log).toEqual(["0: got a"]);
    expect(store.items).toEqual(["b", "c"]);
  });

  it("tryPut refuses while an earlier put waits (FIFO), and tryGet frees room for it", () => {
    const env = new Environment();
    const store = new Store<number>(env, { capacity: 1 });
    expect(store.tryPut(1)).toBe(true);
    const waiting = store.put(2);
    expect(waiting.triggered).toBe(false);
    expect(store.tryPut(3)).toBe(false);
    expect(store.tryGet()).toBe(1);
    expect(waiting.triggered).toBe(true);
    expect(store.items).toEqual([2]);
    expect(store.tryGet()).toBe(2);
    expect(store.tryGet()).toBeUndefined();
  });

  it("tryPut into a closed store throws DES_STORE_CLOSED", () => {
    const env = new Environment();
    const store = new Store<number>(env);
    store.close();
    expect(() => store.tryPut(1)).toThrow(/DES_STORE_CLOSED/);
  });
});
