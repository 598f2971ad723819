import { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { locatedIssuesOf } from "./index.js";
import { parseTopology } from "./load.js";
import { thrownBy } from "./test-support.js";

describe("locatedIssuesOf", () => {
  it("gives the located issues of a topology validation error", () => {
    const error = thrownBy(() => parseTopology("name: t\ncube:\n  hbm:\n    chanels: 4\n", "t.yaml"));
    const issues = locatedIssuesOf(error);
    expect(issues?.map((issue) => [issue.line, issue.col, issue.path])).toEqual([[4, 5, "cube.hbm.chanels"]]);
  });

  it("refuses issues by node id (a machine's params error), other codes and other errors", () => {
    const byNode = Object.assign(new KbError("COMPONENT_INVALID_PARAMS", "x"), {
      issues: [{ nodeId: "sip0.cube0.hbm", path: ["queue_depth"], message: "too small" }],
    });
    expect(locatedIssuesOf(byNode)).toBeUndefined();
    const located = [{ file: "t.yaml", line: 1, col: 1, path: "a", message: "m" }];
    expect(
      locatedIssuesOf(Object.assign(new KbError("RUNTIME_INVALID", "x"), { issues: located })),
    ).toBeUndefined();
    expect(locatedIssuesOf(Object.assign(new Error("x"), { issues: located }))).toBeUndefined();
    expect(
      locatedIssuesOf(Object.assign(new KbError("TOPOLOGY_INVALID", "x"), { issues: [] })),
    ).toBeUndefined();
  });
});
