import { KbError } from "@kb/errors";
import type { ServeRequest } from "../scheduler.js";
import { parseTrace } from "../trace.js";

// Reading a trace file, in Node only. The bench is also type-checked for (and bundled into) places
// without Node's types or modules (`kb check`, the playground), so the few Node calls used here are
// reached through `process.getBuiltinModule` (Node 20.16+) and typed locally, not imported.

/** The largest trace file read (16 MiB: some 300 000 requests). */
export const MAX_TRACE_BYTES = 16 * 1024 * 1024;

interface NodeFs {
  realpathSync(path: string): string;
  statSync(path: string): { isFile(): boolean; size: number };
  readFileSync(path: string, encoding: "utf8"): string;
}
interface NodePath {
  resolve(...paths: string[]): string;
  relative(from: string, to: string): string;
  isAbsolute(path: string): boolean;
  readonly sep: string;
}
interface NodeProcess {
  cwd(): string;
  getBuiltinModule?(name: string): unknown;
}

function node(): { fs: NodeFs; path: NodePath; cwd: string } {
  const process = (globalThis as { process?: NodeProcess }).process;
  const builtin = process?.getBuiltinModule;
  if (process === undefined || builtin === undefined) {
    throw new KbError(
      "RUNTIME_INVALID",
      "llama-serve: a trace file is read by kb run on Node 20.16 or later (process.getBuiltinModule); here there is none. Leave trace out to generate the requests (requests, rate, seed).",
    );
  }
  return {
    fs: builtin.call(process, "node:fs") as NodeFs,
    path: builtin.call(process, "node:path") as NodePath,
    cwd: process.cwd(),
  };
}

/**
 * The requests of the trace file `file`, relative to the folder kb runs in (`root`, default the
 * working folder). Only a regular file inside `root` is read, symlinks followed (no `..` out of
 * it, no absolute path elsewhere), of at most {@link MAX_TRACE_BYTES}; a `RUNTIME_INVALID` says
 * which and what to do. Its lines are checked by {@link parseTrace} (errors at `file:line`).
 */
export function readTraceFile(file: string, root?: string): ServeRequest[] {
  const { fs, path, cwd } = node();
  const base = fs.realpathSync(path.resolve(root ?? cwd));
  const full = path.resolve(base, file);
  let real: string;
  try {
    real = fs.realpathSync(full);
  } catch {
    throw new KbError(
      "RUNTIME_INVALID",
      `llama-serve: trace file ${file} not found (looked for ${full}). Give a JSON-lines file inside ${base}, or leave trace out to generate the requests.`,
    );
  }
  const inside = path.relative(base, real);
  if (inside === "" || inside === ".." || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `llama-serve: trace file ${file} is outside the folder kb runs in (${base}): a bench reads data files only inside it. Copy the trace into ${base}, or run kb from a folder that holds it.`,
    );
  }
  const stats = fs.statSync(real);
  if (!stats.isFile() || stats.size > MAX_TRACE_BYTES) {
    throw new KbError(
      "RUNTIME_INVALID",
      `llama-serve: trace file ${file} is ${stats.isFile() ? `${stats.size} bytes, above the ${MAX_TRACE_BYTES}-byte cap` : "not a regular file"}. Give a JSON-lines file of at most 16 MiB.`,
    );
  }
  return parseTrace(fs.readFileSync(real, "utf8"), file);
}
