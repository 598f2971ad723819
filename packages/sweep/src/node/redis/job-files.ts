import { realpathSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { KbError } from "@kb/errors";
import { benchFileDigest, pluginSourceDigest } from "@kb/runtime/node";
import type { SweepJob } from "../../executor.js";
import { isPath } from "../spec-file.js";
import { isBenchName, type QueuedJob } from "./job-schema.js";

export type { QueuedJob } from "./job-schema.js";

/** Extensions a plug-in path may leave out (`./my-hbm` for `./my-hbm.ts`), as `kb run --plugin` does. */
const PLUGIN_EXTENSIONS = ["", ".ts", ".js", ".mjs"];

/** The plug-ins of a job given by path: its own and its topology's. */
export function pluginPaths(job: SweepJob): string[] {
  const topologyPlugins = (job.inputs.topology as { plugins?: unknown }).plugins;
  const all = [
    ...job.inputs.plugins,
    ...(Array.isArray(topologyPlugins) ? topologyPlugins.filter((each) => typeof each === "string") : []),
  ];
  return [...new Set(all.filter((plugin) => isPath(plugin)))];
}

/**
 * {@link QueuedJob} of a job: its bench and plug-in paths made relative to `root` (the sweep's
 * folder, which a worker's --root stands for: `./sub/x.ts`), their digests read from there, and
 * the sweep's @kb package `versions`. Throws `SWEEP_QUEUE` for a path outside `root`: no worker
 * would read it.
 */
export async function queuedJob(
  job: SweepJob,
  root: string,
  versions: Readonly<Record<string, string>>,
): Promise<QueuedJob> {
  const inRoot = (path: string, what: string): string => {
    const relativePath = rootRelative(root, path);
    if (relativePath !== null) return relativePath;
    throw new KbError(
      "SWEEP_QUEUE",
      `point ${job.point}: the ${what} ${path} is outside the sweep's folder ${root}, and kb workers read files only inside their --root, which stands for that folder. Move it into ${root} (or the spec beside it), or run the sweep without --redis.`,
    );
  };
  const plugin = (entry: unknown): unknown =>
    typeof entry === "string" && isPath(entry) ? inRoot(entry, "plug-in") : entry;
  const sent: SweepJob = {
    ...withPlugins(job, plugin),
    bench: isBenchName(job.bench) ? job.bench : inRoot(job.bench, "bench"),
  };
  return {
    job: sent,
    pluginDigests: Object.fromEntries(
      await Promise.all(
        pluginPaths(sent).map(async (entry) => [entry, await pathDigest(resolve(root, entry))] as const),
      ),
    ),
    versions,
  };
}

/**
 * `path` (from `root`) as a job names it, `./a/b.ts` relative to `root`, or `null` when it is not
 * inside `root`.
 */
export function rootRelative(root: string, path: string): string | null {
  const relativePath = relative(resolve(root), resolve(root, path));
  if (
    relativePath === "" ||
    relativePath === ".." ||
    relativePath.startsWith(`..${sep}`) ||
    isAbsolute(relativePath)
  ) {
    return null;
  }
  return `./${relativePath.split(sep).join("/")}`;
}

/**
 * sha256 (hex) of a plug-in path's code, as a run's manifest digests it (`pluginSourceDigest`):
 * a file and the files it imports by relative path, or a package folder's files (node_modules
 * and dot-folders left out); the extensions a path may leave out are tried; `null` when there is
 * nothing there.
 */
export function pathDigest(path: string): Promise<string | null> {
  return pluginSourceDigest(path, [], dirname(path));
}

/** What a worker runs of a job: its bench file and the job with absolute plug-in paths, or why it refuses. */
export type JobFiles = { readonly benchFile: string; readonly job: SweepJob } | { readonly refusal: string };

/**
 * The files a worker runs a checked job (`checkQueuedJob`) with, found from `root` (its --root),
 * or why it refuses it: the sweep's @kb `versions` must be the worker's; the bench (a name, found
 * by `findBench`, or a `./` path) and each plug-in path must be inside `root` once symlinks are
 * followed, and have the digests the sweep planned with. The job it gives has each plug-in path
 * (its own and its topology's) replaced by the real path found, for a topology written elsewhere.
 * Nothing is imported here; a refusal says which file, where, and what to do.
 */
export async function jobFiles(
  queued: QueuedJob,
  root: string,
  versions: Readonly<Record<string, string>>,
  findBench: (name: string) => string | undefined,
): Promise<JobFiles> {
  const { job } = queued;
  const refused = (why: string) => ({
    refusal: `kb worker on ${hostname()} refused point ${job.point}: ${why}`,
  });
  const differ = versionsDiffer(queued.versions, versions);
  if (differ !== null) {
    return refused(
      `it runs ${differ.worker}, the sweep planned with ${differ.sweep}. Install the same kb version on the workers as on the sweep's machine (npm install -g @kb/cli@VERSION, or the same checkout built), then run the sweep again.`,
    );
  }
  const bench = isBenchName(job.bench) ? { file: findBench(job.bench) } : fileInRoot(root, job.bench, [""]);
  if ("outside" in bench) {
    return refused(
      `its bench "${job.bench}" is ${bench.outside}, which leads out of its --root ${root}: a worker runs only files inside it. Replace the link with the file itself.`,
    );
  }
  if (bench.file === undefined) {
    return refused(
      `it has no bench "${job.bench}" (looked from ${root}). Start the worker in the sweep's folder (or --root it) with the same bench files.`,
    );
  }
  const benchDigest = await benchFileDigest(bench.file);
  if (benchDigest !== job.benchDigest) {
    return refused(
      `its bench ${bench.file} has sha256 ${short(benchDigest)}, the sweep planned with ${short(job.benchDigest)}. Give the worker the same bench file (same checkout or installation) and run the sweep again.`,
    );
  }
  const real = new Map<string, string>();
  for (const plugin of pluginPaths(job)) {
    const found = fileInRoot(root, plugin, PLUGIN_EXTENSIONS);
    if ("outside" in found) {
      return refused(
        `its plug-in "${plugin}" is ${found.outside}, which leads out of its --root ${root}: a worker runs only files inside it. Replace the link with the file itself.`,
      );
    }
    const expected = queued.pluginDigests[plugin];
    if (expected === undefined) {
      return refused(
        `the job carries no sha256 of its plug-in "${plugin}", so the worker cannot check its copy.`,
      );
    }
    const digest = found.file === undefined ? null : await pathDigest(found.file);
    if (found.file === undefined || digest !== expected) {
      return refused(
        `its plug-in ${resolve(root, plugin)} has sha256 ${short(digest)}, the sweep planned with ${short(expected)}. Give the worker the same plug-in files and run the sweep again.`,
      );
    }
    real.set(plugin, found.file);
  }
  const local = (entry: unknown): unknown => (typeof entry === "string" ? (real.get(entry) ?? entry) : entry);
  return { benchFile: bench.file, job: withPlugins(job, local) };
}

/** `job` with each of its plug-ins (its own and its topology's) replaced by `map` of it. */
function withPlugins(job: SweepJob, map: (entry: unknown) => unknown): SweepJob {
  const { topology } = job.inputs;
  return {
    ...job,
    inputs: {
      ...job.inputs,
      topology: Array.isArray(topology.plugins)
        ? { ...topology, plugins: topology.plugins.map(map) }
        : topology,
      plugins: job.inputs.plugins.map((entry) => map(entry) as string),
    },
  };
}

/**
 * The real path of `./path` (a checked job's, no `..`) in `root`, tried with each of `extensions`:
 * `{ file }` (undefined when there is nothing there), or `{ outside }` naming the real path a
 * symlink leads to when it is not inside `root`'s real path.
 */
function fileInRoot(
  root: string,
  path: string,
  extensions: readonly string[],
): { readonly file: string | undefined } | { readonly outside: string } {
  const realRoot = realpathSync(root);
  for (const extension of extensions) {
    const candidate = resolve(realRoot, path + extension);
    if (kindOf(candidate) === null) continue;
    const real = realpathSync(candidate);
    if (real !== realRoot && !real.startsWith(realRoot + sep)) return { outside: `a link to ${real}` };
    return { file: real };
  }
  return { file: undefined };
}

/**
 * The first @kb package whose version differs between the sweep's and the worker's, as text for
 * each side (`@kb/runtime 0.3.0`), or `null` when they agree.
 */
function versionsDiffer(
  sweep: Readonly<Record<string, string>>,
  worker: Readonly<Record<string, string>>,
): { readonly sweep: string; readonly worker: string } | null {
  for (const name of [...new Set([...Object.keys(sweep), ...Object.keys(worker)])].sort()) {
    if (sweep[name] !== worker[name]) {
      return { sweep: `${name} ${sweep[name] ?? "(none)"}`, worker: `${name} ${worker[name] ?? "(none)"}` };
    }
  }
  return null;
}

function short(digest: string | null): string {
  return digest === null ? "(missing)" : digest.slice(0, 12);
}

function kindOf(path: string): "file" | "folder" | null {
  try {
    const stat = statSync(path);
    return stat.isFile() ? "file" : stat.isDirectory() ? "folder" : null;
  } catch {
    return null;
  }
}
