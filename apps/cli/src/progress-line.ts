import type * as components from "@kb/components";
import type { ReferenceProgress, Simulator } from "@kb/runtime";
import { formatNs, formatSi, formatWallMs, groupDigits } from "./format-run.js";
import type { CliOutput } from "./run-cli.js";

// The progress line of `kb run` on a terminal's stderr.

/**
 * A tracer that forwards to `inner` (the trace recorder, if any) and, every few thousand events,
 * shows the simulated time and the event rate on the progress line (at most ten times a second).
 */
export class ProgressTracer implements components.Tracer {
  private readonly inner: components.Tracer | null;
  private readonly line: ProgressLine;
  private readonly name: string;
  private sim: Simulator | null = null;
  private calls = 0;
  private startMs = 0;
  private shownMs = 0;

  constructor(inner: components.Tracer | null, line: ProgressLine, name: string) {
    this.inner = inner;
    this.line = line;
    this.name = name;
  }

  /** Starts the clock of the event rate once the machine is built. */
  start(sim: Simulator): void {
    this.sim = sim;
    this.startMs = performance.now();
    this.line.show(`${this.name}: running`);
  }

  counter(name: string, tNs: number, componentId: string, value: number): void {
    this.inner?.counter?.(name, tNs, componentId, value);
  }

  record(
    type: components.TraceEventType,
    tNs: number,
    componentId: string,
    label: string,
    flow?: string,
  ): void {
    this.inner?.record(type, tNs, componentId, label, flow);
    if ((++this.calls & 4095) !== 0 || this.sim === null) return;
    const now = performance.now();
    if (now - this.shownMs < 100) return;
    this.shownMs = now;
    const events = this.sim.machine.env.processedEventCount;
    const seconds = (now - this.startMs) / 1000;
    const rate = seconds > 0 ? `, ${formatSi(events / seconds, "events/s")}` : "";
    this.line.show(`${this.name}: running, t = ${formatNs(tNs)}, ${groupDigits(events)} events${rate}`);
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
