import { KbError } from "@kb/errors";
import { BENCH_COMPILER_OPTIONS } from "@kb/runtime";
import type * as Ts from "typescript";

// The TypeScript language service over a virtual file system: the bench's files (by the
// playground's virtual paths) and the declarations gathered at build time
// (scripts/gather-types.mjs). No DOM, no worker: ts-worker.ts runs it in a Web Worker and the
// tests run it in Node.

/** A problem TypeScript finds in a file, with its place as offsets and as line:col. */
export interface EditorDiagnostic {
  /** Offsets in the file's text (UTF-16 code units), `to` exclusive. */
  readonly from: number;
  readonly to: number;
  /** 1-based line and column of `from`. */
  readonly line: number;
  readonly col: number;
  readonly severity: "error" | "warning" | "info";
  /** TypeScript's message, chained messages on their own indented lines. */
  readonly message: string;
  /** TypeScript's error number (2339: property does not exist...). */
  readonly code: number;
}

/** One completion offered at a position. */
export interface EditorCompletionOption {
  readonly label: string;
  /** TypeScript's element kind: `method`, `property`, `function`, `const`, `keyword`... */
  readonly kind: string;
  /** TypeScript's ranking: lower sorts first. */
  readonly sortText: string;
}

/** The completions at a position: they replace the text from `from` to the position. */
export interface EditorCompletions {
  readonly from: number;
  readonly options: readonly EditorCompletionOption[];
}

/** The type and documentation of the symbol at a position. */
export interface EditorHover {
  readonly from: number;
  readonly to: number;
  /** `(method) TL.load(...): ...`, as TypeScript displays it. */
  readonly signature: string;
  /** The doc comment's text, empty when there is none. */
  readonly documentation: string;
}

/** The language service of a bench and the files it imports. */
export interface TsService {
  /**
   * Replaces the bench's files (virtual path -> text, such as `benches/vector-add.ts` and
   * `benches/lib/params.ts`); imports between them resolve as in the repository.
   */
  setFiles(files: Readonly<Record<string, string>>): void;
  /** Sets one file's text (the editor's document after an edit), adding the file if it is new. */
  updateFile(path: string, text: string): void;
  /** Syntax and type errors of a file, in order. */
  diagnostics(path: string): EditorDiagnostic[];
  /** Completions at offset `position` of a file; null when TypeScript offers none there. */
  completions(path: string, position: number): EditorCompletions | null;
  /** The signature and documentation of completion `name` at `position`, for its info panel. */
  completionDetail(path: string, position: number, name: string): EditorHover | null;
  /** The type at offset `position`; null on whitespace, keywords and the like. */
  hover(path: string, position: number): EditorHover | null;
}

/**
 * The compiler options a bench is checked with: `BENCH_COMPILER_OPTIONS` of @kb/runtime, those
 * `kb check` uses too.
 */
export function benchCompilerOptions(ts: typeof Ts): Ts.CompilerOptions {
  return ts.convertCompilerOptionsFromJson(BENCH_COMPILER_OPTIONS, "/").options;
}

/**
 * Creates the service. `types` is the map scripts/gather-types.mjs writes (`/lib/...` and
 * `/node_modules/...` paths); `ts` is the `typescript` module, passed in so that the worker
 * decides when the 3 MB compiler is loaded.
 */
