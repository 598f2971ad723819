import { hostname } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import { benchFileDigest, pluginSourceDigest } from "@kb/runtime/node";
import type { SweepJob } from "../../executor.js";
import { isPath } from "../../spec-file.js";

/**
 * What a queued job carries: the sweep's job, and the sha256 of each plug-in given by path (the
 * point's own plug-ins, relative to the sweep's folder, and its topology's, absolute), so a
 * worker can tell that its copy is the one the sweep planned with. Names and digests only, never
 * code: a worker runs what it already has.
 */
export interface QueuedJob {
  readonly job: SweepJob;
  /** Plug-in path as the job names it -> sha256 of its file (or package folder), `null` when missing at the sweep. */
  readonly pluginDigests: Readonly<Record<string, string | null>>;
  /**
   * The versions of the @kb packages the sweep's own `kb run` would use (`packageVersions()` of
   * `@kb/runtime/node`): a worker with other versions refuses the point, so one table never mixes
   * results of two simulators. Absent in jobs queued by a kb that did not send them.
   */
  readonly versions?: Readonly<Record<string, string>>;
}

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
 * {@link QueuedJob} of a job, its relative plug-in paths read from `root` (the sweep's folder),
 * with the sweep's @kb package `versions` when given.
 */
export function queuedJob(
  job: SweepJob,
  root: string,
  versions?: Readonly<Record<string, string>>,
): QueuedJob {
  return {
    job,
    pluginDigests: Object.fromEntries(
      pluginPaths(job).map((plugin) => [plugin, pathDigest(resolve(root, plugin))]),
    ),
    ...(versions !== undefined ? { versions } : {}),
  };
}

/**
 * sha256 (hex) of a plug-in path's code, as a run's manifest digests it (`pluginSourceDigest`):
 * a file and the files it imports by relative path, or a package folder's files (node_modules
 * and dot-folders left out); the extensions a path may leave out are tried; `null` when there is
 * nothing there.
 */
export function pathDigest(path: string): string | null {
  return pluginSourceDigest(path, [], dirname(path));
}

/**
 * Why a worker refuses a job, or `null` when it may run it: the bench file it found (`benchFile`,
 * `undefined` when it found none) must have the job's digest, and each plug-in path, read from
 * `root`, the digest the sweep saw. The reason says which file differs, where, and what to do.
 */
export function refusalOf(
  queued: QueuedJob,
  benchFile: string | undefined,
  root: string,
  versions?: Readonly<Record<string, string>>,
): string | null {
  const { job } = queued;
  const worker = `kb worker on ${hostname()}`;
  const differ = versionsDiffer(queued.versions, versions);
  if (differ !== null) {
    return `${worker} refused point ${job.point}: it runs ${differ.worker}, the sweep planned with ${differ.sweep}. Install the same kb version on the workers as on the sweep's machine (npm install -g @kb/cli@VERSION, or the same checkout built), then run the sweep again.`;
  }
  if (benchFile === undefined) {
    return `${worker} refused point ${job.point}: it has no bench "${job.bench}" (looked from ${root}). Start the worker in the sweep's folder (or --root it) with the same bench files.`;
  }
  const benchDigest = benchFileDigest(benchFile);
  if (benchDigest !== job.benchDigest) {
    return `${worker} refused point ${job.point}: its bench ${benchFile} has sha256 ${short(benchDigest)}, the sweep planned with ${short(job.benchDigest)}. Give the worker the same bench file (same checkout or installation) and run the sweep again.`;
  }
  for (const [plugin, expected] of Object.entries(queued.pluginDigests)) {
    const file = isAbsolute(plugin) ? plugin : resolve(root, plugin);
    const found = pathDigest(file);
    if (found !== expected) {
      return `${worker} refused point ${job.point}: its plug-in ${file} has sha256 ${short(found)}, the sweep planned with ${short(expected)}. Give the worker the same plug-in files and run the sweep again.`;
    }
  }
  return null;
}

/**
 * The first @kb package whose version differs between the sweep's and the worker's, as text for
 * each side (`@kb/runtime 0.3.0`), or `null` when they agree or either side sent none.
 */
function versionsDiffer(
  sweep: Readonly<Record<string, string>> | undefined,
  worker: Readonly<Record<string, string>> | undefined,
): { readonly sweep: string; readonly worker: string } | null {
  if (sweep === undefined || worker === undefined) return null;
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
