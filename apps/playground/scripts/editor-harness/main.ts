/// <reference lib="dom" />
import { startCompletion } from "@codemirror/autocomplete";
import { basicSetup, EditorView } from "codemirror";
import { benchExtensions, setFiles, topologyExtensions, tsClient } from "../../src/editor/index.js";

// The editors alone on a page, for scripts/measure-editor.ts: the bench and the files it imports
// come from the measuring script (window.harness.open), as the playground's examples do.

const bench = new EditorView({
  parent: document.getElementById("bench") as HTMLElement,
  extensions: [basicSetup, benchExtensions({ path: () => harness.path })],
});
const topology = new EditorView({
  parent: document.getElementById("topology") as HTMLElement,
  extensions: [basicSetup, topologyExtensions("topology.yaml")],
});

const harness = {
  path: "bench.ts",
  bench,
  topology,
  client: tsClient(),
  /** Opens `files[main]` in the bench editor and `yaml` in the topology editor. */
  open(files: Record<string, string>, main: string, yaml: string): void {
    harness.path = main;
    setFiles(files);
    bench.dispatch({ changes: { from: 0, to: bench.state.doc.length, insert: files[main] ?? "" } });
    topology.dispatch({ changes: { from: 0, to: topology.state.doc.length, insert: yaml } });
  },
  /** Puts the cursor at `position` of the bench and asks for completions (as Ctrl+Space does). */
  complete(position: number): void {
    bench.focus();
    bench.dispatch({ selection: { anchor: position } });
    startCompletion(bench);
  },
};
(window as unknown as { harness: typeof harness }).harness = harness;
