import { isKbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { resolveTopology } from "./load.js";
import { thrownBy } from "./test-support.js";

describe("resolveTopology", () => {
  it("words a topology object's problems as a file's are worded, and carries the first one's path", () => {
    const error = thrownBy(() =>
      resolveTopology(
        { name: "t", overrides: [{ match: "sip0.cube0.pe0.pe_gemm", impll: "pe_gemm_v2" }] },
        "mine",
      ),
    );
    expect(isKbError(error, "TOPOLOGY_INVALID")).toBe(true);
    if (!isKbError(error)) return;
    expect(error.detail).toBe('mine is not a valid topology:\noverrides[0]: unknown key(s) "impll"');
    expect(error.path).toEqual(["overrides", 0]);
  });

  it("carries the path of a prototype key", () => {
    const overrides = [{ match: "x", params: JSON.parse('{"__proto__": {"a": 1}}') }];
    const error = thrownBy(() => resolveTopology({ name: "t", overrides }));
    if (!isKbError(error)) throw error;
    expect(error.path).toEqual(["overrides", 0, "params", "__proto__"]);
  });
});
