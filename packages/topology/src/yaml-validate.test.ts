import { describe, expect, it } from "vitest";
import * as z from "zod";
import { closest, validateYaml, YamlValidationError, yamlLocator } from "./index.js";

const schema = z.strictObject({
  name: z.string(),
  hbm: z.strictObject({
    channels: z.number().int().min(1).default(8),
    pattern: z.enum(["ring", "mesh", "all_to_all"]).default("ring"),
  }),
  overrides: z.array(z.strictObject({ match: z.string(), impl: z.string().optional() })).default([]),
});

function issuesOf(text: string): string[] {
  try {
    validateYaml(schema, text, "t.yaml");
  } catch (error) {
    expect(error).toBeInstanceOf(YamlValidationError);
    return (error as YamlValidationError).message.split("\n").slice(1);
  }
  throw new Error("expected a validation error");
}

describe("validateYaml", () => {
  it("returns the schema's output with defaults filled in", () => {
    expect(validateYaml(schema, "name: a\nhbm: {}\n", "t.yaml")).toEqual({
      name: "a",
      hbm: { channels: 8, pattern: "ring" },
      overrides: [],
    });
  });

  it("reports every problem at once, each at its line and column, sorted", () => {
    const text = [
      "name: 3",
      "hbm:",
      "  chanels: 4",
      "  pattern: rign",
      "overrides:",
      "  - match: x",
      "    impll: y",
      "",
    ].join("\n");
    expect(issuesOf(text)).toEqual([
      "t.yaml:1:7: name: expected a string, got number 3.",
      't.yaml:3:3: hbm.chanels: unknown key "chanels"; did you mean "channels"? Allowed keys here: channels, pattern.',
      't.yaml:4:12: hbm.pattern: the string "rign" is not allowed; expected one of "ring", "mesh", "all_to_all"; did you mean "ring"?',
      't.yaml:7:5: overrides[0].impll: unknown key "impll"; did you mean "impl"? Allowed keys here: impl, match.',
    ]);
  });

  it("locates a missing key at the mapping that lacks it", () => {
    expect(issuesOf("hbm:\n  channels: 2\noverrides:\n  - impl: z\n")).toEqual([
      't.yaml:1:1: name: missing required key "name" (a string).',
      't.yaml:4:5: overrides[0].match: missing required key "match" (a string).',
    ]);
  });

  it("says what range a number must be in", () => {
    expect(issuesOf("name: a\nhbm:\n  channels: 0\n")).toEqual([
      "t.yaml:3:13: hbm.channels: value must be >= 1, got number 0.",
    ]);
  });

  it("reports YAML syntax errors and duplicate keys with their position", () => {
    let error: unknown;
    try {
      validateYaml(schema, "name: a\nname: b\nhbm: [1, 2\n", "bad.yaml");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(YamlValidationError);
    const validation = error as YamlValidationError;
    expect(validation.code).toBe("TOPOLOGY_YAML_SYNTAX");
    expect(validation.issues.length).toBeGreaterThanOrEqual(2);
    expect(validation.issues[0]).toMatchObject({ file: "bad.yaml", line: 2, col: 1 });
    expect(validation.issues[0]?.message).toBe(
      'duplicate key "name": each key may appear only once in a mapping.',
    );
    expect(validation.context).toMatchObject({ file: "bad.yaml", line: 2, col: 1 });
  });

  it("puts the first issue's position in the error context", () => {
    try {
      validateYaml(schema, "name: a\nhbm:\n  channels: -1\n", "c.yaml");
    } catch (error) {
      expect((error as YamlValidationError).code).toBe("TOPOLOGY_INVALID");
      expect((error as YamlValidationError).context).toEqual({ file: "c.yaml", line: 3, col: 13 });
      return;
    }
    throw new Error("expected a validation error");
  });
});

describe("closest", () => {
  it("suggests a likely typo and nothing for an unrelated word", () => {
    expect(closest("chanels", ["channels", "pattern"])).toBe("channels");
    expect(closest("Pattern", ["channels", "pattern"])).toBe("pattern");
    expect(closest("bandwidth", ["channels", "pattern"])).toBeUndefined();
  });
});

describe("yamlLocator", () => {
  const text = [
    "# a comment",
    "name: a",
    "pe_template:",
    "  components:",
    "    pe_gemm:",
    "      params: { freq_ghz: 2 }",
    "overrides:",
    "  - match: sip0.*",
    "    impl: fast",
    "",
  ].join("\n");
  const locate = yamlLocator(text);

  it("points at the value of a written path, or with key: true at its key", () => {
    expect(locate(["pe_template", "components", "pe_gemm", "params", "freq_ghz"])).toEqual({
      line: 6,
      col: 27,
      found: 5,
    });
    expect(locate(["overrides", 0, "impl"])).toEqual({ line: 9, col: 11, found: 3 });
    expect(locate(["overrides", 0, "impl"], { key: true })).toEqual({ line: 9, col: 5, found: 3 });
  });

  it("points a missing key at the key of its deepest written ancestor", () => {
    expect(locate(["pe_template", "components", "pe_gemm", "impl"])).toEqual({ line: 5, col: 5, found: 3 });
    expect(locate(["pe_template", "components", "pe_gemm", "params", "mac_rows"])).toEqual({
      line: 6,
      col: 7,
      found: 4,
    });
    expect(locate(["cube", "hbm", "impl"])).toEqual({ line: 2, col: 1, found: 0 });
  });
});

describe("README example", () => {
  it("prints the located problems shown in the README", () => {
    const hbm = z.strictObject({
      channels: z.number().int().min(1).default(8),
      pattern: z.enum(["ring", "mesh", "all_to_all"]).default("ring"),
    });
    expect(validateYaml(hbm, "channels: 16\n", "hbm.yaml")).toEqual({ channels: 16, pattern: "ring" });
    expect(() => validateYaml(hbm, "chanels: 16\npattern: rign\n", "hbm.yaml")).toThrow(
      [
        "[TOPOLOGY_INVALID] hbm.yaml:1:1: 2 problem(s) in hbm.yaml:",
        'hbm.yaml:1:1: chanels: unknown key "chanels"; did you mean "channels"? Allowed keys here: channels, pattern.',
        'hbm.yaml:2:10: pattern: the string "rign" is not allowed; expected one of "ring", "mesh", "all_to_all"; did you mean "ring"?',
      ].join("\n"),
    );
  });
});
