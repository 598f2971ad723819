import { describe, expect, it } from "vitest";
import type { RunProgressMessage } from "../src/protocol.js";
import { progressText } from "../src/ui/progress.js";

const message = (fields: Partial<RunProgressMessage>): RunProgressMessage => ({
  type: "progress",
  id: 1,
  stage: "phase1",
  ...fields,
});

describe("the playground's progress line", () => {
  it("puts the host program's position, label and estimate before phase 1's time", () => {
    const plan = { done: 5, total: 13, label: "32 KiB" };
    expect(progressText(message({ plan, etaMs: 4300, simTimeNs: 3837, events: 6553 }), 6200, "default")).toBe(
      "Running: 5 of 13 (32 KiB), ETA 4.3 s, t = 3.837 µs, 6,553 events · 6.2 s",
    );
    expect(progressText(message({ plan: { done: 0, total: 2, label: null }, events: 0 }), 0, "default")).toBe(
      "Running: 0 of 2, running the host program · 0.0 s",
    );
  });

  it("gives phase 2 an estimate once the worker knows one", () => {
    expect(progressText(message({ stage: "phase2", done: 10, total: 40, etaMs: 450 }), 1000, "default")).toBe(
      "Running: phase 2, 10 of 40 ops replayed, ETA 450 ms · 1.0 s",
    );
    expect(progressText(message({ stage: "phase2", done: 0, total: 40 }), 1000, "default")).toBe(
      "Running: phase 2, 0 of 40 ops replayed · 1.0 s",
    );
  });
});
