import { importCandidates } from "@kb/runtime";
import { transform } from "sucrase";
import type { SourceLocation } from "../protocol.js";
import { BUNDLED_MODULES } from "./bundled-modules.js";

// The bench's files as CommonJS modules: each virtual file is transpiled by sucrase (TypeScript
// stripped, imports made `require` calls, line numbers kept) and evaluated with
// `//# sourceURL=<virtual path>`, so the stack frames of its code name the file and line the
// editor shows, and tl's call sites (`tl.load at benches/vector-add.ts:21:9`) point there.

/** A problem with the files themselves (syntax, an import of nothing), located in one of them. */
export class SourceError extends Error {
  override readonly name = "SourceError";
  constructor(
    message: string,
    readonly location: SourceLocation,
  ) {
    super(message);
  }
}

/** A module of the virtual files: its CommonJS `exports` once evaluated. */
interface VirtualModule {
  exports: Record<string, unknown>;
}

type CompiledModule = (
  exports: Record<string, unknown>,
  require: (specifier: string) => unknown,
  module: VirtualModule,
) => void;

/** `require('x')` as sucrase writes it, and `require("x")` as a user may. */
const REQUIRE = /\brequire\((['"])([^'"]+)\1\)/g;

/**
 * Transpiles every file of `files` and evaluates `main` and what it imports; returns `main`'s
 * exports. Every file is transpiled and its imports resolved before any runs, so a syntax error
 * or an unknown import anywhere is reported without running anything.
 *
 * Throws {@link SourceError} for a syntax error (at sucrase's line and column) and an import
 * that resolves to no file and no bundled module (at the import's line, naming the modules there
 * are), and what evaluating a module throws.
 */
export function evaluateFiles(
  files: Readonly<Record<string, string>>,
  main: string,
): Record<string, unknown> {
  if (files[main] === undefined) {
    throw new SourceError(`the bench ${main} is not among the files (${Object.keys(files).join(", ")}).`, {
      file: main,
      line: 1,
      column: 1,
    });
  }
  const compiled = new Map<string, { code: string; imports: Map<string, string | null> }>();
  for (const [path, source] of Object.entries(files)) {
    if (!/\.[cm]?[jt]s$/.test(path)) continue;
    const code = transpile(path, source);
    const imports = new Map<string, string | null>();
    for (const match of code.matchAll(REQUIRE)) {
      const specifier = match[2] as string;
      const resolved = resolveSpecifier(files, path, specifier);
      if (resolved === undefined) {
        throw new SourceError(
          unknownImport(files, path, specifier),
          importLocation(source, code, match.index, specifier, path),
        );
      }
      imports.set(specifier, resolved);
    }
    compiled.set(path, { code, imports });
  }
  const modules = new Map<string, VirtualModule>();
  const load = (path: string): Record<string, unknown> => {
    const loaded = modules.get(path);
    if (loaded !== undefined) return loaded.exports;
    const entry = compiled.get(path) as { code: string; imports: Map<string, string | null> };
    const module: VirtualModule = { exports: {} };
    modules.set(path, module);
    const require = (specifier: string): unknown => {
      const target = entry.imports.get(specifier);
      if (target === undefined) {
        // A computed require(...) the scan above did not see.
        const resolved = resolveSpecifier(files, path, specifier);
        if (resolved === undefined) throw new Error(unknownImport(files, path, specifier));
        return resolved === null ? BUNDLED_MODULES[specifier] : load(resolved);
      }
      return target === null ? BUNDLED_MODULES[specifier] : load(target);
    };
    compile(path, entry.code)(module.exports, require, module);
    return module.exports;
  };
  return load(main);
}

/** TypeScript to CommonJS, lines kept; a syntax error as a located {@link SourceError}. */
function transpile(path: string, source: string): string {
  try {
    return transform(source, { transforms: ["typescript", "imports"], filePath: path }).code;
  } catch (error) {
    const loc = (error as { loc?: { line: number; column: number } }).loc;
    // Sucrase says `Error transforming <path>: Unexpected token (76:7)`: the place is given apart.
    const message = (error as Error).message
      .replace(/ \(\d+:\d+\)$/, "")
      .replace(/^Error transforming .*?: /, "");
    const at = loc === undefined ? "" : `:${loc.line}:${loc.column}`;
    throw new SourceError(`${path}${at}: syntax error: ${message}`, {
      file: path,
      line: loc?.line ?? 1,
      column: loc?.column ?? 1,
    });
  }
}

/**
 * The module function of a transpiled file. The wrapper opens on the file's first line, so every
 * line of the evaluated text is the same line of the file; `sourceURL` names it in stack frames.
 */
function compile(path: string, code: string): CompiledModule {
  const text = `(function (exports, require, module) {${code}\n})\n//# sourceURL=${path}`;
  // An indirect eval (through a variable) runs in the global scope, not this module's.
  // biome-ignore lint/security/noGlobalEval: the playground runs the user's own code, as a REPL does.
  const globalEval = globalThis.eval;
  return globalEval(text) as CompiledModule;
}

/**
 * What a specifier imports: a virtual file's path, null for a bundled module, undefined for
 * nothing. A relative path resolves as TypeScript does (`importCandidates` of @kb/runtime, the
 * rules the manifest's bench digest follows too): `./lib/params.js` is `lib/params.ts` when that
 * is the file there is, then extensions and `/index` files are tried.
 */
function resolveSpecifier(
  files: Readonly<Record<string, string>>,
  from: string,
  specifier: string,
): string | null | undefined {
  if (!specifier.startsWith(".")) return specifier in BUNDLED_MODULES ? null : undefined;
  return importCandidates(from, specifier).find((candidate) => files[candidate] !== undefined);
}

function unknownImport(files: Readonly<Record<string, string>>, from: string, specifier: string): string {
  const others = Object.keys(files).filter((path) => path !== from);
  return specifier.startsWith(".")
    ? `${from} imports "${specifier}", which is not one of the playground's files (${others.length === 0 ? "it has no other" : others.join(", ")}). Import a file by its relative path (./lib/params.js for lib/params.ts).`
    : `${from} imports "${specifier}", which the playground does not have. It has ${Object.keys(BUNDLED_MODULES).join(", ")}; a bench's other code goes in files imported by a relative path.`;
}

/**
 * Where `specifier` is imported in the source: the line of the `require` sucrase wrote (lines
 * are kept), at the specifier's column in the source's line when it is there.
 */
function importLocation(
  source: string,
  code: string,
  index: number,
  specifier: string,
  file: string,
): SourceLocation {
  const line = code.slice(0, index).split("\n").length;
  const text = source.split("\n")[line - 1] ?? "";
  const at = Math.max(text.indexOf(`"${specifier}"`), text.indexOf(`'${specifier}'`));
  return { file, line, column: at >= 0 ? at + 1 : 1 };
}
