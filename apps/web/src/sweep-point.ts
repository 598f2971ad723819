/// <reference lib="dom" />
import type { WebSweepPoint } from "./api.js";
import { cellText } from "./sweep-model.js";

// The line above a sweep point's run page (`/?run=DIGEST` of kb web RESULTS.jsonl): which point
// it is, the axis values it ran with, and the way back to the sweep page.

/** The text of the line: `point 3 of results.jsonl: hbm = hbm3, pes = [4,4], tile = [64,64,64]`. */
export function sweepPointText(point: WebSweepPoint): string {
  const values = Object.entries(point.values).map(([axis, value]) => `${axis} = ${cellText(value)}`);
  return `point ${point.point} of ${point.table}${values.length === 0 ? "" : `: ${values.join(", ")}`}`;
}

/** Shows the line in `element` (hidden when the run is not a sweep's point). */
export function showSweepPoint(element: HTMLElement, point: WebSweepPoint | undefined): void {
  element.hidden = point === undefined;
  if (point === undefined) {
    element.replaceChildren();
    return;
  }
  const back = document.createElement("a");
  back.href = "/";
  back.textContent = "the sweep";
  element.replaceChildren(`This run is ${sweepPointText(point)} (`, back, ").");
}
