import { yaml } from "@codemirror/lang-yaml";
import { type Diagnostic, linter } from "@codemirror/lint";
import type { Extension } from "@codemirror/state";

/** Options of {@link topologyExtensions}. */
export interface TopologyEditorOptions {
  /** Milliseconds after the last edit before the topology is checked (default 300). */
  readonly lintDelay?: number;
}

/**
 * The topology editor's language support: YAML, and markers for what `kb topology validate`
 * reports (syntax, schema with "did you mean", structural limits, overrides that match no node,
 * warnings), each at its line:col with the CLI's `path: message`. `name` is the file name the
 * messages use (`topology.yaml`), or a function giving it. The checker (zod, yaml, @kb/topology)
 * is loaded at the first check, not with the page.
 */
export function topologyExtensions(
  name: string | (() => string),
  options: TopologyEditorOptions = {},
): Extension {
  const nameOf = typeof name === "string" ? () => name : name;
  return [
    yaml(),
    linter(
      async (view): Promise<Diagnostic[]> => {
        const { topologyDiagnostics } = await import("./topology-check.js");
        return topologyDiagnostics(view.state.doc.toString(), nameOf()).map(
          ({ from, to, severity, message }) => ({
            from,
            to,
            severity,
            message,
            source: "kb topology validate",
          }),
        );
      },
      { delay: options.lintDelay ?? 300 },
    ),
  ];
}
