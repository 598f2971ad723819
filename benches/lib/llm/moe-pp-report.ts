import type { BenchReport, LaunchRecord } from "@kb/runtime";
import type { LayerLaunch } from "./layer.js";
import type { CapacityOutcome } from "./moe-routing.js";
import { PIPELINE_REPORT_COLUMNS, pipelineReport } from "./pipeline-report.js";
import { gpipeBubble, type PipelineTimeline } from "./pipeline-schedule.js";

const us = (ns: number) => Number((ns / 1000).toFixed(3));
const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;
const windowOf = (record: LaunchRecord) => record.endNs - record.startNs;
const boundOf = (record: LaunchRecord) =>
  record.verdict.resource === "" ? record.verdict.rule : `${record.verdict.rule}: ${record.verdict.resource}`;

/** A row of the table: `what` and the figure in the `time (us)` column (index 5). */
const figure = (what: string, value: string | number): (string | number)[] => [
  what,
  "",
  "",
  "",
  "",
  value,
  "",
  "",
  "",
];

/** What a placement of moe-pp ran: the pipeline's clock, every launch and each layer's routing. */
export interface MoePipelineRun {
  readonly title: string;
  readonly timeline: PipelineTimeline;
  readonly pairs: (stage: number) => string;
  /** Every kernel and collective of every forward, `layer` the model's layer. */
  readonly launches: readonly LayerLaunch[];
  /** The stage-to-stage sends' launches. */
  readonly sends: readonly LaunchRecord[];
  /** Each (micro-batch, layer)'s capacity outcome. */
  readonly outcomes: readonly CapacityOutcome[];
  readonly cubes: number;
}

/**
 * moe-pp's table (also `report` of `kb run --json`), in {@link PIPELINE_REPORT_COLUMNS}. Row 0 is
 * the makespan (`report.rows[0][5]`, us) and row 1 the cubes the placement occupies
 * (`report.rows[1][5]`): the two figures a placement sweep trades; then the launch time by
 * verdict (rule: resource), most first (`report.rows[2][1]` the verdict of most of the time, its
 * share in column 7), each launch's window summed over the run (the sends included); then
 * llama-pp's pipeline rows (each forward and send on the pipeline's clock, the stages' bubbles);
 * then the routing summed over layers and micro-batches and the time of the MoE block's parts.
 */
export function moePipelineReport(run: MoePipelineRun): BenchReport {
  const { timeline, launches, sends } = run;
  const pipeline = pipelineReport(run.title, timeline, run.pairs);
  const rows: (string | number)[][] = [
    [
      "makespan",
      "",
      "",
      0,
      us(timeline.makespanNs),
      us(timeline.makespanNs),
      "",
      "",
      percent(gpipeBubble(timeline.stages.length, timeline.microBatchEndNs.length)),
    ],
    figure("cubes (pp x ep x tp)", run.cubes),
  ];
  const records = [...launches.map((l) => l.record), ...sends];
  const total = records.reduce((sum, r) => sum + windowOf(r), 0);
  const byBound = new Map<string, number>();
  for (const record of records)
    byBound.set(boundOf(record), (byBound.get(boundOf(record)) ?? 0) + windowOf(record));
  const bounds = [...byBound.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  for (const [bound, ns] of bounds) {
    rows.push(["bound by", bound, "", "", "", us(ns), "", percent(total > 0 ? ns / total : 0), ""]);
  }
  rows.push(...pipeline.rows.map((row) => [...row]));
  const time = (pick: (l: LayerLaunch) => boolean) =>
    us(launches.filter(pick).reduce((sum, l) => sum + windowOf(l.record), 0));
  const experts = run.outcomes[0]?.routed.length ?? 0;
  const sumOf = (field: "routed" | "computed") =>
    Array.from({ length: experts }, (_, e) => run.outcomes.reduce((sum, o) => sum + (o[field][e] ?? 0), 0));
  rows.push(
    figure("tokens per expert (routed, all layers)", sumOf("routed").join(" ")),
    figure("tokens per expert (computed)", sumOf("computed").join(" ")),
    figure(
      "dropped assignments",
      run.outcomes.reduce((sum, o) => sum + o.dropped, 0),
    ),
    figure(
      "attention block (us)",
      time((l) => !l.communication && !isMoe(l.kernel)),
    ),
    figure(
      "router, dispatch, combine (us)",
      time((l) => MOE_KERNELS.includes(l.kernel)),
    ),
    figure(
      "expert GEMMs (us)",
      time((l) => l.kernel.startsWith("expert ")),
    ),
    figure(
      "all-to-all dispatch + combine (us)",
      time((l) => l.kernel.startsWith("all-to-all")),
    ),
    figure(
      "all-gather of the groups' rows (us)",
      time((l) => l.kernel.startsWith("all-gather")),
    ),
    figure(
      "all-reduces (us)",
      time((l) => l.kernel.startsWith("all-reduce")),
    ),
    figure("launch time, all (us)", us(total)),
  );
  return { title: run.title, columns: [...PIPELINE_REPORT_COLUMNS], rows };
}

const MOE_KERNELS = ["router", "dispatch", "combine"];
const isMoe = (kernel: string) => MOE_KERNELS.includes(kernel) || kernel.startsWith("expert ");
