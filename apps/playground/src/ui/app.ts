/// <reference lib="dom" />
import { isKbError } from "@kb/errors";
import { byId } from "@kb/web-ui/dom";
import type { EditorView } from "codemirror";
import { benchExtensions, setFiles, topologyExtensions } from "../editor/index.js";
import type { RunErrorMessage, RunProgressMessage, SourceLocation } from "../protocol.js";
import { KEPT_RUNS, nothingComparedWhy, previousOfSameBench } from "./compare.js";
import { createEditor, goToLine, markRunError, setText } from "./editors.js";
import {
  BENCH_EXAMPLES,
  benchExample,
  loadImportable,
  loadSource,
  loadTopology,
  TOPOLOGY_EXAMPLES,
} from "./examples.js";
import { parseParams } from "./params.js";
import { count, doneText, progressText } from "./progress.js";
import type { ResultsView } from "./results-view.js";
import type { RunClient, RunOutcome } from "./run-client.js";
import type { RunRecord } from "./run-record.js";
import { decodeShared, encodeShared, type SharedRun } from "./share.js";
import { sourceLineAt } from "./source-lines.js";

// The playground page: the editors, the run controls, progress and errors, and the results
// (drawn by results-view.ts, loaded with the first run).

/** What the page exposes on `window.kbPlayground` for tests and the console. */
export interface PlaygroundHandle {
  /** Runs the editors' bench; resolves with how the run ended. */
  run(): Promise<RunOutcome | null>;
  cancel(): void;
  /** The runs finished, latest last. */
  readonly runs: readonly RunRecord[];
  /** The link Share made last. */
  shareUrl: string | null;
  /** The results views drawn last. */
  readonly results: ResultsView | null;
  /** The label of the run shown beside the latest one, or null. */
  readonly compared: string | null;
  /** The two editors (CodeMirror views). */
  readonly editors: { readonly bench: EditorView; readonly topology: EditorView };
}

declare global {
  interface Window {
    kbPlayground?: PlaygroundHandle;
  }
}