export function createTsService(ts: typeof Ts, types: Readonly<Record<string, string>>): TsService {
  const user = new Map<string, { text: string; version: number }>();
  const directories = new Set<string>();
  for (const path of Object.keys(types)) addDirectories(directories, path);
  const snapshots = new Map<string, Ts.IScriptSnapshot>();

  const readFile = (path: string): string | undefined => user.get(path)?.text ?? types[path];
  const host: Ts.LanguageServiceHost = {
    getCompilationSettings: () => benchCompilerOptions(ts),
    getScriptFileNames: () => [...user.keys()],
    getScriptVersion: (path) => String(user.get(path)?.version ?? 0),
    getScriptSnapshot: (path) => {
      const entry = user.get(path);
      if (entry !== undefined) return ts.ScriptSnapshot.fromString(entry.text);
      const text = types[path];
      if (text === undefined) return undefined;
      let snapshot = snapshots.get(path);
      if (snapshot === undefined) {
        snapshot = ts.ScriptSnapshot.fromString(text);
        snapshots.set(path, snapshot);
      }
      return snapshot;
    },
    getCurrentDirectory: () => "/",
    getDefaultLibFileName: () => "/lib/lib.es2022.d.ts",
    fileExists: (path) => readFile(path) !== undefined,
    readFile,
    directoryExists: (path) => directories.has(path.replace(/\/$/, "") || "/"),
    getDirectories: (path) => {
      const prefix = path.endsWith("/") ? path : `${path}/`;
      const names = new Set<string>();
      for (const directory of directories) {
        if (directory.startsWith(prefix)) names.add(directory.slice(prefix.length).split("/")[0] as string);
      }
      return [...names];
    },
    useCaseSensitiveFileNames: () => true,
  };
  const service = ts.createLanguageService(host, ts.createDocumentRegistry(true, "/"));

  const userPath = (path: string): string => {
    const absolute = virtualPath(path);
    if (!user.has(absolute)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `the bench editor has no file ${path}; the files are ${[...user.keys()].join(", ") || "none"}. Pass it to setFiles first.`,
      );
    }
    return absolute;
  };

  return {
    setFiles(files) {
      const previous = new Map(user);
      user.clear();
      for (const [path, text] of Object.entries(files)) {
        const absolute = virtualPath(path);
        const version = (previous.get(absolute)?.version ?? 0) + 1;
        user.set(absolute, { text, version });
        addDirectories(directories, absolute);
      }
    },
    updateFile(path, text) {
      const absolute = virtualPath(path);
      const entry = user.get(absolute);
      if (entry?.text === text) return;
      user.set(absolute, { text, version: (entry?.version ?? 0) + 1 });
      addDirectories(directories, absolute);
    },
    diagnostics(path) {
      const absolute = userPath(path);
      const found = [
        ...service.getSyntacticDiagnostics(absolute),
        ...service.getSemanticDiagnostics(absolute),
      ];
      const source = service.getProgram()?.getSourceFile(absolute);
      return found
        .map((diagnostic) => editorDiagnostic(ts, diagnostic, source))
        .sort((a, b) => a.from - b.from || a.to - b.to);
    },
    completions(path, position) {
      const absolute = userPath(path);
      const info = service.getCompletionsAtPosition(absolute, position, {
        includeCompletionsWithInsertText: true,
        includeCompletionsForModuleExports: false,
      });
      if (info === undefined || info.entries.length === 0) return null;
      const text = (user.get(absolute) as { text: string }).text;
      const span = info.optionalReplacementSpan;
      let from = span === undefined ? position : span.start;
      if (span === undefined) while (from > 0 && /[\w$]/.test(text[from - 1] as string)) from--;
      return {
        from,
        options: info.entries.map((entry) => ({
          label: entry.name,
          kind: entry.kind,
          sortText: entry.sortText,
        })),
      };
    },
    completionDetail(path, position, name) {
      const absolute = userPath(path);
      const details = service.getCompletionEntryDetails(
        absolute,
        position,
        name,
        {},
        undefined,
        {},
        undefined,
      );
      if (details === undefined) return null;
      return {
        from: position,
        to: position,
        signature: ts.displayPartsToString(details.displayParts),
        documentation: ts.displayPartsToString(details.documentation),
      };
    },
    hover(path, position) {
      const absolute = userPath(path);
      const info = service.getQuickInfoAtPosition(absolute, position);
      if (info === undefined) return null;
      return {
        from: info.textSpan.start,
        to: info.textSpan.start + info.textSpan.length,
        signature: ts.displayPartsToString(info.displayParts),
        documentation: ts.displayPartsToString(info.documentation),
      };
    },
  };
}

/** `benches/x.ts` -> `/benches/x.ts`; the declarations' own trees cannot be written over. */
function virtualPath(path: string): string {
  const absolute = path.startsWith("/") ? path : `/${path}`;
  if (absolute.split("/").includes("..") || /^\/(lib|node_modules)\//.test(absolute)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `bench editor file ${path}: paths are relative to the playground's root, without "..", and outside lib/ and node_modules/ (they hold the declarations).`,
    );
  }
  return absolute;
}

function addDirectories(directories: Set<string>, path: string): void {
  let at = path.lastIndexOf("/");
  while (at > 0) {
    const directory = path.slice(0, at);
    if (directories.has(directory)) return;
    directories.add(directory);
    at = directory.lastIndexOf("/");
  }
  directories.add("/");
}

function editorDiagnostic(
  ts: typeof Ts,
  diagnostic: Ts.Diagnostic,
  source: Ts.SourceFile | undefined,
): EditorDiagnostic {
  const from = diagnostic.start ?? 0;
  const position =
    source === undefined ? { line: 0, character: 0 } : source.getLineAndCharacterOfPosition(from);
  return {
    from,
    to: from + (diagnostic.length ?? 0),
    line: position.line + 1,
    col: position.character + 1,
    severity:
      diagnostic.category === ts.DiagnosticCategory.Error
        ? "error"
        : diagnostic.category === ts.DiagnosticCategory.Warning
          ? "warning"
          : "info",
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"),
    code: diagnostic.code,
  };
}
