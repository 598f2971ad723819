import type { RunResults } from "@kb/runtime";
import type { WebData, WebResults, WebTimeline } from "@kb/web-ui/api";

// A finished run as the page keeps it, and what kb web's views draw of it (no DOM here).

/** A finished run the page keeps (the latest, the previous one, a pinned one). */
export interface RunRecord {
  /** `run 3 · vector-add`. */
  readonly label: string;
  readonly results: RunResults;
  readonly resultsJson: string;
  readonly trace: string | null;
  readonly opLog: string | null;
  readonly topology: { readonly name: string; readonly text: string };
  /** The bench's files as the run read them (the editor's text and the example's other files), by path: the source view's text. */
  readonly sources: Readonly<Record<string, string>>;
}

/**
 * What kb web's page draws of `run` (compared with `other` when given): the results of both, the
 * run's timeline, and the bench's files as it ran them (the source view's text).
 */
export function webDataOf(
  run: RunRecord,
  other: RunRecord | null,
  topology: WebData["topology"],
  timeline: WebTimeline | null,
): WebData {
  const results: WebResults[] = [run, ...(other === null ? [] : [other])].map((record) => ({
    file: `${record.label}.json`,
    label: record.label,
    results: record.results,
  }));
  return {
    schema: "kb.web/1",
    topology,
    results,
    timelines: timeline === null ? [] : [timeline],
    warnings: [],
    sources: run.sources,
  };
}
