import { KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { expandTopology } from "./expand.js";
import { parseTopology } from "./load.js";
import { overrideIssue } from "./override-issue.js";
import { thrownBy } from "./test-support.js";

const TEXT = `name: t
overrides:
  - match: "sip0.cube0.pe0.pe_gemm"
    impl: pe_gemm_v1
  - match: "sip0.cube0.hbm"
    params:
      channels: 16
`;

describe("overrideIssue", () => {
  it("locates an error by its structured path, whatever its wording", () => {
    const error = new KbError("TOPOLOGY_INVALID", "any words at all: the stacks disagree.", {
      context: { path: ["overrides", 1, "params", "channels"] },
    });
    expect(overrideIssue(error, TEXT, "t.yaml")).toEqual({
      file: "t.yaml",
      line: 7,
      col: 17,
      path: "overrides[1].params.channels",
      message: "any words at all: the stacks disagree.",
    });
  });

  it("ignores an error that only reads like an override's, without a path", () => {
    const error = new KbError("TOPOLOGY_INVALID", 'overrides[0].match: "x" matches no node.');
    expect(overrideIssue(error, TEXT, "t.yaml")).toBeUndefined();
  });

  it("ignores an error whose path is not in an override", () => {
    const error = new KbError("TOPOLOGY_INVALID", "cube.hbm.mapping: bad.", {
      context: { path: ["cube", "hbm"] },
    });
    expect(overrideIssue(error, TEXT, "t.yaml")).toBeUndefined();
  });

  it("reports expandTopology's geometry error at the param, its message without the path it starts with", () => {
    const error = thrownBy(() => expandTopology(parseTopology(TEXT, "t.yaml")));
    const issue = overrideIssue(error, TEXT, "t.yaml");
    expect(issue?.path).toBe("overrides[1].params.channels");
    expect([issue?.line, issue?.col]).toEqual([7, 17]);
    expect(issue?.message).toMatch(/^16 would change the HBM organisation of node sip0\.cube0\.hbm /);
  });

  it("reports an override that matches no node at its match: value", () => {
    const text = 'name: t\noverrides:\n  - match: "sip0.cube0.pe0.pe_gemn"\n    impl: pe_gemm_v1\n';
    const issue = overrideIssue(
      thrownBy(() => expandTopology(parseTopology(text))),
      text,
      "t.yaml",
    );
    expect(issue).toEqual({
      file: "t.yaml",
      line: 3,
      col: 12,
      path: "overrides[0].match",
      message: '"sip0.cube0.pe0.pe_gemn" matches no node; did you mean "sip0.cube0.pe0.pe_gemm"?',
    });
  });
});
