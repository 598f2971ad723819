import {
  expandTopology,
  type LocatedIssue,
  locatedIssuesOf,
  overrideIssue,
  parseTopology,
  type Topology,
  topologyWarnings,
  yamlLocator,
} from "@kb/topology";

// The topology editor's checks, from the text (the browser has no file): what
// `kb topology validate` finds in the YAML and the expanded graph, with the same located issues.
// Loaded lazily by the editor's linter (it brings zod, yaml and @kb/topology).

/** A problem of the topology text, as the editor marks it. */
export interface TopologyDiagnostic {
  /** Offsets in the text (UTF-16 code units), `to` exclusive: the word at the issue's place. */
  readonly from: number;
  readonly to: number;
  /** Warnings do not stop a run (`warning:` lines of `kb topology validate`). */
  readonly severity: "error" | "warning";
  /** `path: message`, as `kb topology validate` prints it after `file:line:col: `. */
  readonly message: string;
  /** The issue itself; `formatIssue(issue)` is the CLI's line. */
  readonly issue: LocatedIssue;
}

/**
 * The errors and warnings `kb topology validate` prints for topology YAML `text` named `name`:
 * YAML syntax, schema (unknown keys with a "did you mean", missing keys, types, ranges), the
 * structural limits, overrides that match no node, and the located warnings. Empty for a valid
 * topology without warnings.
 *
 * Not checked here (they need the component registry and plug-ins; the run reports them): impls no
 * registry provides, params an impl rejects, the PE's TCM budget.
 */
export function topologyDiagnostics(text: string, name: string): TopologyDiagnostic[] {
  const { errors, warnings } = checkTopologyText(text, name);
  return [
    ...errors.map((issue) => diagnostic(text, issue, "error")),
    ...warnings.map((issue) => diagnostic(text, issue, "warning")),
  ];
}

/**
 * Validates and expands a topology text. The text counterpart of `loadTopologyGraphFile` of
 * `@kb/topology/node` (which reads a file): an override matching no node is located at its
 * `match:`, one setting an HBM geometry key at that param (`overrideIssue`), the warnings at their paths, in the same words.
 */
export function checkTopologyText(
  text: string,
  name: string,
): { readonly errors: readonly LocatedIssue[]; readonly warnings: readonly LocatedIssue[] } {
  let topology: Topology;
  try {
    topology = parseTopology(text, name);
  } catch (error) {
    const issues = locatedIssuesOf(error);
    if (issues === undefined) throw error;
    return { errors: issues, warnings: [] };
  }
  try {
    expandTopology(topology);
  } catch (error) {
    const issue = overrideIssue(error, text, name);
    if (issue === undefined) throw error;
    return { errors: [issue], warnings: [] };
  }
  const locate = yamlLocator(text);
  const written = (path: readonly (string | number)[]) => locate(path).found === path.length;
  const warnings = topologyWarnings(topology, written).map(({ path, message }) => {
    const { line, col } = locate(path);
    return { file: name, line, col, path: path.join("."), message };
  });
  return { errors: [], warnings };
}

function diagnostic(text: string, issue: LocatedIssue, severity: "error" | "warning"): TopologyDiagnostic {
  const from = offsetOf(text, issue.line, issue.col);
  const word = /^[^\s:,[\]{}#]+/.exec(text.slice(from, from + 200));
  return {
    from,
    to: from + (word?.[0].length ?? 0),
    severity,
    message: `${issue.path}: ${issue.message}`,
    issue,
  };
}

/** The offset of 1-based `line`:`col` in `text`, clamped to the text. */
function offsetOf(text: string, line: number, col: number): number {
  let offset = 0;
  for (let current = 1; current < line; current++) {
    const end = text.indexOf("\n", offset);
    if (end < 0) return text.length;
    offset = end + 1;
  }
  const end = text.indexOf("\n", offset);
  return Math.min(offset + Math.max(col - 1, 0), end < 0 ? text.length : end);
}
