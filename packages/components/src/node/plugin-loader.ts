import { existsSync, realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, extname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isKbError, KbError } from "@kb/errors";
import { readUserText } from "@kb/errors/node";
import * as spec from "@kb/spec";
import { type Topology, yamlLocator } from "@kb/topology";
import { readTopologyText } from "@kb/topology/node";
import * as zod from "zod";
import { checkPlugin, type KbPlugin, type PluginCodeSource } from "../define.js";
import * as components from "../index.js";

// ---------------------------------------------------------------------------------------------
// Importing JavaScript and TypeScript sources (plug-ins given by path, `kb run`'s bench files)

/** Options of {@link importSourceFile}. */
export interface ImportSourceOptions {
  /**
   * Module objects the file gets for these specifiers instead of resolving them, and so do the
   * files it imports: one copy shared with the caller (its classes, its `KbError`).
   */
  readonly shared?: Readonly<Record<string, unknown>>;
  /**
   * Packages (by name) the file resolves itself from its own `node_modules` that are imported
   * natively, as they are, rather than transformed.
   */
  readonly native?: readonly string[];
  /**
   * Applied to each module's JavaScript as jiti made it (the text node runs), with its file: the
   * file and those it imports. `name` (the transform and its version) keeps its output in a cache
   * of its own (a change of `apply` needs a new name).
   */
  readonly transform?: SourceTransform;
}

/** A transform of {@link ImportSourceOptions}. */
export interface SourceTransform {
  readonly name: string;
  readonly apply: (code: string, filename: string) => string;
}

/**
 * Imports a JavaScript or TypeScript module file (`.ts`, `.mts`, `.cts`, `.js`, `.mjs`, `.cjs`)
 * through jiti, with no build step and no cache between calls (an edited file is read again),
 * and returns its exports. What `kb run` loads bench files with, and what plug-ins given by path
 * are loaded with.
 *
 * **Gotcha**: jiti's interop answers `.default` even for a module without a default export; ask
 * `Object.keys(module).includes("default")` to know whether there is one.
 */
export async function importSourceFile(
  file: string,
  options: ImportSourceOptions = {},
): Promise<Record<string, unknown>> {
  // Imported here: jiti brings a TypeScript transform that only these loads need.
  const { createJiti } = await import("jiti");
  const transform = options.transform;
  const plain = transform === undefined ? undefined : createJiti(import.meta.url);
  const jiti = createJiti(import.meta.url, {
    virtualModules: { ...options.shared },
    nativeModules: [...(options.native ?? [])],
    moduleCache: false,
    ...(transform === undefined || plain === undefined
      ? {}
      : {
          fsCache: transformCache(transform.name),
          transform: (opts) => ({ code: transform.apply(plain.transform(opts), opts.filename ?? "") }),
        }),
  });
  return (await jiti.import(file)) as Record<string, unknown>;
}

/** Where jiti keeps what `transform` made: beside its own cache (node_modules/.cache), else in the temporary directory. */
function transformCache(name: string): string {
  const modules = resolve(dirname(fileURLToPath(import.meta.url)), "../node_modules");
  return existsSync(modules) ? join(modules, ".cache", `jiti-${name}`) : join(tmpdir(), `jiti-${name}`);
}

/**
 * The modules a plug-in loaded from source gets from kernbench when its own folder does not
 * provide them (or provides the very same package): one copy of `@kb/spec`, `@kb/components` and
 * `zod`, so a lone `my-hbm.ts` in any folder loads, and its components are the classes the
 * machine knows.
 */
const KERNBENCH_MODULES: Readonly<Record<string, unknown>> = {
  "@kb/spec": spec,
  "@kb/components": components,
  zod,
};

/** The real directories of kernbench's own `@kb/components` and `zod` packages, by name. */
let kernbenchPackages: ReadonlyMap<string, string | undefined> | undefined;

function kernbenchPackage(name: string): string | undefined {
  if (kernbenchPackages === undefined) {
    // This file sits in src/ or dist/ of @kb/components, next to its package.json.
    let own: string | undefined;
    for (const dir of upwards(dirname(fileURLToPath(import.meta.url)))) {
      if (existsSync(join(dir, "package.json"))) {
        own = realpathSync(dir);
        break;
      }
    }
    const beside = (name: string) => {
      const dir = own === undefined ? undefined : findPackage(name, [own]);
      return dir === undefined ? undefined : realpathSync(dir);
    };
    kernbenchPackages = new Map([
      ["@kb/spec", beside("@kb/spec")],
      ["@kb/components", own],
      ["zod", beside("zod")],
    ]);
  }
  return kernbenchPackages.get(name);
}

