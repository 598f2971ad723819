import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { parseConstraint } from "./constraint.js";
import type { JobOutcome, SweepJob } from "./executor.js";
import { childEnvironment, LocalProcessPool } from "./node/process-pool.js";
import { pointInputs } from "./points.js";
import { parseSweepSpec, type SweepSpec } from "./spec.js";
import { describeValues, metricAt } from "./table.js";
import { specProblem } from "./test-support.js";

// Data is data: a sweep spec's paths, names and constraints never reach into JavaScript's
// objects. A path through `__proto__` wrote into Object.prototype, from where every point's
// environment inherited NODE_OPTIONS, and every point ran the spec's JavaScript.

const HOSTILE = "--import=data:text/javascript,process.exit(0)";

afterEach(() => {
  // A failing test must not leave the rest of the run polluted.
  for (const key of ["NODE_OPTIONS", "KB_POLLUTED", "polluted"]) {
    delete (Object.prototype as Record<string, unknown>)[key];
  }
});

describe("fault: prototype keys in a sweep spec", () => {
  it("refuses a set: path through __proto__, constructor or prototype, at its line", () => {
    for (const key of ["__proto__", "constructor", "prototype"]) {
      const message = specProblem(
        `name: x\nbench: vector-add\nset:\n  topology.${key}.NODE_OPTIONS: "${HOSTILE}"\naxes:\n  n: { path: params.n, values: [1] }\n`,
      );
      expect(message).toContain(
        `s.yaml:4:3: set.topology.${key}.NODE_OPTIONS: "${key}" cannot be a key: __proto__, constructor, prototype reach into JavaScript's objects instead of naming data, so kb refuses them everywhere; rename it.`,
      );
    }
    expect(Object.prototype).not.toHaveProperty("NODE_OPTIONS");
  });

  it("refuses an axis path, a params path and a metric path through one, naming the field", () => {
    expect(
      specProblem("name: x\nbench: b\naxes:\n  n: { path: params.constructor.x, values: [1] }\n"),
    ).toContain('s.yaml:4:14: axes.n.path: "constructor" cannot be a key');
    expect(
      specProblem(
        "name: x\nbench: b\naxes:\n  n: { path: [params.a, topology.prototype], values: [[1, 2]] }\n",
      ),
    ).toContain('axes.n.path[1]: "prototype" cannot be a key');
    expect(
      specProblem(
        "name: x\nbench: b\naxes:\n  n: { path: params.n, values: [1] }\nmetrics: { t: manifest.constructor.name }\n",
      ),
    ).toContain('s.yaml:5:15: metrics.t: "constructor" cannot be a key');
  });

  it("refuses a prototype key among params, axis names and values, wherever it is written", () => {
    expect(
      specProblem(
        "name: x\nbench: b\nparams: { __proto__: { x: 1 } }\naxes:\n  n: { path: params.n, values: [1] }\n",
      ),
    ).toContain('s.yaml:3:11: params.__proto__: "__proto__" cannot be a key');
    expect(
      specProblem("name: x\nbench: b\naxes:\n  constructor: { path: params.n, values: [1] }\n"),
    ).toContain('s.yaml:4:3: axes.constructor: "constructor" cannot be a key');
  });

  it("refuses a constraint that reads a prototype key, when it is parsed", () => {
    expect(() => parseConstraint("topology.constructor == 1")).toThrow(/"constructor" cannot be a key/);
    expect(() => parseConstraint("params['__proto__'] == null")).toThrow(/"__proto__" cannot be a key/);
    expect(() => parseConstraint("__proto__ == 1")).toThrow(/"__proto__" cannot be a key/);
    expect(
      specProblem(
        "name: x\nbench: b\naxes:\n  n: { path: params.n, values: [1] }\nconstraints: [\"params.constructor.name == 'Object'\"]\n",
      ),
    ).toMatch(/constraints\[0\] .*"constructor" cannot be a key/);
  });

  it("evaluates a constraint over own fields only: a computed prototype key is refused, an inherited field is missing", () => {
    const scope = { params: { k: "constructor", n: 4 }, topology: {} };
    expect(() => parseConstraint("params[params.k] == 1").evaluate(scope)).toThrow(
      /constraint "params\[params.k\] == 1": "constructor" cannot be a key/,
    );
    expect(parseConstraint("!topology.toString").evaluate(scope)).toBe(true);
    expect(parseConstraint("params.n == 4").evaluate(scope)).toBe(true);
  });

  it("writes a point's paths into null-prototype objects and refuses a prototype key of a spec built in code", () => {
    const spec = parseSweepSpec(
      "name: x\nbench: b\naxes:\n  n: { path: topology.a.b, values: [1] }\n",
      "s.yaml",
    );
    const inputs = pointInputs(spec, {}, { n: 1 });
    expect(Object.getPrototypeOf(inputs.topology.a)).toBeNull();
    expect(inputs.topology).toEqual({ a: { b: 1 } });
    const hostile = { ...spec, set: { "topology.__proto__.NODE_OPTIONS": HOSTILE } } as SweepSpec;
    expect(() => pointInputs(hostile, {}, { n: 1 })).toThrow(
      /set: topology.__proto__.NODE_OPTIONS: "__proto__" cannot be a key/,
    );
    expect(Object.prototype).not.toHaveProperty("NODE_OPTIONS");
  });

  it("reads a metric from own fields only", () => {
    expect(metricAt({ manifest: {} }, "manifest.constructor.name")).toBeNull();
    expect(metricAt({ a: [1, 2] }, "a.length")).toBe(2);
    expect(metricAt({ a: [1, 2] }, "a[1]")).toBe(2);
  });
});

