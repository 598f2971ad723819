import type { RunProgress } from "@kb/runtime/node";
import { describe, expect, it } from "vitest";
import { formatEta, planText } from "./plan-progress.js";
import { ProgressLine, RunProgressView } from "./progress-line.js";

const phase1 = (done: number, total: number, label: string | null): RunProgress => ({
  stage: "phase1",
  simTimeNs: 2000,
  events: 5000,
  plan: { done, total, label },
});

describe("planText", () => {
  it("says the label (else the position), the percent done and the estimate; no estimate once done", () => {
    expect(planText({ done: 3, total: 11, label: "size 8 KiB" }, 12_400)).toBe(
      "size 8 KiB · 27% · ETA 12.40 s",
    );
    expect(planText({ done: 0, total: 2, label: null }, null)).toBe("0 of 2 · 0%");
    expect(planText({ done: 2, total: 2, label: "" }, 0)).toBe("2 of 2 · 100%");
  });

  it("shows a long run's layer and launch as llama-layer states them, the ETA in minutes", () => {
    // Step 74 of 32 x 11: layer 7, its 5th launch; 74 / 352 = 21.02%.
    const plan = { done: 74, total: 352, label: "layer 7/32 · launch o-proj 5/11" };
    expect(planText(plan, 250_000)).toBe("layer 7/32 · launch o-proj 5/11 · 21% · ETA 4 min");
  });
});

describe("formatEta", () => {
  it("gives seconds below a minute, whole minutes below an hour, then hours and minutes", () => {
    expect(formatEta(450)).toBe("450 ms");
    expect(formatEta(59_000)).toBe("59.00 s");
    expect(formatEta(90_000)).toBe("2 min");
    expect(formatEta(59 * 60_000)).toBe("59 min");
    expect(formatEta(3_900_000)).toBe("1 h 05 min");
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
      "\r\x1b[Kallreduce: running, size 1 KiB · 0%, t = 2 µs, 5,000 events" +
        "\r\x1b[Kallreduce: running, size 2 KiB · 25% · ETA 9.00 s, t = 2 µs, 5,000 events, 1.667 kevents/s",
    );
    written = "";
    now = 3010; // 10 ms later: the next step is shown all the same (3,010 ms / 2 steps x 2 left)
    view.show(phase1(2, 4, "size 4 KiB"));
    expect(written).toContain("size 4 KiB · 50% · ETA 3.01 s");
  });

  it("estimates a layered run's time left from the wall time its steps took (fake clock)", () => {
    let written = "";
    let now = 0;
    const line = new ProgressLine({ write: (text: string) => (written += text), isTTY: true, columns: 200 });
    const view = new RunProgressView(line, "llama-layer", "ref-4sip.yaml", () => now);
    view.show(phase1(0, 22, "layer 1/2 · launch rmsnorm 1/11"));
    now = 60_000;
    view.show(phase1(4, 22, "layer 1/2 · launch o-proj 5/11")); // 15 s a step, 18 steps left: 270 s
    expect(written).toContain("layer 1/2 · launch o-proj 5/11 · 18% · ETA 5 min,");
    now = 300_000;
    view.show(phase1(20, 22, "layer 2/2 · launch down-proj 10/11")); // 15 s a step, 2 left
    expect(written).toContain("layer 2/2 · launch down-proj 10/11 · 90% · ETA 30.00 s,");
  });
});
