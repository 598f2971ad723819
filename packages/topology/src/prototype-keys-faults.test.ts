import { describe, expect, it } from "vitest";
import {
  isPrototypeKey,
  parseTopology,
  prototypeKeyPath,
  resolveTopology,
  YamlValidationError,
} from "./index.js";

// Data is data: a topology's keys never reach into JavaScript's objects. `__proto__` in a YAML
// mapping is an own key of the parsed object, which zod's records drop without a word and a path
// writer would follow into Object.prototype; `constructor` and `prototype` lead to classes.

const OVERRIDE = (key: string) =>
  [
    "name: t",
    "overrides:",
    '  - match: "sip0.cube0.pe0.pe_gemm"',
    "    params:",
    `      ${key}: { NODE_OPTIONS: "--import=data:text/javascript,1" }`,
    "",
  ].join("\n");

function problemOf(text: string): string {
  try {
    parseTopology(text, "t.yaml");
  } catch (error) {
    expect(error).toBeInstanceOf(YamlValidationError);
    return (error as YamlValidationError).message.split("\n").slice(1).join("\n");
  }
  throw new Error("expected the topology to be refused");
}

describe("fault: prototype keys in a topology", () => {
  it("refuses __proto__, constructor and prototype in an override's params, at their line", () => {
    for (const key of ["__proto__", "constructor", "prototype"]) {
      expect(problemOf(OVERRIDE(key))).toBe(
        `t.yaml:5:7: overrides[0].params.${key}: "${key}" cannot be a key: __proto__, constructor, prototype reach into JavaScript's objects instead of naming data, so kb refuses them everywhere; rename it.`,
      );
    }
  });

  it("refuses one anywhere in the file, a component's params included", () => {
    expect(problemOf("name: t\ncube:\n  hbm:\n    params: { constructor: 1 }\n")).toMatch(
      /^t\.yaml:4:15: cube\.hbm\.params\.constructor: "constructor" cannot be a key/,
    );
  });

  it("refuses one in a topology given as an object (JSON.parse keeps __proto__ as a key)", () => {
    const input = JSON.parse('{"name": "t", "overrides": [{"match": "x", "params": {"__proto__": {}}}]}');
    expect(() => resolveTopology(input)).toThrow(
      /<topology object>: overrides\.0\.params\.__proto__: "__proto__" cannot be a key/,
    );
  });

  it("finds the first prototype key of a value, own keys only, through aliases that repeat", () => {
    const shared: unknown[] = [1];
    shared.push(shared);
    expect(prototypeKeyPath({ a: [shared, { b: JSON.parse('{"__proto__": 1}') }] })).toEqual([
      "a",
      1,
      "b",
      "__proto__",
    ]);
    expect(prototypeKeyPath({ a: { toString: 1 }, b: shared })).toBeUndefined();
    expect(["__proto__", "constructor", "prototype", "proto", "toString"].map(isPrototypeKey)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});

describe("fault: a YAML value that contains itself", () => {
  it("is refused at the alias (hashing or writing it out recursed until the stack overflowed)", () => {
    expect(problemOf("name: t\ncube:\n  hbm:\n    params: { tile: &a [1, *a] }\n")).toBe(
      "t.yaml:4:28: cube.hbm.params.tile[1]: an alias that contains itself (its anchor is around it); write the value out instead.",
    );
  });

  it("leaves an alias used twice side by side alone", () => {
    expect(() => parseTopology("name: t\ndescription: &d x\n$schema: *d\n", "t.yaml")).not.toThrow();
  });
});