/**
 * How a plug-in source file gets `@kb/components` and `zod`: from its own folder (its nearest
 * `node_modules`) when that has them, else from kernbench. When its folder has the same package
 * kernbench uses (a workspace link, a shared install), the module kernbench already loaded is
 * handed over: one copy.
 */
function modulesFor(file: string, extra: SharedModules): ImportSourceOptions {
  const shared: Record<string, unknown> = {};
  const native: string[] = [];
  for (const [name, module] of Object.entries(KERNBENCH_MODULES)) {
    const theirs = findPackage(name, [dirname(file)]);
    if (theirs === undefined || realpathSync(theirs) === kernbenchPackage(name)) shared[name] = module;
    else native.push(name);
  }
  // The caller's (kb hands @kb/builtins): used when the plug-in's folder does not provide them.
  for (const [name, module] of Object.entries(extra)) {
    if (findPackage(name, [dirname(file)]) === undefined) shared[name] = module;
    else native.push(name);
  }
  return { shared, native };
}

/** Modules by package name that a plug-in file gets from its caller when its folder lacks them. */
export type SharedModules = Readonly<Record<string, unknown>>;

/**
 * Whether the plug-in's peers resolve from the folder of `file`: `zod`, and the contracts it is
 * written on, `@kb/spec` (a plug-in on the contracts alone) or `@kb/components` (one on the
 * framework).
 */
function providesKernbenchModules(file: string): boolean {
  const has = (name: string) => findPackage(name, [dirname(file)]) !== undefined;
  return has("zod") && (has("@kb/spec") || has("@kb/components"));
}

// ---------------------------------------------------------------------------------------------
// Plug-ins

/** Options of {@link loadPlugins}. */
export interface LoadPluginsOptions {
  /**
   * The directory to resolve package names from, as Node does: `node_modules/<name>` in it and in
   * every parent up to the filesystem root. Several directories are searched in order (the first
   * that has the package wins).
   */
  readonly from: string | readonly string[];
  /** The directory a relative plug-in path is resolved from (default: the first of `from`). */
  readonly relativeTo?: string;
  /**
   * Modules a plug-in file gets by package name when its own folder does not provide them,
   * besides kernbench's `@kb/components` and `zod` (kb hands `{ "@kb/builtins": ... }`, so a
   * plug-in that wraps a built-in model loads from any folder).
   */
  readonly shared?: SharedModules;
}

/**
 * Imports plug-ins (the `plugins:` of a topology, `kb --plugin`) and returns their default
 * exports, checked. An entry is either
 *
 * - an npm package name, found under `node_modules/<name>` from `options.from` upwards and
 *   imported from its entry: `exports["."]` (a string, or its `import`/`node`/`default`
 *   condition), else `main`; its `meta.name` must be the package name;
 * - or a path (it starts with `./`, `../` or `/`, or is a Windows absolute path), resolved from
 *   `options.relativeTo`: a package directory (its entry as above), or a `.ts`, `.mts`, `.js` or
 *   `.mjs` file (`./my-hbm` finds `./my-hbm.ts`); its `meta.name` is free.
 *
 * A package whose entry file is missing but that has `src/index.ts` (a workspace package not
 * built) is loaded from that source. Plug-ins given by path and TypeScript sources are loaded
 * with {@link importSourceFile}; `@kb/components` and `zod` come from the plug-in's own folder,
 * else from kernbench. An entry listed twice is loaded once; the result follows the order of
 * first appearance. Impls are qualified by `meta.name`: `"<meta.name>:<impl>"`.
 *
 * ```ts
 * const plugins = await loadPlugins(["kb-plugin-systolic-gemm", "./my-hbm.ts"], { from: process.cwd() });
 * const machine = buildMachine(graph, { plugins });
 * ```
 *
 * Throws `COMPONENT_PLUGIN_NOT_FOUND` when a package is not installed (naming the directories
 * searched and the `npm install` to run), a path does not exist (naming the absolute path and
 * the files tried) or a module fails to import (with the cause), and
 * `COMPONENT_INVALID_DEFINITION` when its default export is not a plug-in or a package's
 * `meta.name` is not its name.
 */
