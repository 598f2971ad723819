import { readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as builtins from "@kb/builtins";
import * as ccl from "@kb/ccl";
import * as components from "@kb/components";
import { importSourceFile } from "@kb/components/node";
import * as dataExecutor from "@kb/data-executor";
import * as errors from "@kb/errors";
import { closest, KbError } from "@kb/errors";
import * as oplog from "@kb/oplog";
import * as runtime from "@kb/runtime";
import { type Bench, type BenchPackage, isBench } from "@kb/runtime";
import { callSiteTransform } from "@kb/runtime/node";
import * as spec from "@kb/spec";
import * as tensor from "@kb/tensor";
import * as tl from "@kb/tl";
import * as topology from "@kb/topology";
import type { TopologyLookup } from "@kb/web-ui/server";
import * as zod from "zod";

// Finding and loading the bench files of `kb run`.

const BENCH_EXTENSIONS = [".ts", ".js", ".mjs"];

/** The directory of this file: `src/` when run from sources, `dist/` when built. */
const CLI_DIR = dirname(fileURLToPath(import.meta.url));

/**
 * The folder of the benches and topologies kb ships (`benches/`, `topologies/`): `dist/shipped/`
 * of the package, which its build copies from the repository; the repository itself when kb runs
 * from its sources.
 */
export function shippedDir(): string {
  const built = join(CLI_DIR, "shipped");
  return isDirectory(built) ? built : resolve(CLI_DIR, "..", "..", "..");
}

/** `dir` and its parents, nearest first. */
function upwards(dir: string): string[] {
  const dirs: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    dirs.push(current);
    if (dirname(current) === current) return dirs;
  }
}

/**
 * Where to look for `benches/` and `topologies/`, in order: the current directory and its
 * parents, then the folder of what kb ships ({@link shippedDir}).
 */
function searchDirs(cwd: string): string[] {
  return [...new Set([...upwards(cwd), shippedDir()])];
}

/** The first `<dir>/<relative>` that is a file, over {@link searchDirs}. */
export function findUp(relative: string, cwd: string): string | undefined {
  for (const dir of searchDirs(cwd)) {
    const candidate = join(dir, relative);
    if (isFile(candidate)) return candidate;
  }
  return undefined;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Where the lookup of `<folder>/<file>` went, for error messages. */
function lookupPlaces(folder: string, file: string, cwd: string): string {
  return `${folder}/${file} in ${resolve(cwd)} and its parents, then ${file} in kb's own ${join(shippedDir(), folder)}`;
}

/**
 * The names of `<dir>/<folder>/*<extension>` over {@link searchDirs}, by folder, nearest first;
 * a name found nearer hides the same name further up.
 */
function namesByFolder(folder: string, extension: string, cwd: string): { path: string; names: string[] }[] {
  const found: { path: string; names: string[] }[] = [];
  const seen = new Set<string>();
  for (const dir of searchDirs(cwd)) {
    const path = join(dir, folder);
    if (!isDirectory(path)) continue;
    // Plain names only: `*.test.ts`, `*.config.ts`, `*.d.ts` and `*.schema.json` are not listed.
    const names = readdirSync(path)
      .map((entry) => (entry.endsWith(extension) ? entry.slice(0, -extension.length) : undefined))
      .filter(
        (name): name is string =>
          name !== undefined &&
          !name.includes(".") &&
          !seen.has(name) &&
          isFile(join(path, name + extension)),
      )
      .sort();
    for (const name of names) seen.add(name);
    if (names.length > 0) found.push({ path, names });
  }
  return found;
}

/**
 * What a lookup of `name` found instead: ` (did you mean "gemm"?)` when a name found is close,
 * and the sentence listing every name found, by folder.
 */
function listNames(
  folder: string,
  extension: string,
  cwd: string,
  name: string,
): { suggestion: string; list: string } {
  const found = namesByFolder(folder, extension, cwd);
  const near = closest(
    name,
    found.flatMap((entry) => entry.names),
  );
  const what = `${folder.charAt(0).toUpperCase()}${folder.slice(1)}`;
  return {
    suggestion: near === undefined ? "" : ` (did you mean "${near}"?)`,
    list:
      found.length === 0
        ? `No ${folder}/*${extension} were found there.`
        : `${what} found ${found.map((entry) => `in ${entry.path}: ${entry.names.join(", ")}`).join("; ")}.`,
  };
}

/**
 * The file of a bench argument: a path (it has a `/` or a bench file extension) as is, from
 * `cwd`; a name as `benches/<name>.ts` in `cwd` or a parent, else among the benches kb ships.
 * Throws a `KbError` naming where it looked and the benches found there.
 */
export function locateBench(benchArg: string, cwd: string): string {
  const isPath = /[/\\]/.test(benchArg) || BENCH_EXTENSIONS.some((extension) => benchArg.endsWith(extension));
  if (isPath) {
    const file = resolve(cwd, benchArg);
    if (!isFile(file)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `bench file ${benchArg} not found (looked for ${file}). Pass the path of a .ts, .js or .mjs file whose default export is defineBench({...}), or a bench name.`,
        { context: { file: benchArg } },
      );
    }
    return file;
  }
  const file = findUp(join("benches", `${benchArg}.ts`), cwd);
  if (file !== undefined) return file;
  const { suggestion, list } = listNames("benches", ".ts", cwd, benchArg);
  throw new KbError(
    "RUNTIME_INVALID",
    `no bench named "${benchArg}"${suggestion}: looked for ${lookupPlaces("benches", `${benchArg}.ts`, cwd)}. ${list} To run your own bench, pass the path of its file: kb run ./my-bench.ts.`,
  );
}

