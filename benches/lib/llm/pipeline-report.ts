import type { BenchReport } from "@kb/runtime";
import { gpipeBubble, type PipelineTimeline, type Slot } from "./pipeline-schedule.js";

/** The columns of {@link pipelineReport}. */
export const PIPELINE_REPORT_COLUMNS = [
  "what",
  "stage",
  "micro-batch",
  "start (us)",
  "end (us)",
  "time (us)",
  "idle in span (us)",
  "bubble",
  "GPipe (pp-1)/(m+pp-1)",
] as const;

const us = (ns: number) => Number((ns / 1000).toFixed(3));
const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;

/**
 * The pipeline's table (also `report` of `kb run --json`): each forward (`forward`, stage,
 * micro-batch, start and end on the pipeline's clock, its time) and each transfer (`send A -> B`,
 * the sender's stage) in issue order; then per stage its first start, last end, busy time, idle
 * time between them and its bubble (idle over the whole run / the run) beside GPipe's formula;
 * then when each micro-batch leaves the last stage, the total send time and the run.
 */
export function pipelineReport(
  title: string,
  timeline: PipelineTimeline,
  pairs: (stage: number) => string,
): BenchReport {
  const pp = timeline.stages.length;
  const m = timeline.microBatchEndNs.length;
  const formula = percent(gpipeBubble(pp, m));
  const rows: (string | number)[][] = [];
  const row = (what: string, slot: Slot) =>
    rows.push([
      what,
      slot.stage,
      slot.microBatch,
      us(slot.startNs),
      us(slot.endNs),
      us(slot.endNs - slot.startNs),
      "",
      "",
      "",
    ]);
  // Issue order: each forward, then the transfer of its output to the next stage.
  const sends = [...timeline.sends];
  for (const slot of timeline.forwards) {
    row("forward", slot);
    if (slot.stage === pp - 1) continue;
    const send = sends.shift() as Slot;
    row(`send ${pairs(send.stage)}`, send);
  }
  for (const stage of timeline.stages) {
    rows.push([
      "stage",
      stage.stage,
      "",
      us(stage.firstStartNs),
      us(stage.lastEndNs),
      us(stage.busyNs),
      us(stage.idleInSpanNs),
      percent(stage.bubble),
      formula,
    ]);
  }
  for (const [mb, endNs] of timeline.microBatchEndNs.entries()) {
    rows.push(["micro-batch end", pp - 1, mb, "", us(endNs), "", "", "", ""]);
  }
  const sendNs = timeline.sends.reduce((sum, slot) => sum + slot.endNs - slot.startNs, 0);
  rows.push(["sends (all)", "", "", "", "", us(sendNs), "", "", ""]);
  rows.push(["pipeline", "", "", 0, us(timeline.makespanNs), us(timeline.makespanNs), "", "", formula]);
  return { title, columns: [...PIPELINE_REPORT_COLUMNS], rows };
}
