import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineBench, parseBenchParams } from "./index.js";

// Data is data: a param's name and its JSON value never reach into JavaScript's objects. A
// `__proto__` param (or a `{"__proto__": ...}` value) set the prototype of the params object, or
// vanished in zod's records, instead of being refused.

describe("fault: prototype keys in bench params", () => {
  const open = defineBench({
    name: "open",
    params: z.record(z.string(), z.unknown()),
    async run() {},
  });
  const nested = defineBench({
    name: "nested",
    params: z.object({ options: z.record(z.string(), z.number()).default({}) }),
    async run() {},
  });

  it("refuses __proto__, constructor or prototype as a param name, naming it", () => {
    for (const key of ["__proto__", "constructor", "prototype"]) {
      const raw = JSON.parse(`{"${key}": "{\\"polluted\\": 1}"}`) as Record<string, string>;
      expect(() => parseBenchParams(open, raw)).toThrow(
        `bench "open": bad params:\n  ${key}: "${key}" cannot be a key`,
      );
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses one inside a param's JSON value, with the path to it", () => {
    expect(() => parseBenchParams(nested, { options: '{"a": 1, "__proto__": {"b": 2}}' })).toThrow(
      `bench "nested": bad params:\n  options.__proto__: "__proto__" cannot be a key`,
    );
    expect(parseBenchParams(nested, { options: '{"a": 1}' })).toEqual({ options: { a: 1 } });
  });
});
