import { describe, expect, it } from "vitest";
import { Environment, type ProcessGenerator, Store } from "./index.js";
import { kbError } from "./test-support.js";

/** Four idle workers on their own inboxes, one of them waiting elsewhere; a lone waiter. */
function idleWorkers() {
  const env = new Environment();
  const slots = new Store<number>(env, { name: "w2 slots" });
  for (let index = 0; index < 4; index++) {
    const inbox = new Store<number>(env, { name: `w${index}` });
    env.process(
      (function* (): ProcessGenerator<void> {
        yield (index === 2 ? slots : inbox).get();
      })(),
      `w${index}`,
    );
  }
  env.process(
    (function* (): ProcessGenerator<void> {
      yield env.event();
    })(),
    "lone",
  );
  return env;
}

describe("DES_DEADLOCK's list of waiting processes", () => {
  it("groups by kind (numbers as *), counts the alike and lists the odd ones out first", () => {
    const env = idleWorkers();
    const error = kbError(() => env.run(env.event()), "DES_DEADLOCK");
    expect(error.detail.split("\n")).toEqual([
      "run(until=an event) ran out of events before it was triggered; 5 process(es) wait forever (by kind; processes of one kind that wait alike are counted, not listed):",
      '  - process "w2" waits on get from Store "w2 slots" (0/inf items, 0 putter(s) and 1 getter(s) waiting)',
      '  - 3 processes "w*" wait alike, e.g. "w0" on get from Store "w0" (0/inf items, 0 putter(s) and 1 getter(s) waiting)',
      '  - process "lone" waits on an event',
    ]);
  });

  it("blockedReport() still lists every process on its own line", () => {
    const env = idleWorkers();
    env.run();
    expect(env.blockedReport().split("\n")).toHaveLength(5);
  });
});