export async function loadPlugins(
  entries: readonly string[],
  options: LoadPluginsOptions,
): Promise<KbPlugin[]> {
  const from = typeof options.from === "string" ? [options.from] : [...options.from];
  const relativeTo = options.relativeTo ?? from[0] ?? process.cwd();
  const loads = new Map<string, Promise<KbPlugin>>();
  for (const entry of entries) {
    const key = pluginKey(entry, relativeTo);
    if (!loads.has(key)) loads.set(key, loadPlugin(entry, from, relativeTo, options.shared ?? {}));
  }
  return Promise.all(loads.values());
}

/**
 * The plug-ins a topology file needs: its `plugins:` plus `extra` (the CLI's `--plugin`), merged
 * without duplicates. Package names are resolved from the file's directory first, then the
 * current directory; a path in the file from the file's directory, a path in `extra` from the
 * current directory.
 *
 * Throws what {@link loadPlugins} throws; for an entry of the file, the error is located at its
 * entry of `plugins:` (`file:line:col`).
 */
export async function loadTopologyPlugins(
  file: string,
  topology: Pick<Topology, "plugins">,
  extra: readonly string[] = [],
  shared: SharedModules = {},
): Promise<KbPlugin[]> {
  const directory = dirname(resolve(file));
  const cwd = process.cwd();
  const from = [...new Set([directory, resolve(cwd)])];
  const loads = new Map<string, Promise<KbPlugin>>();
  topology.plugins.forEach((entry, index) => {
    const key = pluginKey(entry, directory);
    if (loads.has(key)) return;
    loads.set(
      key,
      loadPlugin(entry, from, directory, shared).catch((error: unknown) => {
        if (!isKbError(error)) throw error;
        const place = yamlLocator(readTopologyText(file))(["plugins", index]);
        throw new KbError(error.code, error.detail, {
          context: { file, line: place.line, col: place.col },
          cause: error.cause ?? error,
        });
      }),
    );
  });
  for (const entry of extra) {
    const key = pluginKey(entry, cwd);
    if (!loads.has(key)) loads.set(key, loadPlugin(entry, from, cwd, shared));
  }
  return Promise.all(loads.values());
}

/** Whether a `plugins:` entry is a path (else an npm package name). */
export function isPluginPath(entry: string): boolean {
  return /^(?:\.\.?(?:[/\\]|$)|[/\\]|[A-Za-z]:[/\\])/.test(entry);
}

/**
 * What makes two entries the same plug-in: the package name, or the real path of the file or
 * directory a path finds (`./my-hbm` and `./my-hbm.ts` are one plug-in).
 */
function pluginKey(entry: string, relativeTo: string): string {
  if (!isPluginPath(entry)) return entry;
  const path = resolve(relativeTo, entry);
  const found = candidatesOf(path).find((candidate) => existsSync(candidate));
  return found === undefined ? path : realpathSync(found);
}

/** The files a plug-in path may name: itself, and with each extension when it has none. */
function candidatesOf(path: string): string[] {
  return LOADABLE.has(extname(path)) ? [path] : [path, ...PLUGIN_EXTENSIONS.map((ext) => path + ext)];
}

// npm's rules for a package name, scoped or not (lower case, URL-safe).
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** The file extensions a plug-in file may have; a path without one is tried with each. */
const PLUGIN_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"];
const TYPESCRIPT = new Set([".ts", ".mts", ".cts"]);
const LOADABLE = new Set([...PLUGIN_EXTENSIONS, ".cts", ".cjs"]);

async function loadPlugin(
  entry: string,
  from: readonly string[],
  relativeTo: string,
  shared: SharedModules,
): Promise<KbPlugin> {
  const plugin = await importPluginEntry(entry, from, relativeTo, shared);
  const codeSource = pluginCodeSource(entry, from, relativeTo);
  return codeSource === null ? plugin : { ...plugin, codeSource };
}

/**
 * Where the code a `plugins:` entry loads lies (see {@link KbPlugin.codeSource}), resolved as
 * {@link loadPlugins} resolves it but without importing it: a package's folder, a path's folder
 * (with package.json) or file; `null` when the entry finds nothing. Real paths.
 */
