import { describe, expect, it } from "vitest";
import { formatContext, formatSimTime, isKbError, KbError } from "./index.js";

describe("KbError", () => {
  it("prefixes the message with the code and every known location field", () => {
    const error = new KbError("DES_INVALID_DELAY", "delay must be >= 0, got -1.", {
      context: { file: "topo.yaml", line: 3, col: 7, nodeId: "sip0.cube0", process: "feeder", simTimeNs: 12 },
    });
    expect(error.message).toBe(
      '[DES_INVALID_DELAY] topo.yaml:3:7 node sip0.cube0 process "feeder" at t=12 ns: delay must be >= 0, got -1.',
    );
    expect(error.code).toBe("DES_INVALID_DELAY");
    expect(error.detail).toBe("delay must be >= 0, got -1.");
    expect(error).toBeInstanceOf(Error);
  });

  it("omits the location when the context is empty and keeps the cause", () => {
    const cause = new Error("inner");
    const error = new KbError("DES_DEADLOCK", "stuck.", { cause });
    expect(error.message).toBe("[DES_DEADLOCK] stuck.");
    expect(error.cause).toBe(cause);
  });

  it("formats kernel and PE, and a file without a column", () => {
    expect(formatContext({ kernel: "gemm", pe: "sip0.cube0.pe1" })).toBe("kernel gemm on sip0.cube0.pe1");
    expect(formatContext({ file: "a.yaml", line: 2 })).toBe("a.yaml:2");
  });

  it("carries the path of a value in a spec as data, without printing it (the detail words it)", () => {
    const error = new KbError("TOPOLOGY_INVALID", 'overrides[1].match: "pe9*" matches no node.', {
      context: { file: "t.yaml", path: ["overrides", 1, "match"] },
    });
    expect(error.path).toEqual(["overrides", 1, "match"]);
    expect(error.context.path).toEqual(["overrides", 1, "match"]);
    expect(error.message).toBe('[TOPOLOGY_INVALID] t.yaml: overrides[1].match: "pe9*" matches no node.');
    expect(new KbError("DES_DEADLOCK", "stuck.").path).toBeUndefined();
  });

  it("isKbError checks the class and optionally the code", () => {
    const error = new KbError("DES_STORE_CLOSED", "closed.");
    expect(isKbError(error)).toBe(true);
    expect(isKbError(error, "DES_STORE_CLOSED")).toBe(true);
    expect(isKbError(error, "DES_DEADLOCK")).toBe(false);
    expect(isKbError(new Error("x"))).toBe(false);
  });
});

describe("formatSimTime", () => {
  it("prints simulated ns to at most 3 decimals, without float noise", () => {
    expect(formatSimTime(2048.9049999999997)).toBe("2048.905");
    expect(formatSimTime(0.1 + 0.2)).toBe("0.3");
    expect(formatSimTime(1234)).toBe("1234");
    expect(formatSimTime(-0)).toBe("0");
    expect(formatSimTime(Number.POSITIVE_INFINITY)).toBe("Infinity");
  });

  it("is how error contexts print the simulated time", () => {
    expect(formatContext({ simTimeNs: 2048.9049999999997 })).toBe("at t=2048.905 ns");
  });
});
