/// <reference lib="dom" />
import { type Extension, Prec, StateEffect, StateField } from "@codemirror/state";
import { Decoration, type DecorationSet, keymap, WidgetType } from "@codemirror/view";
import { basicSetup, EditorView } from "codemirror";

// The two editors (bench, topology) and the marker of a run's error at its line: a highlighted
// line with the message under it, until the text is edited (the type checker's and topology
// checker's own markers are the editor extensions of src/editor/).

/** Where a run's error points in an editor: 1-based line and column. */
export interface RunErrorMark {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

const setRunError = StateEffect.define<RunErrorMark | null>();

class MessageWidget extends WidgetType {
  constructor(private readonly message: string) {
    super();
  }
  override eq(other: MessageWidget): boolean {
    return other.message === this.message;
  }
  toDOM(): HTMLElement {
    const box = document.createElement("div");
    box.className = "cm-run-error-message";
    box.textContent = this.message;
    return box;
  }
}

const runErrorField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, transaction) {
    let next = transaction.docChanged ? Decoration.none : marks;
    for (const effect of transaction.effects) {
      if (!effect.is(setRunError)) continue;
      if (effect.value === null) {
        next = Decoration.none;
        continue;
      }
      const doc = transaction.state.doc;
      const line = doc.line(Math.min(Math.max(1, effect.value.line), doc.lines));
      next = Decoration.set([
        Decoration.line({ attributes: { class: "cm-run-error" } }).range(line.from),
        Decoration.widget({ widget: new MessageWidget(effect.value.message), block: true, side: 1 }).range(
          line.to,
        ),
      ]);
    }
    return next;
  },
  provide: (field) => EditorView.decorations.from(field),
});

/** Options of {@link createEditor}. */
export interface EditorOptions {
  readonly parent: HTMLElement;
  readonly text: string;
  /** Language support (src/editor/'s extensions). */
  readonly language: Extension;
  /** Ctrl/Cmd+Enter. */
  readonly onRun: () => void;
  /** Labels the editor for screen readers and tests. */
  readonly label: string;
}

/** A CodeMirror editor with the run shortcut and the run-error marker. */
export function createEditor(options: EditorOptions): EditorView {
  return new EditorView({
    parent: options.parent,
    doc: options.text,
    extensions: [
      Prec.highest(
        keymap.of([
          {
            key: "Mod-Enter",
            run: () => {
              options.onRun();
              return true;
            },
          },
        ]),
      ),
      basicSetup,
      options.language,
      runErrorField,
      EditorView.contentAttributes.of({ "aria-label": options.label }),
    ],
  });
}

/** Replaces the editor's text (a new example, a shared link). */
export function setText(view: EditorView, text: string): void {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
}

/** Marks `mark`'s line in `view` (null clears), scrolls it into view and, with `focus`, puts the cursor there. */
export function markRunError(view: EditorView, mark: RunErrorMark | null, focus = false): void {
  if (mark === null) {
    view.dispatch({ effects: setRunError.of(null) });
    return;
  }
  const doc = view.state.doc;
  const line = doc.line(Math.min(Math.max(1, mark.line), doc.lines));
  const at = Math.min(line.to, line.from + Math.max(0, mark.column - 1));
  view.dispatch({
    effects: [setRunError.of(mark), EditorView.scrollIntoView(at, { y: "center" })],
    ...(focus ? { selection: { anchor: at } } : {}),
  });
  if (focus) view.focus();
}

/** Puts the cursor at the start of line `line` of `view` (clamped to its lines), scrolled to the middle, and focuses it. */
export function goToLine(view: EditorView, line: number): void {
  const doc = view.state.doc;
  const at = doc.line(Math.min(Math.max(1, line), doc.lines)).from;
  view.dispatch({ selection: { anchor: at }, effects: EditorView.scrollIntoView(at, { y: "center" }) });
  view.focus();
}
