import { resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { KbError } from "@kb/errors";
import type * as Ts from "typescript";
import { BENCH_COMPILER_OPTIONS, isBenchPackage } from "../bench-imports.js";

// checkBench: a bench and the files it imports, type-checked with the @kb declarations, as the
// playground's editor checks them (the same options, the same importable packages).

/** A problem TypeScript found, with its place. */
export interface BenchDiagnostic {
  /** The absolute path of the file; undefined for a problem of no file (a bad option). */
  readonly file: string | undefined;
  /** 1-based line and column (UTF-16 code units) of its start; 0 when there is no file. */
  readonly line: number;
  readonly col: number;
  readonly category: "error" | "warning" | "suggestion" | "message";
  /** TypeScript's error number (2339: property does not exist...). */
  readonly code: number;
  /** TypeScript's message, chained messages on their own indented lines. */
  readonly message: string;
}

/** What {@link checkBench} found. */
export interface BenchCheckResult {
  /** In file order, then position. Empty when the files type-check clean. */
  readonly diagnostics: readonly BenchDiagnostic[];
  /** The files checked: the benches given and the source files they import (absolute paths). */
  readonly files: readonly string[];
}

/** Options of {@link checkBench}. */
export interface CheckBenchOptions {
  /**
   * A file (path or `file:` URL) of the program that runs the bench: the bench's bare imports of
   * `BENCH_PACKAGES` resolve from there, as the program hands the bench its own copies
   * (`kb run` does). Default: this package's own file, which finds them where @kb/runtime is
   * installed.
   */
  readonly resolveFrom?: string;
}

/**
 * Type-checks bench files and the files they import with the @kb declarations (strict, the
 * options of `BENCH_COMPILER_OPTIONS`), as the playground's editor does. The declarations are
 * found by module resolution from `resolveFrom`, so this works in a clone (after a build) and in
 * an installed kb alike. Loads TypeScript when called.
 *
 * Throws `RUNTIME_INVALID` when a file does not exist or is not TypeScript, or when the @kb
 * declarations cannot be found (a clone not built yet).
 */
export async function checkBench(
  files: readonly string[],
  options: CheckBenchOptions = {},
): Promise<BenchCheckResult> {
  const roots = files.map((file) => resolve(file));
  const script = roots.find((root) => !/\.[cm]?ts$/.test(root) || root.endsWith(".d.ts"));
  if (script !== undefined) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${script} is JavaScript: kb check type-checks TypeScript bench files (.ts, .mts, .cts); run a JavaScript bench without the check.`,
    );
  }
  const ts = (await import("typescript")).default;
  const converted = ts.convertCompilerOptionsFromJson(BENCH_COMPILER_OPTIONS, "/");
  const compilerOptions = converted.options;
  const host = ts.createCompilerHost(compilerOptions, true);
  const getSourceFile = host.getSourceFile.bind(host);
  // Declarations (the lib files, @kb's and zod's) do not change while kb runs: parsed once.
  host.getSourceFile = (fileName, language, onError, shouldCreate) => {
    if (!fileName.endsWith(".d.ts")) return getSourceFile(fileName, language, onError, shouldCreate);
    let source = parsedDeclarations.get(fileName);
    if (source === undefined) {
      source = getSourceFile(fileName, language, onError, shouldCreate);
      if (source !== undefined) parsedDeclarations.set(fileName, source);
    }
    return source;
  };
  for (const root of roots) {
    if (!host.fileExists(root)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `bench file ${root} not found; pass the path of a .ts bench file.`,
        {
          context: { file: root },
        },
      );
    }
  }
  const anchor = anchorFile(options.resolveFrom);
  const cache = ts.createModuleResolutionCache(host.getCurrentDirectory(), (name) => name, compilerOptions);
  const resolveName = (name: string, containingFile: string) =>
    ts.resolveModuleName(name, containingFile, compilerOptions, host, cache);
  // kb's own packages resolve from the program that runs the bench, not from the bench's folder
  // (which may have no node_modules at all): one copy of each, the one the run uses.
  const missing = new Set<string>();
  host.resolveModuleNameLiterals = (literals, containingFile) =>
    literals.map((literal) => {
      if (!isBenchPackage(literal.text)) return resolveName(literal.text, containingFile);
      const resolved = resolveName(literal.text, anchor);
      if (resolved.resolvedModule === undefined) missing.add(literal.text);
      return resolved;
    });
  const program = ts.createProgram({ rootNames: roots, options: compilerOptions, host });
  const found = ts.getPreEmitDiagnostics(program);
  if (missing.size > 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `kb check: the declarations of ${[...missing].sort().join(", ")} were not found from ${anchor}. In a clone of kernbench-ts, build the packages first (npx -y pnpm@10 build); otherwise reinstall kb.`,
      { context: { file: anchor } },
    );
  }
  const diagnostics = found
    .map((diagnostic) => benchDiagnostic(ts, diagnostic))
    .sort(
      (a, b) =>
        compareText(a.file ?? "", b.file ?? "") || a.line - b.line || a.col - b.col || a.code - b.code,
    );
  const checked = program
    .getSourceFiles()
    .filter(
      (source) =>
        !source.isDeclarationFile &&
        !program.isSourceFileDefaultLibrary(source) &&
        !program.isSourceFileFromExternalLibrary(source),
    )
    .map((source) => resolve(source.fileName));
  return { diagnostics, files: checked };
}

/** Declaration files parsed by earlier checks in this process, by path. */
const parsedDeclarations = new Map<string, Ts.SourceFile>();

/** The file kb's packages are resolved from: `resolveFrom`, or this module's own file. */
function anchorFile(resolveFrom: string | undefined): string {
  if (resolveFrom === undefined) return fileURLToPath(import.meta.url);
  const path = resolveFrom.startsWith("file:") ? fileURLToPath(resolveFrom) : resolve(resolveFrom);
  // TypeScript resolves from the containing file's folder: a folder given gets a file inside it.
  return path.endsWith(sep) ? `${path}index.ts` : path;
}

function benchDiagnostic(ts: typeof Ts, diagnostic: Ts.Diagnostic): BenchDiagnostic {
  const source = diagnostic.file;
  const position =
    source === undefined ? undefined : source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
  return {
    file: source === undefined ? undefined : resolve(source.fileName),
    line: position === undefined ? 0 : position.line + 1,
    col: position === undefined ? 0 : position.character + 1,
    category: CATEGORIES[diagnostic.category] ?? "error",
    code: diagnostic.code,
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"),
  };
}

// ts.DiagnosticCategory: Warning 0, Error 1, Suggestion 2, Message 3.
const CATEGORIES: readonly BenchDiagnostic["category"][] = ["warning", "error", "suggestion", "message"];

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