/** Starts the page; `client` runs the benches. */
export async function startPlayground(client: RunClient): Promise<PlaygroundHandle> {
  const exampleSelect = byId<HTMLSelectElement>("example");
  const topologySelect = byId<HTMLSelectElement>("topology-ref");
  const paramsInput = byId<HTMLInputElement>("params");
  const verifyInput = byId<HTMLInputElement>("verify");
  const maxEventsInput = byId<HTMLInputElement>("max-events");
  const maxSimTimeInput = byId<HTMLInputElement>("max-sim-time");
  const runButton = byId<HTMLButtonElement>("run");
  const cancelButton = byId<HTMLButtonElement>("cancel");
  const progress = byId("progress");
  const compareSelect = byId<HTMLSelectElement>("compare-with");

  let main = BENCH_EXAMPLES[0]?.path ?? "benches/vector-add.ts";
  let topologyName = TOPOLOGY_EXAMPLES[0] ?? "default.yaml";
  let topologyReference = "";
  // The texts the editors were last opened with (an edit is a difference from them).
  let benchOpened = "";
  let topologyOpened = "";
  const runs: RunRecord[] = [];
  let pinned: RunRecord | null = null;
  let resultsView: ResultsView | null = null;
  let runCount = 0;

  const run = async (): Promise<RunOutcome | null> => runBench();
  const benchEditor = createEditor({
    parent: byId("bench-editor"),
    text: "",
    language: benchExtensions({ path: () => main }),
    onRun: () => void run(),
    label: "bench editor",
  });
  const topologyEditor = createEditor({
    parent: byId("topology-editor"),
    text: "",
    language: topologyExtensions(() => topologyName),
    onRun: () => void run(),
    label: "topology editor",
  });

  for (const example of BENCH_EXAMPLES) exampleSelect.append(new Option(example.label, example.path));
  for (const name of TOPOLOGY_EXAMPLES) topologySelect.append(new Option(name, name));

  // Each opens its file only once its text is loaded: until then the editor, its title and what
  // Run runs stay the previous file's.
  const openBench = async (path: string, text?: string, params?: string) => {
    const source = text ?? (await loadSource(path));
    main = path;
    exampleSelect.value = path;
    byId("bench-title").textContent = `Bench · ${path}`;
    setText(benchEditor, source);
    benchOpened = source;
    paramsInput.value = params ?? benchExample(path)?.params ?? "";
    // The type checker sees the bench's library files too, as the run does.
    void loadImportable(path).then((files) => setFiles({ ...files, [path]: source }));
  };
  const openTopology = async (name: string, text?: string) => {
    const reference = TOPOLOGY_EXAMPLES.includes(name) ? await loadTopology(name) : "";
    topologyName = name;
    topologySelect.value = TOPOLOGY_EXAMPLES.includes(name) ? name : "";
    topologyReference = reference;
    byId("topology-title").textContent = `Topology · ${name}`;
    setText(topologyEditor, text ?? topologyReference);
    topologyOpened = text ?? topologyReference;
  };

  // Opening another example replaces the editor's text: edits are kept unless the user agrees.
  const keepsEdits = (view: EditorView, opened: string, name: string) =>
    view.state.doc.toString() !== opened &&
    !window.confirm(`Discard your changes to ${name}? (Share keeps them in a link.)`);
  exampleSelect.addEventListener("change", () => {
    if (keepsEdits(benchEditor, benchOpened, main)) exampleSelect.value = main;
    else void openBench(exampleSelect.value);
  });
  topologySelect.addEventListener("change", () => {
    if (keepsEdits(topologyEditor, topologyOpened, topologyName))
      topologySelect.value = TOPOLOGY_EXAMPLES.includes(topologyName) ? topologyName : "";
    else void openTopology(topologySelect.value);
  });
  byId("run-options").addEventListener("submit", (event) => event.preventDefault());

  // Progress and errors.
  const setState = (state: "idle" | "running" | "done" | "error" | "cancelled") => {
    document.body.dataset.runState = state;
    runButton.disabled = state === "running";
    cancelButton.disabled = state !== "running";
  };
  // The progress line: redrawn on each message of the worker and every 200 ms (the seconds count
  // on while the worker is busy between messages).
  const ticker = {
    latest: null as RunProgressMessage | null,
    startedAt: 0,
    timer: undefined as ReturnType<typeof setInterval> | undefined,
    draw() {
      progress.textContent = progressText(this.latest, performance.now() - this.startedAt, topologyName);
    },
    start() {
      this.latest = null;
      this.startedAt = performance.now();
      this.draw();
      this.timer = setInterval(() => this.draw(), 200);
    },
    show(message: RunProgressMessage) {
      this.latest = message;
      this.draw();
    },
    stop() {
      clearInterval(this.timer);
      this.timer = undefined;
    },
  };
  const errorPanel = byId("error-panel");
  const errorLocation = byId<HTMLButtonElement>("error-location");
  let errorTarget: { view: EditorView; location: SourceLocation; message: string } | null = null;
  errorLocation.addEventListener("click", () => {
    if (errorTarget === null) return;
    markRunError(errorTarget.view, { ...errorTarget.location, message: errorTarget.message }, true);
  });
  const clearError = () => {
    errorPanel.hidden = true;
    errorTarget = null;
    markRunError(benchEditor, null);
    markRunError(topologyEditor, null);
  };
  const showError = (error: Pick<RunErrorMessage, "code" | "message" | "location">) => {
    errorPanel.hidden = false;
    byId("error-code").textContent = error.code;
    byId("error-message").textContent = error.message;
    const location = error.location;
    const view =
      location === null
        ? null
        : location.file === main
          ? benchEditor
          : location.file === topologyName
            ? topologyEditor
            : null;
    errorLocation.hidden = location === null;
    if (location !== null) {
      errorLocation.textContent = `${location.file}:${location.line}:${location.column}`;
      errorLocation.dataset.line = String(location.line);
      errorLocation.disabled = view === null;
    }
    errorTarget = view === null || location === null ? null : { view, location, message: error.message };
    if (errorTarget !== null)
      markRunError(errorTarget.view, { ...errorTarget.location, message: error.message });
  };

  // Results, A/B and downloads.
  const compared = (): RunRecord | null => {
    const choice = compareSelect.value;
    if (choice === "pinned") return pinned;
    if (choice === "previous") return previousOfSameBench(runs);
    return null;
  };
  const fillCompare = () => {
    const keep = compareSelect.value || "previous";
    compareSelect.replaceChildren(
      new Option("the previous run of this bench", "previous"),
      ...(pinned === null ? [] : [new Option(`pinned: ${pinned.label}`, "pinned")]),
      new Option("nothing", "none"),
    );
    compareSelect.value = keep === "pinned" && pinned === null ? "previous" : keep;
  };
  fillCompare();
  const compareNote = byId("compare-note");
  const resultsElement = byId("results");
  const staleNote = byId("results-stale");
  /** Marks the results shown as those of an earlier run (after a failed or cancelled one), or clears the mark. */
  const markStale = (why: string | null) => {
    const latest = runs[runs.length - 1];
    const stale = why !== null && latest !== undefined;
    resultsElement.dataset.stale = String(stale);
    staleNote.hidden = !stale;
    staleNote.textContent = stale ? `Stale: the results below are of ${latest.label}; ${why}.` : "";
  };
  const showResults = async () => {
    const latest = runs[runs.length - 1];
    if (latest === undefined) return;
    const { ResultsView, setDownload } = await import("./results-view.js");
    resultsView ??= new ResultsView(byId("results"));
    resultsView.show(latest, compared());
    const why = nothingComparedWhy(runs, compareSelect.value);
    compareNote.hidden = why === null;
    compareNote.textContent = why ?? "";
    const stem = `${latest.results.bench}-${runs.length}`;
    setDownload(byId("download-results"), latest.resultsJson, `${stem}.results.json`, "application/json");
    setDownload(byId("download-trace"), latest.trace, `${stem}.trace.json`, "application/json");
    setDownload(byId("download-oplog"), latest.opLog, `${stem}.oplog.jsonl`, "application/x-ndjson");
  };
  compareSelect.addEventListener("change", () => void showResults());
  // A click on a line of the source view ("Time by kernel line") puts the bench editor's cursor
  // there, when the line is of the file the editor holds.
  resultsElement.addEventListener("click", (event) => {
    const at = sourceLineAt(event.target);
    if (at !== null && at.file === main) goToLine(benchEditor, at.line);
  });
  byId("pin").addEventListener("click", () => {
    pinned = runs[runs.length - 1] ?? null;
    fillCompare();
    compareSelect.value = "pinned";
    void showResults();
  });

  async function runBench(): Promise<RunOutcome | null> {
    // One run at a time: Run (the button, Ctrl/Cmd+Enter) while one is under way does nothing;
    // Cancel (Esc) stops it first.
    if (document.body.dataset.runState === "running") return null;
    clearError();
    let params: Record<string, string>;
    try {
      params = parseParams(paramsInput.value);
    } catch (error) {
      showError({
        code: isKbError(error) ? error.code : "CLI_USAGE",
        message: error instanceof Error ? error.message : String(error),
        location: null,
      });
      setState("error");
      return null;
    }
    const maxEvents = Number(maxEventsInput.value);
    const maxSimTimeNs = Number(maxSimTimeInput.value);
    const benchText = benchEditor.state.doc.toString();
    const topologyText = topologyEditor.state.doc.toString();
    const topology = { name: topologyName, text: topologyText };
    setState("running");
    const startedAt = performance.now();
    ticker.start();
    // The results views load while the bench runs.
    const views = import("./results-view.js");
    let outcome: RunOutcome;
    let files: Record<string, string> = {};
    try {
      files = { ...(await loadImportable(main)), [main]: benchText };
      outcome = await client.run(
        {
          files,
          main,
          topology,
          params,
          verify: verifyInput.checked,
          limits: {
            ...(maxEventsInput.value !== "" && maxEvents > 0 ? { maxEvents } : {}),
            ...(maxSimTimeInput.value !== "" && maxSimTimeNs > 0 ? { maxSimTimeNs } : {}),
          },
          trace: true,
          opLog: true,
        },
        (message) => ticker.show(message),
      );
    } finally {
      ticker.stop();
    }
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(2);
    if (outcome.kind === "cancelled") {
      progress.textContent = `Cancelled after ${seconds} s.`;
      markStale("the last run was cancelled");
      setState("cancelled");
      return outcome;
    }
    if (outcome.kind === "error") {
      progress.textContent = `Failed after ${seconds} s: ${outcome.message.code}.`;
      markStale(`the last run failed (${outcome.message.code})`);
      showError(outcome.message);
      setState("error");
      return outcome;
    }
    const done = outcome.message;
    runCount++;
    runs.push({
      label: `run ${runCount} · ${done.results.bench}`,
      results: done.results,
      resultsJson: done.resultsJson,
      trace: done.trace,
      opLog: done.opLog,
      topology,
      sources: files,
    });
    if (runs.length > KEPT_RUNS) runs.splice(0, runs.length - KEPT_RUNS);
    markStale(null);
    const verdict = verifyInput.checked
      ? done.passed
        ? " · verification PASS"
        : " · verification FAIL"
      : "";
    progress.textContent = doneText(done.results, seconds, verdict);
    byId("run-summary").textContent = runs[runs.length - 1]?.label ?? "";
    byId("run-bar").hidden = false;
    await views;
    await showResults();
    document.body.dataset.simTimeNs = String(done.results.simTimeNs);
    setState("done");
    return outcome;
  }

  const cancel = () => client.cancel();
  runButton.addEventListener("click", () => void run());
  cancelButton.addEventListener("click", cancel);

  // Share.
  const shareNote = byId("share-note");
  const handle: PlaygroundHandle = {
    run,
    cancel,
    get runs() {
      return runs;
    },
    shareUrl: null,
    get results() {
      return resultsView;
    },
    get compared() {
      return compared()?.label ?? null;
    },
    editors: { bench: benchEditor, topology: topologyEditor },
  };
  byId("share").addEventListener("click", async () => {
    const topologyText = topologyEditor.state.doc.toString();
    const shared: SharedRun = {
      main,
      bench: benchEditor.state.doc.toString(),
      topology:
        topologyText === topologyReference && topologyReference !== ""
          ? { ref: topologyName }
          : { name: topologyName, text: topologyText },
      params: paramsInput.value,
      verify: verifyInput.checked,
      limits: { maxEvents: maxEventsInput.value, maxSimTimeNs: maxSimTimeInput.value },
    };
    const url = `${location.href.replace(/#.*$/, "")}${await encodeShared(shared)}`;
    handle.shareUrl = url;
    history.replaceState(null, "", url);
    try {
      await navigator.clipboard.writeText(url);
      shareNote.textContent = `Link copied (${count(url.length)} characters).`;
    } catch {
      shareNote.textContent = "The address bar holds the link (the clipboard was not available).";
    }
  });

  // Help and page-wide shortcuts.
  const help = byId("help");
  const helpButton = byId<HTMLButtonElement>("help-button");
  const toggleHelp = (show = help.hidden) => {
    help.hidden = !show;
    helpButton.setAttribute("aria-expanded", String(show));
  };
  helpButton.addEventListener("click", () => toggleHelp());
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      void run();
    } else if (event.key === "Escape") {
      if (client.running) cancel();
      else toggleHelp(false);
    } else if (
      event.key === "?" &&
      !(event.target instanceof HTMLElement && event.target.closest(".cm-editor, input"))
    ) {
      toggleHelp();
    }
  });

  // The first example, or the run a shared link carries (run at once). A link pasted into this
  // tab's address bar later changes only the fragment, which reloads nothing: hashchange opens it.
  const readShared = async (hash: string, fallback: string): Promise<SharedRun | null> => {
    try {
      return await decodeShared(hash);
    } catch (error) {
      showError({
        code: "SHARE",
        message: `This link's run cannot be read: ${error instanceof Error ? error.message : String(error)}. ${fallback}`,
        location: null,
      });
      return null;
    }
  };
  const openShared = async (shared: SharedRun) => {
    await Promise.all([
      openBench(shared.main, shared.bench, shared.params),
      "ref" in shared.topology
        ? openTopology(shared.topology.ref)
        : openTopology(shared.topology.name, shared.topology.text),
    ]);
    verifyInput.checked = shared.verify;
    maxEventsInput.value = shared.limits.maxEvents;
    maxSimTimeInput.value = shared.limits.maxSimTimeNs;
  };
  const shared = await readShared(location.hash, "The default example is open instead.");
  if (shared === null) await Promise.all([openBench(main), openTopology(topologyName)]);
  else await openShared(shared);
  window.addEventListener("hashchange", async () => {
    const next = await readShared(location.hash, "The editors are unchanged.");
    if (next === null) return;
    cancel();
    await openShared(next);
    void run();
  });
  window.kbPlayground = handle;
  document.body.dataset.ready = "true";
  if (shared !== null) void run();
  return handle;
}
