import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import * as ccl from "@kb/ccl";
import * as components from "@kb/components";
import { importSourceFile } from "@kb/components/node";
import * as dataExecutor from "@kb/data-executor";
import * as errors from "@kb/errors";
import { KbError } from "@kb/errors";
import * as oplog from "@kb/oplog";
import * as runtime from "@kb/runtime";
import { type Bench, isBench, type Simulator } from "@kb/runtime";
import * as tensor from "@kb/tensor";
import * as tl from "@kb/tl";
import * as topology from "@kb/topology";
import * as zod from "zod";

// Finding and loading the bench files of `kb run`.

const BENCH_EXTENSIONS = [".ts", ".js", ".mjs"];

/** The directory of this file: `src/` when run from sources, `dist/` when built. */
const CLI_DIR = dirname(fileURLToPath(import.meta.url));

/** `dir` and its parents, nearest first. */
function upwards(dir: string): string[] {
  const dirs: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    dirs.push(current);
    if (dirname(current) === current) return dirs;
  }
}

/**
 * Where to look for `benches/` and `topologies/`: the current directory and its parents, then
 * the CLI package's own directory and its parents (the repository's, when kb runs from a clone).
 */
function searchDirs(cwd: string): string[] {
  return [...new Set([...upwards(cwd), ...upwards(CLI_DIR)])];
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

/** A path (has a `/` or a bench file extension) as is; a name as `benches/<name>.ts`. */
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

  const found: string[] = [];
  const seen = new Set<string>();
  for (const dir of searchDirs(cwd)) {
    const benches = join(dir, "benches");
    if (!existsSync(benches) || !statSync(benches).isDirectory()) continue;
    // Bench files have plain names: `*.test.ts`, `*.config.ts` and `*.d.ts` are not benches.
    const names = readdirSync(benches)
      .map((entry) => /^([^.]+)\.ts$/.exec(entry)?.[1])
      .filter(
        (name): name is string =>
          name !== undefined && !seen.has(name) && isFile(join(benches, `${name}.ts`)),
      )
      .sort();
    for (const name of names) seen.add(name);
    if (names.length > 0) found.push(`in ${benches}: ${names.join(", ")}`);
  }
  const listing =
    found.length === 0 ? "No benches/*.ts were found there." : `Benches found ${found.join("; ")}.`;
  throw new KbError(
    "RUNTIME_INVALID",
    `no bench named "${benchArg}": looked for benches/${benchArg}.ts in ${cwd} and its parents, then beside kb (${CLI_DIR}) and its parents. ${listing} To run your own bench, pass the path of its file: kb run ./my-bench.ts.`,
  );
}

/**
 * The modules a bench file gets from the CLI itself rather than from its own node_modules: one
 * copy of each, so its `KbError`s, tensors and kernels are the ones the simulator knows, and a
 * bench file outside any project (no node_modules) still runs.
 */
const SHARED_MODULES: Record<string, unknown> = {
  "@kb/ccl": ccl,
  "@kb/components": components,
  "@kb/data-executor": dataExecutor,
  "@kb/errors": errors,
  "@kb/oplog": oplog,
  "@kb/runtime": runtime,
  "@kb/tensor": tensor,
  "@kb/tl": tl,
  "@kb/topology": topology,
  zod,
};

/**
 * Imports a bench file (TypeScript or JavaScript, through `importSourceFile` of
 * `@kb/components/node`, which plug-ins given by path are loaded with too) and returns its default
 * export, checked.
 */
export async function loadBench(file: string): Promise<Bench> {
  let module: Record<string, unknown>;
  try {
    module = await importSourceFile(file, { shared: SHARED_MODULES });
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

/**
 * Runs the bench's own code. A plain error thrown there (not a `KbError`) is the bench's fault,
 * exit 1 with its stack, when it was thrown in the bench's directory; thrown inside kb, it stays
 * an internal error (exit 2, please report).
 */
export async function runUserCode(
  file: string,
  bench: Bench,
  sim: Simulator,
  params: Record<string, unknown>,
): Promise<runtime.BenchOutcome | undefined> {
  try {
    return (await bench.run(sim, params)) ?? undefined;
  } catch (error) {
    if (errors.isKbError(error) || !thrownUnder(error, dirname(file))) throw error;
    throw new KbError("RUNTIME_INVALID", `bench "${bench.name}" threw: ${errorText(error)}`, {
      context: { file },
      cause: error,
    });
  }
}

/** Whether the top frame of `error`'s stack is a file under `dir`. */
function thrownUnder(error: unknown, dir: string): boolean {
  if (!(error instanceof Error) || error.stack === undefined) return false;
  const frame = /^\s+at (?:.*? \()?(.+?):\d+:\d+\)?$/m.exec(error.stack)?.[1];
  if (frame === undefined) return false;
  const path = frame.startsWith("file://") ? fileURLToPath(frame) : frame;
  return path.startsWith(`${dir}${sep}`);
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

/** A thrown value as text: a KbError's message, an Error's stack (it points into the user's file). */
function errorText(error: unknown): string {
  if (errors.isKbError(error)) return error.message;
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}