export function pluginCodeSource(
  entry: string,
  from: readonly string[],
  relativeTo: string,
): PluginCodeSource | null {
  if (!isPluginPath(entry)) {
    const folder = PACKAGE_NAME.test(entry) ? findPackage(entry, from) : undefined;
    return folder === undefined ? null : { folder: realpathSync(folder) };
  }
  const found = candidatesOf(resolve(relativeTo, entry)).find((candidate) => existsSync(candidate));
  if (found === undefined) return null;
  const real = realpathSync(found);
  if (!statSync(real).isDirectory()) return { file: real };
  return existsSync(join(real, "package.json")) ? { folder: real } : null;
}

async function importPluginEntry(
  entry: string,
  from: readonly string[],
  relativeTo: string,
  shared: SharedModules,
): Promise<KbPlugin> {
  if (isPluginPath(entry)) return loadPluginPath(entry, resolve(relativeTo, entry), relativeTo, shared);
  const name = entry;
  if (!PACKAGE_NAME.test(name)) {
    const colon = name.lastIndexOf(":");
    const hint =
      colon > 0
        ? ` plugins: lists packages; write "${name.slice(0, colon)}" there and "${name}" in an impl:.`
        : " Plug-ins are npm packages such as kb-plugin-systolic-gemm or @acme/kb-plugin-banked-hbm, or paths such as ./my-hbm.ts.";
    throw new KbError("COMPONENT_PLUGIN_NOT_FOUND", `"${name}" is not an npm package name.${hint}`);
  }
  const directory = findPackage(name, from);
  if (directory === undefined) {
    const searched = from.map((dir) => resolve(dir)).join(" and ");
    throw new KbError(
      "COMPONENT_PLUGIN_NOT_FOUND",
      `plug-in package "${name}" is not installed: no node_modules/${name} in ${searched} or any parent directory. ` +
        `Install it where the topology is (npm install ${name}), fix the name, or give its path (./...).`,
    );
  }
  let file: string;
  try {
    file = realpathSync(entryOf(directory));
  } catch (error) {
    if (isKbError(error)) throw error;
    throw new KbError(
      "COMPONENT_PLUGIN_NOT_FOUND",
      `cannot import plug-in package "${name}" from ${directory}: ${(error as Error).message}. ` +
        "Reinstall it (or build it, if it is a workspace package whose dist is missing).",
      { cause: error },
    );
  }
  const source = `plug-in package "${name}" (${file})`;
  // An installed package is compiled JavaScript with its dependencies beside it: imported as is.
  // One whose peers (@kb/spec or @kb/components, zod) are not installed beside it, such as a plug-in used by
  // a global kb, gets them from kernbench, as a plug-in file does.
  const native = !TYPESCRIPT.has(extname(file)) && providesKernbenchModules(file);
  const plugin = pluginOf(await importPlugin(file, source, native ? "native" : "source", shared), source);
  if (plugin.meta.name !== name) {
    throw new KbError(
      "COMPONENT_INVALID_DEFINITION",
      `${source} calls itself "${plugin.meta.name}"; meta.name must be the package name "${name}", because impls are written "${name}:<impl>".`,
    );
  }
  return plugin;
}

async function loadPluginPath(
  entry: string,
  path: string,
  relativeTo: string,
  shared: SharedModules,
): Promise<KbPlugin> {
  const tried = candidatesOf(path);
  const found = tried.find((candidate) => existsSync(candidate));
  const what = `plug-in path "${entry}"`;
  if (found === undefined) {
    throw new KbError(
      "COMPONENT_PLUGIN_NOT_FOUND",
      `${what} does not exist: resolved from ${relativeTo} to ${path}; tried ${tried.join(", ")}. ` +
        "Give a package directory (with package.json) or a .ts, .mts, .js or .mjs file; a path in plugins: is relative to the topology file, one given with --plugin to the current directory.",
    );
  }
  let file = found;
  if (statSync(found).isDirectory()) {
    if (!existsSync(join(found, "package.json"))) {
      throw new KbError(
        "COMPONENT_PLUGIN_NOT_FOUND",
        `${what} (${found}) is a directory without package.json. Give a package directory or the plug-in's .ts or .js file.`,
      );
    }
    try {
      file = entryOf(found);
    } catch (error) {
      if (isKbError(error)) throw error;
      throw new KbError(
        "COMPONENT_PLUGIN_NOT_FOUND",
        `cannot import the plug-in package in ${found} (${what}): ${(error as Error).message}. Build it (its dist is missing?) or fix its package.json.`,
        { cause: error },
      );
    }
  }
  if (!LOADABLE.has(extname(file))) {
    throw new KbError(
      "COMPONENT_PLUGIN_NOT_FOUND",
      `${what} (${file}) is not a .ts, .mts, .js or .mjs file; a plug-in is a module whose default export is definePlugin({...}).`,
    );
  }
  file = realpathSync(file);
  const source = `${what} (${file})`;
  return pluginOf(await importPlugin(file, source, "source", shared), source);
}

