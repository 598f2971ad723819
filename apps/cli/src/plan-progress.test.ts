import type { RunProgress } from "@kb/runtime/node";
import { describe, expect, it } from "vitest";
import { planText } from "./plan-progress.js";
import { ProgressLine, RunProgressView } from "./progress-line.js";

const phase1 = (done: number, total: number, label: string | null): RunProgress => ({
  stage: "phase1",
  simTimeNs: 2000,
  events: 5000,
  plan: { done, total, label },
});

describe("planText", () => {
  it("says the position, the label and the estimate; no estimate once done", () => {
    expect(planText({ done: 3, total: 11, label: "size 8 KiB" }, 12_400)).toBe(
      "3 of 11 (size 8 KiB), ETA 12.40 s",
    );
    expect(planText({ done: 0, total: 2, label: null }, null)).toBe("0 of 2");
    expect(planText({ done: 2, total: 2, label: "" }, 0)).toBe("2 of 2");
  });
});

describe("RunProgressView with a plan", () => {
  it("shows the host program's position and its ETA on phase 1's line, each new step at once", () => {
    let written = "";
    let now = 0;
    const line = new ProgressLine({ write: (text: string) => (written += text), isTTY: true, columns: 200 });
    const view = new RunProgressView(line, "allreduce", "default.yaml", () => now);
    view.show(phase1(0, 4, "size 1 KiB"));
    view.show(phase1(0, 4, "size 1 KiB")); // the same step within 100 ms: not shown again
    now = 3000;
    view.show(phase1(1, 4, "size 2 KiB")); // 3 s a step, 3 steps left
    expect(written).toBe(
      "\r\x1b[Kallreduce: running, 0 of 4 (size 1 KiB), t = 2 µs, 5,000 events" +
        "\r\x1b[Kallreduce: running, 1 of 4 (size 2 KiB), ETA 9.00 s, t = 2 µs, 5,000 events, 1.667 kevents/s",
    );
    written = "";
    now = 3010; // 10 ms later: the next step is shown all the same (3,010 ms / 2 steps x 2 left)
    view.show(phase1(2, 4, "size 4 KiB"));
    expect(written).toContain("2 of 4 (size 4 KiB), ETA 3.01 s");
  });
});
