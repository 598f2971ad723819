import { describe, expect, it } from "vitest";
import type { RunProgressMessage } from "../src/protocol.js";
import { doneText, progressText } from "../src/ui/progress.js";

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

describe("the playground's done line", () => {
  // A run of 2 us that spent 3.5 uJ (1.75 W); with 32 tokens, 109.4 nJ each.
  const energy = {
    processNm: 7,
    vddV: 0.75,
    totalJ: 3.5e-6,
    dynamicJ: 2.5e-6,
    staticJ: 1e-6,
    averagePowerW: 1.75,
    edpJs: 7e-12,
    tokens: null,
    jPerToken: null,
    byKind: {},
    busiest: [],
    links: {},
  };

  it("puts the run's energy and power beside its simulated time, and J per token when it counts tokens", () => {
    expect(doneText({ simTimeNs: 2000, events: 1727, energy }, "0.4", " · verification PASS")).toBe(
      "Done in 0.4 s: simulated 2 µs, 3.5 µJ, 1.75 W, 1,727 events · verification PASS.",
    );
    const llm = { ...energy, tokens: 32, jPerToken: 3.5e-6 / 32 };
    expect(doneText({ simTimeNs: 2000, events: 10, energy: llm }, "1.0", "")).toBe(
      "Done in 1.0 s: simulated 2 µs, 3.5 µJ, 1.75 W, 109.4 nJ per token, 10 events.",
    );
  });

  it("says only the time for results without energy", () => {
    expect(doneText({ simTimeNs: 850, events: 3 }, "0.1", "")).toBe(
      "Done in 0.1 s: simulated 850 ns, 3 events.",
    );
  });
});
