/// <reference lib="dom" />

import {
  autocompletion,
  type Completion,
  type CompletionContext,
  type CompletionResult,
} from "@codemirror/autocomplete";
import { javascript } from "@codemirror/lang-javascript";
import { type Diagnostic, forceLinting, linter } from "@codemirror/lint";
import type { Extension } from "@codemirror/state";
import { EditorView, hoverTooltip, ViewPlugin } from "@codemirror/view";
import { type TsClient, tsClient } from "./ts-client.js";
import type { EditorHover } from "./ts-service.js";

/** Options of {@link benchExtensions}. */
export interface BenchEditorOptions {
  /**
   * The virtual path of the file the editor shows (`benches/vector-add.ts`), or a function giving
   * it (the page switches examples); imports resolve from there among the files of `setFiles`.
   */
  readonly path: string | (() => string);
  /** The TypeScript client; the page's shared one by default. */
  readonly client?: TsClient;
  /** Milliseconds after the last edit before the type check runs (default 400). */
  readonly lintDelay?: number;
}

/**
 * The bench editor's language support: TypeScript syntax, and, from a TypeScript worker loaded
 * after the page has shown, completion with the `@kb/*` types (members of `tl.`, `sim.`, the
 * params of `defineBench`...), the type on hover and type errors as lint markers. Includes
 * `javascript({ typescript: true })`: do not add it again.
 *
 * Until the worker is ready the editor has syntax highlighting only; the markers appear when it is.
 */
export function benchExtensions(options: BenchEditorOptions): Extension {
  const client = options.client ?? tsClient();
  const pathOf = typeof options.path === "string" ? () => options.path as string : options.path;

  const lint = linter(
    async (view): Promise<Diagnostic[]> => {
      const found = await client.diagnostics(pathOf(), view.state.doc.toString());
      return found.map(({ from, to, severity, message }) => {
        const end = Math.min(to, view.state.doc.length);
        return { from: Math.min(from, end), to: end, severity, message, source: "TypeScript" };
      });
    },
    { delay: options.lintDelay ?? 400 },
  );

  const complete = async (context: CompletionContext): Promise<CompletionResult | null> => {
    const word = context.matchBefore(/[\w$]*/);
    const afterDot =
      context.state.sliceDoc((word?.from ?? context.pos) - 1, word?.from ?? context.pos) === ".";
    if (!context.explicit && (word === null || word.from === word.to) && !afterDot) return null;
    if (client.status === "idle") client.start();
    const path = pathOf();
    const found = await client.completions(path, context.state.doc.toString(), context.pos);
    if (found === null || context.aborted) return null;
    return {
      from: found.from,
      options: found.options.map(
        (option): Completion => ({
          label: option.label,
          type: COMPLETION_TYPES[option.kind] ?? "variable",
          sortText: option.sortText,
          info: async () => {
            const detail = await client.completionDetail(path, context.pos, option.label);
            return detail === null ? null : typeInfo(detail);
          },
        }),
      ),
      validFor: /^[\w$]*$/,
    };
  };

  const hover = hoverTooltip(async (view, position) => {
    const found = await client.hover(pathOf(), view.state.doc.toString(), position);
    if (found === null) return null;
    return { pos: found.from, end: found.to, above: true, create: () => ({ dom: typeInfo(found) }) };
  });

  // Starts the worker when the page is idle, and checks the document once it is ready.
  const starter = ViewPlugin.define((view) => {
    client.startWhenIdle();
    const stop = client.onStatus((status) => {
      if (status === "ready") forceLinting(view);
    });
    return { destroy: stop };
  });

  return [
    javascript({ typescript: true }),
    lint,
    autocompletion({ override: [complete] }),
    hover,
    starter,
    EditorView.baseTheme({
      ".kb-ts-info": { maxWidth: "40em", fontSize: "90%" },
      ".kb-ts-info code": { whiteSpace: "pre-wrap", fontFamily: "monospace" },
      ".kb-ts-info p": { margin: "0.4em 0 0", whiteSpace: "pre-wrap" },
    }),
  ];
}

/** CodeMirror's completion types (icons) for TypeScript's element kinds. */
const COMPLETION_TYPES: Readonly<Record<string, string>> = {
  method: "method",
  property: "property",
  getter: "property",
  setter: "property",
  function: "function",
  "local function": "function",
  class: "class",
  "local class": "class",
  interface: "interface",
  type: "type",
  "type parameter": "type",
  enum: "enum",
  "enum member": "enum",
  module: "namespace",
  "external module name": "namespace",
  keyword: "keyword",
  const: "constant",
  let: "variable",
  var: "variable",
  "local var": "variable",
  parameter: "variable",
  alias: "variable",
  string: "text",
};

/** A tooltip's or info panel's body: the signature, then the documentation. */
function typeInfo(hover: EditorHover): HTMLElement {
  const dom = document.createElement("div");
  dom.className = "kb-ts-info";
  const signature = document.createElement("code");
  signature.textContent = hover.signature;
  dom.append(signature);
  if (hover.documentation !== "") {
    const documentation = document.createElement("p");
    documentation.textContent = hover.documentation;
    dom.append(documentation);
  }
  return dom;
}
