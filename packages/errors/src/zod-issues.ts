// The one way kernbench-ts words a schema's issues: a path as a file's reader finds it
// (`overrides[2].params.channels`), the issue's text (unknown keys listed), and the "did you mean"
// suggestion. Taken by shape, so @kb/errors needs no zod: a zod issue is a SchemaIssue.

/** A schema issue by shape: what zod's `error.issues` hold (only the fields read here). */
export interface SchemaIssue {
  /** Where in the value: keys and array indices from the root. */
  readonly path: readonly PropertyKey[];
  /** The schema's message. */
  readonly message: string;
  /** Zod's issue code (`unrecognized_keys`, `invalid_type`, ...). */
  readonly code?: string;
  /** For `unrecognized_keys`: the keys the schema does not know. */
  readonly keys?: readonly string[];
}

/**
 * A value's path as a reader finds it in the file: keys dotted, indices bracketed
 * (`overrides[2].params.channels`, `[0].name`); `root` (default `<top level>`) for the empty path.
 */
export function formatIssuePath(path: readonly PropertyKey[], root = "<top level>"): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += text === "" ? String(segment) : `.${String(segment)}`;
  }
  return text === "" ? root : text;
}

/** An issue's text: `unknown key(s) "a", "b"` for unknown keys, else the schema's message. */
export function schemaIssueText(issue: SchemaIssue): string {
  if (issue.code === "unrecognized_keys" && issue.keys !== undefined) {
    return `unknown key(s) ${issue.keys.map((key) => `"${key}"`).join(", ")}`;
  }
  return issue.message;
}

/** Options of {@link formatSchemaIssues}. */
export interface FormatSchemaIssuesOptions {
  /** How an empty path is named (default `<top level>`). */
  readonly root?: string;
}

/** One `path: text` line per issue ({@link formatIssuePath}, {@link schemaIssueText}), in order. */
export function formatSchemaIssues(
  issues: readonly SchemaIssue[],
  options: FormatSchemaIssuesOptions = {},
): string[] {
  return issues.map((issue) => `${formatIssuePath(issue.path, options.root)}: ${schemaIssueText(issue)}`);
}

/**
 * The candidate closest to `word` by edit distance (case ignored), if it is close enough to be a
 * likely typo: the "did you mean" of every message that names an unknown key, impl or node.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined || bestDistance > Math.max(1, Math.floor(word.length / 3))) return undefined;
  return replacesWholeDifference(word.toLowerCase(), best.toLowerCase(), bestDistance) ? undefined : best;
}

/**
 * True when, after the shared prefix and suffix, both words differ in a run of two or more
 * characters and in every one of them: "pe_sfu" vs "pe_cpu" (another component, not a typo),
 * unlike "colums" vs "cols" (letters dropped), "rign" vs "ring" (swapped) or "cube2" vs "cube0".
 */
function replacesWholeDifference(a: string, b: string, distance: number): boolean {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const middleA = endA - start;
  const middleB = endB - start;
  return middleA > 1 && middleB > 1 && distance >= Math.max(middleA, middleB);
}

/** Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent swaps cost 1. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const above = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row.push(distance);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}