const TOPOLOGY_EXTENSIONS = [".yaml", ".yml"];

/**
 * The file of a `--topology` argument (`default` when none is given): a path (it has a `/`) as
 * is, from `cwd`; a file name (`my.yaml`) that exists in `cwd` as is; otherwise a name, with or
 * without `.yaml`, as `topologies/<name>.yaml` in `cwd` or a parent, else among the topologies kb
 * ships. Throws a `KbError` naming where it looked and the topologies found there.
 */
export function locateTopology(topologyArg: string, cwd: string): string {
  if (/[/\\]/.test(topologyArg)) return resolve(cwd, topologyArg);
  if (isFile(resolve(cwd, topologyArg))) return resolve(cwd, topologyArg);
  const extension = TOPOLOGY_EXTENSIONS.find((ending) => topologyArg.endsWith(ending));
  const name = extension === undefined ? topologyArg : topologyArg.slice(0, -extension.length);
  for (const ending of TOPOLOGY_EXTENSIONS) {
    const file = findUp(join("topologies", name + ending), cwd);
    if (file !== undefined) return file;
  }
  const { suggestion, list } = listNames("topologies", ".yaml", cwd, name);
  throw new KbError(
    "TOPOLOGY_NOT_FOUND",
    `no topology named "${name}"${suggestion}: looked for ${topologyArg === name ? "" : `${topologyArg} in ${resolve(cwd)}, then for `}${lookupPlaces("topologies", `${name}.yaml`, cwd)}. ${list} Pass a topology name, or the path of a YAML file (./my-design.yaml).`,
  );
}

/** How `kb web` finds topologies by name: as `kb run --topology` does ({@link locateTopology}). */
export const topologyLookup: TopologyLookup = { locate: locateTopology, find: findUp };

/**
 * The modules a bench file gets from the CLI itself rather than from its own node_modules: one
 * copy of each, so its `KbError`s, tensors and kernels are the ones the simulator knows, and a
 * bench file outside any project (no node_modules) still runs. Keyed by `BENCH_PACKAGES` of
 * @kb/runtime, the list the type check and the playground use too.
 */
const SHARED_MODULES: Readonly<Record<BenchPackage, unknown>> = {
  "@kb/builtins": builtins,
  "@kb/ccl": ccl,
  "@kb/components": components,
  "@kb/data-executor": dataExecutor,
  "@kb/errors": errors,
  "@kb/oplog": oplog,
  "@kb/runtime": runtime,
  "@kb/spec": spec,
  "@kb/tensor": tensor,
  "@kb/tl": tl,
  "@kb/topology": topology,
  zod,
};

/**
 * Where a bench's imports of SHARED_MODULES are resolved from when it is type-checked
 * (`kb check`, `kb run --typecheck`): this file, so the declarations are those of the modules a
 * run hands the bench.
 */
export const BENCH_MODULES_FROM: string = import.meta.url;

/**
 * Imports a bench file (TypeScript or JavaScript, through `importSourceFile` of
 * `@kb/components/node`, which plug-ins given by path are loaded with too) and returns its default
 * export, checked.
 */
export async function loadBench(file: string): Promise<Bench> {
  let module: Record<string, unknown>;
  try {
    // Kernels' tl calls tagged with their place in the source: their sites need no stack walk.
    module = await importSourceFile(file, { shared: SHARED_MODULES, transform: await callSiteTransform() });
  } catch (error) {
    throw new KbError(
      "RUNTIME_INVALID",
      `cannot load the bench file: ${error instanceof Error ? error.message.trim() : String(error)}\nA bench file is a module whose default export is defineBench({...}) of @kb/runtime.`,
      { context: { file }, cause: error },
    );
  }
  // jiti's interop answers `.default` even without a default export: ask for the key itself.
  const exported = Object.keys(module).includes("default") ? module.default : undefined;
  if (isBench(exported)) return exported;
  const names = Object.keys(module).filter((name) => name !== "default");
  const found =
    exported === undefined
      ? "it has no default export"
      : `its default export is ${describeValue(exported)}, not a bench`;
  throw new KbError(
    "RUNTIME_INVALID",
    `${found}${names.length === 0 ? "" : ` (named exports: ${names.join(", ")})`}. A bench file must \`export default defineBench({ name, params, async run(sim, params) {...} })\` with defineBench from @kb/runtime.`,
    { context: { file } },
  );
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "function") return `a function${value.name ? ` (${value.name})` : ""}`;
  if (typeof value === "object") {
    const keys = Object.keys(value);
    return keys.length === 0 ? "an empty object" : `an object with keys ${keys.join(", ")}`;
  }
  return `a ${typeof value} (${JSON.stringify(value)})`;
}
