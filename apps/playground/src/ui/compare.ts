// Which earlier run the playground puts beside the latest one: the last earlier run of the same
// bench (a gemm is never compared with a vector-add by default), or the pinned run when the user
// chose it. Plain functions, tested under Node.

/** What a comparison needs of a run: its label and its bench's name. */
export interface ComparableRun {
  readonly label: string;
  /** Results name their bench (absent only in results of a bench without a name). */
  readonly results: { readonly bench?: string | null | undefined };
}

/** How many finished runs the page keeps for comparison (their results, traces and op logs). */
export const KEPT_RUNS = 8;

/**
 * The run the latest of `runs` (latest last) is compared with by default: the last earlier run
 * of the same bench, or null when there is none (the page then shows the latest run alone and
 * says why).
 */
export function previousOfSameBench<T extends ComparableRun>(runs: readonly T[]): T | null {
  const latest = runs.at(-1);
  if (latest === undefined) return null;
  for (let index = runs.length - 2; index >= 0; index--) {
    const run = runs[index] as T;
    if (typeof run.results.bench === "string" && run.results.bench === latest.results.bench) return run;
  }
  return null;
}

/**
 * Why a comparison shows nothing: `null` when it shows a run, else a sentence for the page
 * (`choice` is the select's value: `previous`, `pinned` or `none`).
 */
export function nothingComparedWhy(runs: readonly ComparableRun[], choice: string): string | null {
  if (choice === "none") return null;
  const latest = runs.at(-1);
  if (latest === undefined || choice !== "previous" || previousOfSameBench(runs) !== null) return null;
  return `No earlier run of ${latest.results.bench ?? "this bench"} to compare with: run it again, or pin a run to compare others with it.`;
}
