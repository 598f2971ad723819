import { KbError } from "@kb/errors";
import { parseTopology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { locatedIssuesOf } from "./located-issues.js";

describe("locatedIssuesOf", () => {
  it("finds the issues of a validation error", () => {
    let caught: unknown;
    try {
      parseTopology("name: x\nsip: { cubes: 0 }\n", "x.yaml");
    } catch (error) {
      caught = error;
    }
    expect(locatedIssuesOf(caught)).toEqual([
      { file: "x.yaml", line: 2, col: 15, path: "sip.cubes", message: "value must be >= 1, got number 0." },
    ]);
  });

  it("recognises the error by shape: a copy of the class from another bundle entry counts", () => {
    const copy = Object.assign(new KbError("TOPOLOGY_INVALID", "1 problem(s) in y.yaml"), {
      issues: [{ file: "y.yaml", line: 1, col: 1, path: "name", message: "m" }],
    });
    expect(locatedIssuesOf(copy)).toHaveLength(1);
  });

  it("is undefined for other errors", () => {
    expect(locatedIssuesOf(new KbError("TOPOLOGY_NOT_FOUND", "no file"))).toBeUndefined();
    expect(locatedIssuesOf(new KbError("TOPOLOGY_INVALID", "override matches nothing"))).toBeUndefined();
    expect(locatedIssuesOf(new Error("boom"))).toBeUndefined();
  });
});