/** Imports a plug-in module natively (compiled JS of an installed package) or from source. */
async function importPlugin(
  file: string,
  source: string,
  how: "native" | "source",
  shared: SharedModules,
): Promise<{ exported: unknown; hasDefault: boolean }> {
  try {
    if (how === "native") {
      const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
      return { exported: module.default, hasDefault: module.default !== undefined };
    }
    const module = await importSourceFile(file, modulesFor(file, shared));
    return { exported: module.default, hasDefault: Object.keys(module).includes("default") };
  } catch (error) {
    const message = error instanceof Error ? error.message.trim() : String(error);
    throw new KbError("COMPONENT_PLUGIN_NOT_FOUND", `cannot import ${source}: ${message}`, { cause: error });
  }
}

function pluginOf(module: { exported: unknown; hasDefault: boolean }, source: string): KbPlugin {
  if (!module.hasDefault || module.exported === undefined) {
    throw new KbError(
      "COMPONENT_INVALID_DEFINITION",
      `${source} has no default export. A plug-in default-exports definePlugin({ meta: { name, version }, components: [...] }).`,
    );
  }
  return checkPlugin(module.exported, source);
}

/** `dir` and its parents, nearest first. */
function upwards(dir: string): string[] {
  const dirs: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    dirs.push(current);
    if (dirname(current) === current) return dirs;
  }
}

/** The directory of package `name` under `node_modules` of a directory of `from` or a parent. */
function findPackage(name: string, from: readonly string[]): string | undefined {
  for (const start of from) {
    for (const directory of upwards(start)) {
      const candidate = join(directory, "node_modules", name);
      if (existsSync(join(candidate, "package.json"))) return candidate;
    }
  }
  return undefined;
}

/** The largest plug-in package.json read: 1 MiB (a package.json is a few KB). */
const PACKAGE_JSON_MAX_BYTES = 2 ** 20;

/**
 * The entry file of a package: `exports["."]` (import/node/default) or `main`; when that file
 * does not exist, `src/index.ts` (a workspace package not built). Its package.json is read as a
 * user's file: `COMPONENT_PLUGIN_NOT_FOUND` for a FIFO, a device or one above 1 MiB.
 */
function entryOf(directory: string): string {
  const packageJson = readUserText(join(directory, "package.json"), {
    what: "plug-in package.json",
    maxBytes: PACKAGE_JSON_MAX_BYTES,
    code: "COMPONENT_PLUGIN_NOT_FOUND",
  });
  const json = JSON.parse(packageJson) as {
    exports?: unknown;
    main?: unknown;
  };
  const target = exportTarget(json.exports) ?? (typeof json.main === "string" ? json.main : "index.js");
  const file = join(directory, target);
  if (existsSync(file)) return file;
  const source = join(directory, "src", "index.ts");
  if (existsSync(source)) return source;
  throw new Error(`its entry file ${file} does not exist, nor does src/index.ts`);
}

function exportTarget(exports: unknown): string | undefined {
  if (exports === null || typeof exports !== "object" || Array.isArray(exports))
    return conditionTarget(exports);
  const keys = Object.keys(exports);
  // A map of subpaths ("." , "./node") or directly the conditions of ".".
  if (keys.some((key) => key.startsWith(".")))
    return conditionTarget((exports as Record<string, unknown>)["."]);
  return conditionTarget(exports);
}

function conditionTarget(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = conditionTarget(item);
      if (target !== undefined) return target;
    }
    return undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  const conditions = value as Record<string, unknown>;
  for (const condition of ["import", "node", "default"]) {
    if (condition in conditions) {
      const target = conditionTarget(conditions[condition]);
      if (target !== undefined) return target;
    }
  }
  return undefined;
}
