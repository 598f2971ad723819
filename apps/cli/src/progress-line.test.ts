import type { ReferenceProgress } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { ProgressLine, referenceProgressText } from "./progress-line.js";

const progress = (fields: Partial<ReferenceProgress>): ReferenceProgress => ({
  check: "C.sip0.cube0",
  index: 0,
  count: 1,
  fraction: 0,
  elapsedMs: 0,
  etaMs: null,
  done: false,
  ...fields,
});

describe("referenceProgressText", () => {
  it("names the bench and the check, the percent done (rounded down) and the ETA once known", () => {
    expect(referenceProgressText("gemm", progress({}))).toBe("gemm: reference C.sip0.cube0, 0%");
    expect(referenceProgressText("gemm", progress({ fraction: 0.379, elapsedMs: 7600, etaMs: 12_400 }))).toBe(
      "gemm: reference C.sip0.cube0, 37%, ETA 12.40 s",
    );
    expect(referenceProgressText("gemm", progress({ fraction: 0.9, etaMs: 450 }))).toBe(
      "gemm: reference C.sip0.cube0, 90%, ETA 450 ms",
    );
  });

  it("counts the checks when there are several, and drops the ETA when done", () => {
    const last = progress({ check: "C.sip0.cube1", index: 1, count: 2, fraction: 1, etaMs: 0, done: true });
    expect(referenceProgressText("gemm", last)).toBe("gemm: reference C.sip0.cube1 (2 of 2), 100%");
  });
});

describe("ProgressLine", () => {
  it("rewrites one line in place, cut to the terminal's width, and clears it", () => {
    let written = "";
    const line = new ProgressLine({ write: (text: string) => (written += text), isTTY: true, columns: 21 });
    line.show("gemm: reference C.sip0.cube0, 37%");
    line.clear();
    expect(written).toBe("\r\x1b[Kgemm: reference C.s…\r\x1b[K");
  });
});
