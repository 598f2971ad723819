import { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { Environment, type ProcessGenerator, Resource, Store } from "./index.js";
import { thrown } from "./test-support.js";

/** A model that deadlocks: a consumer on an empty store and a process on a held resource. */
function deadlockedModel() {
  const env = new Environment();
  const inbox = new Store<number>(env, { capacity: 2, name: "inbox" });
  const lock = new Resource(env, { name: "lock" });
  const consumer = env.process(
    (function* (): ProcessGenerator<void> {
      // takes the one item at 0, then waits forever
      for (;;) yield inbox.get();
    })(),
    "consumer",
  );
  const owner = env.process(
    (function* (): ProcessGenerator<void> {
      yield lock.request(); // never released
      yield inbox.put(1);
    })(),
    "owner",
  );
  const waiter = env.process(
    (function* (): ProcessGenerator<void> {
      yield env.timeout(3);
      yield lock.request();
    })(),
    "waiter",
  );
  const finished = env.process(
    (function* (): ProcessGenerator<void> {
      yield env.timeout(1);
    })(),
    "finished",
  );
  return { env, inbox, lock, consumer, owner, waiter, finished };
}

describe("env.blocked()", () => {
  it("lists the processes still waiting after run(), with what each waits on", () => {
    const { env, inbox, consumer, waiter } = deadlockedModel();
    env.run();
    // the run ends at 3 when the waiter queues for the lock
    expect(env.now).toBe(3);
    const blocked = env.blocked();
    expect(blocked.map((entry) => entry.name)).toEqual(["consumer", "waiter"]);
    const [onStore, onLock] = blocked;
    expect(onStore?.process).toBe(consumer);
    expect(onStore?.waitsOn).toBe(inbox.getQueue[0]);
    expect(onStore?.description).toContain('"inbox"');
    expect(onStore?.description).toContain("get");
    expect(onLock?.process).toBe(waiter);
    expect(onLock?.description).toContain('"lock"');
    expect(onLock?.waitsOn.triggered).toBe(false);
  });

  it("does not list finished processes", () => {
    const { env, owner, finished } = deadlockedModel();
    env.run();
    const names = env.blocked().map((entry) => entry.name);
    expect(owner.isAlive).toBe(false);
    expect(finished.isAlive).toBe(false);
    expect(names).not.toContain("owner");
    expect(names).not.toContain("finished");
  });

  it("is empty when every process has ended", () => {
    const env = new Environment();
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
      })(),
    );
    env.run();
    expect(env.blocked()).toEqual([]);
    expect(env.blockedReport()).toBe("");
  });

  it("does not list a process whose event is scheduled (run(until) stopped before it)", () => {
    const env = new Environment();
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(10);
      })(),
      "sleeper",
    );
    const signal = env.event();
    env.process(
      (function* (): ProcessGenerator<void> {
        yield signal;
      })(),
      "listener",
    );
    env.run(5);
    expect(env.blocked().map((entry) => entry.name)).toEqual(["listener"]);
  });

  it("describes a wait on a plain event and on another process", () => {
    const env = new Environment();
    const never = env.event();
    const stuck = env.process(
      (function* (): ProcessGenerator<void> {
        yield never;
      })(),
      "stuck",
    );
    env.process(
      (function* (): ProcessGenerator<void> {
        yield stuck;
      })(),
      "joiner",
    );
    env.run();
    const blocked = env.blocked();
    expect(blocked.map((entry) => entry.name)).toEqual(["stuck", "joiner"]);
    expect(blocked[0]?.waitsOn).toBe(never);
    expect(blocked[1]?.waitsOn).toBe(stuck);
    expect(blocked[1]?.description).toContain("stuck");
  });
});

describe("env.blockedReport()", () => {
  it("has one line per blocked process with its name and what it waits on", () => {
    const { env } = deadlockedModel();
    env.run();
    const lines = env.blockedReport().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("consumer");
    expect(lines[0]).toContain('"inbox"');
    expect(lines[1]).toContain("waiter");
    expect(lines[1]).toContain('"lock"');
  });
});

describe("run(untilEvent) when the schedule runs empty first", () => {
  it("throws DES_DEADLOCK listing the blocked processes", () => {
    const { env, waiter } = deadlockedModel();
    const error = thrown(() => env.run(waiter));
    expect(error).toBeInstanceOf(KbError);
    const kb = error as KbError;
    expect(kb.code).toBe("DES_DEADLOCK");
    expect(kb.message).toContain("consumer");
    expect(kb.message).toContain("waiter");
    expect(kb.message).toContain('"inbox"');
    expect(kb.message).toContain('"lock"');
    expect(kb.message).not.toContain("finished");
    expect(env.now).toBe(3);
  });

  it("throws DES_DEADLOCK for an event nobody will ever trigger", () => {
    const env = new Environment();
    env.timeout(4);
    const never = env.event();
    const error = thrown(() => env.run(never));
    expect((error as KbError).code).toBe("DES_DEADLOCK");
    expect(env.now).toBe(4);
  });

  it("the environment stays usable afterwards", () => {
    const env = new Environment();
    const never = env.event();
    expect((thrown(() => env.run(never)) as KbError).code).toBe("DES_DEADLOCK");
    env.process(
      (function* (): ProcessGenerator<void> {
        yield env.timeout(2);
        never.succeed("late");
      })(),
    );
    expect(env.run(never)).toBe("late");
    expect(env.now).toBe(2);
  });
});