describe("fault: a child process's environment", () => {
  it("is a fresh object of the parent's own string values: a polluted Object.prototype does not reach it", () => {
    (Object.prototype as Record<string, unknown>).KB_POLLUTED = HOSTILE;
    const parent = { PATH: "/bin", HOME: "/root", EMPTY: undefined } as unknown as NodeJS.ProcessEnv;
    const env = childEnvironment(parent, { NO_COLOR: "1" });
    expect(Object.getPrototypeOf(env)).toBeNull();
    const inherited: string[] = [];
    // Node's spawn copies an environment with for...in, inherited keys included.
    for (const key in env) inherited.push(key);
    expect(inherited.sort()).toEqual(["HOME", "NO_COLOR", "PATH"]);
  });

  it("of a point run by LocalProcessPool lacks what a polluted Object.prototype holds", async () => {
    const pool = new LocalProcessPool({
      jobs: 1,
      command: () => ({
        args: ["-e", "process.stdout.write(JSON.stringify({ polluted: process.env.KB_POLLUTED ?? null }))"],
        cwd: tmpdir(),
      }),
    });
    const outcome = new Promise<JobOutcome>((resolve) =>
      pool.onEvent((event) => {
        if (event.type === "finished") resolve(event.outcome);
      }),
    );
    (Object.prototype as Record<string, unknown>).KB_POLLUTED = HOSTILE;
    try {
      pool.submit({
        point: 0,
        key: "k",
        bench: "b",
        benchDigest: "d",
        inputs: {},
        run: { verify: false, memoryMb: 256 },
      } as unknown as SweepJob);
    } finally {
      delete (Object.prototype as Record<string, unknown>).KB_POLLUTED;
    }
    expect(await outcome).toEqual({ status: "ok", results: { polluted: null } });
    await pool.close();
  });
});

describe("fault: a spec's strings on the terminal", () => {
  it("prints an axis value with an escape sequence escaped, not as a terminal command", () => {
    expect(describeValues({ hbm: "hbm3", title: "\u001b]0;owned\u0007\u001b[2J", pes: [2, 4] })).toBe(
      'hbm=hbm3 title="\\u001b]0;owned\\u0007\\u001b[2J" pes=[2,4]',
    );
  });
});
