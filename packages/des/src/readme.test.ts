import { describe, expect, it } from "vitest";
import { Environment, Store } from "./index.js";

// The example of packages/des/README.md, verbatim but for the console output.
describe("README example", () => {
  it("hands packets over a capacity-1 link and reports the idle consumer", () => {
    const env = new Environment();
    const link = new Store<string>(env, { capacity: 1, name: "link" });

    function* producer(): Generator<any, void, any> {
      for (const packet of ["a", "b", "c"]) {
        yield env.timeout(2);
        yield link.put(packet);
      }
    }

    function* consumer(log: string[]): Generator<any, void, any> {
      for (;;) {
        const packet: string = yield link.get();
        yield env.timeout(5);
        log.push(`${env.now}: ${packet}`);
      }
    }

    const log: string[] = [];
    env.process(producer(), "producer");
    env.process(consumer(log), "consumer");
    env.run();
    // a: put at 2, taken at once, consumed 2+5 = 7; b: put at 4, taken at 7, done 12;
    // c: waits for room from 6, put when b is taken at 7, taken at 12, done 17.
    expect(log).toEqual(["7: a", "12: b", "17: c"]);
    expect(env.blockedReport()).toBe(
      '  - process "consumer" waits on get from Store "link" (0/1 items, 0 putter(s) and 1 getter(s) waiting)',
    );
  });
});
