import { describe, expect, it } from "vitest";
import { closest, formatIssuePath, formatSchemaIssues, schemaIssueText } from "./index.js";

describe("formatIssuePath", () => {
  it("writes keys dotted and indices bracketed, as a YAML or JSON file's reader would find them", () => {
    expect(formatIssuePath(["overrides", 2, "params", "channels"])).toBe("overrides[2].params.channels");
    expect(formatIssuePath([0, "name"])).toBe("[0].name");
    expect(formatIssuePath(["cube", "hbm"])).toBe("cube.hbm");
  });

  it("names the root for an empty path: <top level> unless the caller says what the value is", () => {
    expect(formatIssuePath([])).toBe("<top level>");
    expect(formatIssuePath([], "<record>")).toBe("<record>");
  });
});

describe("schemaIssueText", () => {
  it("lists the unknown keys of an unrecognized_keys issue, quoted, instead of zod's wording", () => {
    const issue = {
      code: "unrecognized_keys",
      path: [],
      keys: ["rtl", "nrom"],
      message: "Unrecognized keys",
    };
    expect(schemaIssueText(issue)).toBe('unknown key(s) "rtl", "nrom"');
  });

  it("keeps the schema's own message for any other issue", () => {
    expect(schemaIssueText({ code: "custom", path: ["a"], message: "must be a power of two" })).toBe(
      "must be a power of two",
    );
  });
});

describe("formatSchemaIssues", () => {
  it("gives one `path: message` line per issue, in zod's order", () => {
    const lines = formatSchemaIssues([
      {
        code: "too_small",
        path: ["algorithms", 1, "min_bytes"],
        message: "Too small: expected number to be >=0",
      },
      { code: "unrecognized_keys", path: [], keys: ["algoritms"], message: "Unrecognized key" },
    ]);
    expect(lines).toEqual([
      "algorithms[1].min_bytes: Too small: expected number to be >=0",
      '<top level>: unknown key(s) "algoritms"',
    ]);
  });

  it("names an empty path with the given root", () => {
    expect(formatSchemaIssues([{ path: [], message: "expected an object" }], { root: "(params)" })).toEqual([
      "(params): expected an object",
    ]);
  });
});

describe("closest", () => {
  it("suggests the candidate a typo was meant to be, ignoring case", () => {
    expect(closest("chanels", ["channels", "pattern"])).toBe("channels");
    expect(closest("Pattern", ["channels", "pattern"])).toBe("pattern");
  });

  it("suggests nothing for a different word or a different component of the same shape", () => {
    expect(closest("bandwidth", ["channels", "pattern"])).toBeUndefined();
    expect(closest("pe_sfu", ["pe_cpu", "pe_gemm"])).toBeUndefined();
  });
});
