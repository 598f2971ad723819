import { PlanEstimate } from "@kb/runtime";
import { describeValues, type SweepRow } from "@kb/sweep";
import type { SweepProgress } from "@kb/sweep/node";
import { formatWallMs } from "./format-run.js";

// kb sweep's progress on stderr: a line when the design is planned, a line per finished point
// (`[3/6] point 2 ok: n=524288 cols=2`; log lines, kept on a pipe), retries. The estimate of the
// wall time left follows kb run's rule: on a terminal only, never on a pipe (a log then holds no
// wall times), from the same estimate as the host program's plan (`PlanEstimate`).

/** Turns a sweep's progress events into the lines kb sweep writes on stderr. */
export class SweepProgressView {
  private readonly estimate = new PlanEstimate();

  /**
   * `tty`: stderr is a terminal (the ETA is shown); `queued`: the points run on kb workers
   * (`--redis`); `clock` gives wall ms.
   */
  constructor(
    private readonly name: string,
    private readonly options: { readonly tty: boolean; readonly queued: boolean },
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The text of `event` for stderr, ending in a newline, or "" for nothing. */
  text(event: SweepProgress): string {
    if (event.type === "planned") {
      // The estimate counts from here: the points to run, none done yet.
      this.estimate.etaMs({ done: 0, total: event.total - event.resumed }, this.clock());
      const extra = [
        event.skipped > 0 ? `${event.skipped} skipped by constraints` : "",
        event.duplicates > 0 ? `${event.duplicates} duplicates dropped` : "",
        event.resumed > 0 ? `${event.resumed} already in the table` : "",
      ].filter((text) => text !== "");
      const where = this.options.queued ? "on the workers" : `${event.concurrency} at a time`;
      return `${this.name}: ${event.total} points${extra.length > 0 ? ` (${extra.join(", ")})` : ""}, ${event.total - event.resumed} to run, ${where}\n`;
    }
    if (event.type === "started") return "";
    if (event.type === "retrying") {
      return `point ${event.point.index} failed (${firstLine(event.reason)}); running it again (retry ${event.attempt})\n`;
    }
    const etaMs = this.options.tty
      ? this.estimate.etaMs({ done: event.ran, total: event.ran + event.pending }, this.clock())
      : null;
    const eta = etaMs === null || event.pending === 0 ? "" : `, ETA ${formatWallMs(etaMs)}`;
    return `[${event.done}/${event.total}] point ${event.row.point} ${statusText(event.row)}: ${describeValues(event.row.values)}${eta}\n`;
  }
}

function statusText(row: SweepRow): string {
  return row.status === "ok" ? "ok" : `FAILED (${firstLine(row.reason ?? "")})`;
}

/** A reason's first line, at most 160 characters. */
function firstLine(reason: string): string {
  const line = reason.split("\n")[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 160)}...` : line;
}
