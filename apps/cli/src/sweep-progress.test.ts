import type { SweepRow } from "@kb/sweep";
import type { SweepProgress } from "@kb/sweep/node";
import { describe, expect, it } from "vitest";
import { SweepProgressView } from "./sweep-progress.js";

// kb sweep's lines on stderr: one per finished point everywhere (log lines), the estimate of the
// wall time left on a terminal only, as kb run's progress line.

const planned = (total: number, resumed = 0): SweepProgress => ({
  type: "planned",
  total,
  resumed,
  skipped: 0,
  duplicates: 0,
  concurrency: 1,
});

const finished = (
  point: number,
  done: number,
  total: number,
  ran: number,
  pending: number,
): SweepProgress => ({
  type: "finished",
  row: { point, status: "ok", values: { n: 1024 * (point + 1) } } as unknown as SweepRow,
  done,
  total,
  ran,
  pending,
});

/** The lines of `events`, each at its wall time (ms) of a fake clock. */
function lines(tty: boolean, events: readonly [number, SweepProgress][]): string[] {
  let now = 0;
  const view = new SweepProgressView("vadd", { tty, queued: false }, () => now);
  return events.map(([at, event]) => {
    now = at;
    return view.text(event);
  });
}

describe("kb sweep's progress lines", () => {
  it("on a terminal, estimates the time left from the points run so far (the last point has none)", () => {
    // 4 points; the first ends after 1000 ms: 3 left at 1000 ms each, 3.00 s; the third after
    // 2500 ms: 1 left at 2500 / 3 ms, 833 ms.
    expect(
      lines(true, [
        [0, planned(4)],
        [1000, finished(0, 1, 4, 1, 3)],
        [2500, finished(1, 3, 4, 3, 1)],
        [4000, finished(2, 4, 4, 4, 0)],
      ]),
    ).toEqual([
      "vadd: 4 points, 4 to run, 1 at a time\n",
      "[1/4] point 0 ok: n=1024, ETA 3.00 s\n",
      "[3/4] point 1 ok: n=2048, ETA 833 ms\n",
      "[4/4] point 2 ok: n=3072\n",
    ]);
  });

  it("counts a resumed sweep's estimate over the points it runs, not those already in the table", () => {
    // 6 points, 4 in the table: the first of the 2 run ends after 2000 ms, 1 left, 2.00 s.
    expect(
      lines(true, [
        [0, planned(6, 4)],
        [2000, finished(4, 5, 6, 1, 1)],
      ])[1],
    ).toBe("[5/6] point 4 ok: n=5120, ETA 2.00 s\n");
  });

  it("on a pipe, keeps a line per point without a wall time", () => {
    expect(
      lines(false, [
        [0, planned(2)],
        [1000, finished(0, 1, 2, 1, 1)],
        [2000, finished(1, 2, 2, 2, 0)],
      ]),
    ).toEqual([
      "vadd: 2 points, 2 to run, 1 at a time\n",
      "[1/2] point 0 ok: n=1024\n",
      "[2/2] point 1 ok: n=2048\n",
    ]);
  });
});
