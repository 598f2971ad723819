import { PlanEstimate, type ReferenceProgress } from "@kb/runtime";
import type { RunProgress } from "@kb/runtime/node";
import { formatNs, formatSi, formatWallMs, groupDigits } from "./format-run.js";
import { planText } from "./plan-progress.js";
import type { CliOutput } from "./run-cli.js";

// The progress line of `kb run` on a terminal's stderr.

/**
 * `kb run`'s progress line, from `runBench`'s progress events: building, phase 1's simulated time
 * and event rate (with the host program's plan and its ETA once it states one, `sim.progress`),
 * phase 2's ops with an ETA, the references; at most ten lines a second, and each new step of
 * the plan at once. `clock` gives wall ms.
 */
export class RunProgressView {
  private readonly line: ProgressLine;
  private readonly name: string;
  private readonly topology: string;
  private stageStartMs = 0;
  private stage: RunProgress["stage"] | null = null;
  private shownMs = 0;
  private readonly plan = new PlanEstimate();
  /** The plan's `done` shown last. */
  private shownStep: number | null = null;
  private readonly clock: () => number;

  constructor(
    line: ProgressLine,
    name: string,
    topology: string,
    clock: () => number = () => performance.now(),
  ) {
    this.line = line;
    this.name = name;
    this.topology = topology;
    this.clock = clock;
  }

  show(progress: RunProgress): void {
    const now = this.clock();
    const planEta =
      progress.stage === "phase1" && progress.plan !== null ? this.plan.etaMs(progress.plan, now) : null;
    const entered = progress.stage !== this.stage;
    // A new step of the host program's plan is shown at once (steps are launches, layers, sizes).
    const stepped =
      progress.stage === "phase1" && progress.plan !== null && progress.plan.done !== this.shownStep;
    if (stepped) this.shownStep = progress.plan?.done ?? null;
    if (entered) {
      this.stage = progress.stage;
      this.stageStartMs = now;
    } else if (now - this.shownMs < 100 && progress.stage !== "reference" && !stepped) {
      return;
    }
    this.shownMs = now;
    const seconds = (now - this.stageStartMs) / 1000;
    switch (progress.stage) {
      case "build":
        this.line.show(`${this.name}: building the machine of ${this.topology}`);
        return;
      case "phase1": {
        const plan = progress.plan === null ? "" : `, ${planText(progress.plan, planEta)}`;
        if (progress.events === 0) {
          this.line.show(`${this.name}: running${plan}`);
          return;
        }
        const rate = seconds > 0 ? `, ${formatSi(progress.events / seconds, "events/s")}` : "";
        this.line.show(
          `${this.name}: running${plan}, t = ${formatNs(progress.simTimeNs)}, ${groupDigits(progress.events)} events${rate}`,
        );
        return;
      }
      case "phase2": {
        const { done, total } = progress;
        const eta =
          done > 0 ? `, ETA ${formatWallMs(((now - this.stageStartMs) / done) * (total - done))}` : "";
        this.line.show(
          done === 0
            ? `${this.name}: phase 2, replaying ${groupDigits(total)} ops`
            : `${this.name}: phase 2, ${groupDigits(done)} of ${groupDigits(total)} ops replayed${eta}`,
        );
        return;
      }
      case "compare":
        this.line.show(`${this.name}: computing the references and comparing`);
        return;
      case "reference":
        this.line.show(referenceProgressText(this.name, progress.reference));
        return;
    }
  }
}

/**
 * The progress line of a host reference (`kb run --verify`): `gemm: reference C.sip0.cube0 (1 of
 * 2), 37%, ETA 12.40 s`; the check's position only when there are several, the ETA once known.
 */
export function referenceProgressText(bench: string, progress: ReferenceProgress): string {
  const position = progress.count > 1 ? ` (${progress.index + 1} of ${progress.count})` : "";
  const percent = `${Math.floor(progress.fraction * 100)}%`;
  const eta = progress.etaMs === null || progress.done ? "" : `, ETA ${formatWallMs(progress.etaMs)}`;
  return `${bench}: reference ${progress.check}${position}, ${percent}${eta}`;
}

/** One line on a terminal's stderr, rewritten in place (`\r`) and cleared at the end. */
export class ProgressLine {
  private readonly output: CliOutput;
  private shown = false;

  constructor(output: CliOutput) {
    this.output = output;
  }

  show(text: string): void {
    const width = Math.max(20, (this.output.columns ?? 80) - 1);
    this.output.write(`\r\x1b[K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    this.shown = true;
  }

  clear(): void {
    if (this.shown) this.output.write("\r\x1b[K");
    this.shown = false;
  }
}
