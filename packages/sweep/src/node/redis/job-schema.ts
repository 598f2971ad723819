import { hostname } from "node:os";
import { formatIssuePath } from "@kb/errors";
import { prototypeKeyPath } from "@kb/topology";
import * as z from "zod";
import type { SweepJob } from "../../executor.js";
import { SWEEP_LIMITS } from "../../limits.js";

// What a worker accepts from its queue. Anyone who can write to the sweep's Redis can add jobs,
// so a job is data to check before anything is imported, hashed or written: every field typed and
// bounded, unknown fields refused, and its file names relative to the worker's --root with no way
// out of it (no absolute path, no `..`; symlinks are checked when the files are found, in
// job-files.ts).

/** Longest bench name, path, plug-in, params key or version text a job may carry, characters. */
const MAX_TEXT = 1024;
/** Most plug-ins of a job (its own and its topology's, each). */
const MAX_PLUGINS = 64;
/** Longest job, as JSON, characters: one point's topology and params. */
export const MAX_JOB_JSON = 1_000_000;

const SHA256 = /^[0-9a-f]{64}$/;
// npm's rules for a package name, scoped or not (lower case, URL-safe), as plug-in packages have.
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
/** A bench name as `kb run NAME` takes it (benches/NAME.ts): no path, no extension. */
const BENCH_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const BENCH_EXTENSIONS = [".ts", ".js", ".mjs"];

/**
 * True for a path a job may name: `./` then one or more `/`-separated parts, none of them empty,
 * `.` or `..`, no backslash or NUL; it stays inside whatever folder it is read from (but for
 * symlinks).
 */
export function isRootRelative(path: string): boolean {
  if (!path.startsWith("./") || path.length > MAX_TEXT || /[\\\0]/.test(path)) return false;
  return path
    .slice(2)
    .split("/")
    .every((part) => part !== "" && part !== "." && part !== "..");
}

/** True for a bench given by name (found as benches/NAME.ts), not by path. */
export function isBenchName(bench: string): boolean {
  return (
    BENCH_NAME.test(bench) && !bench.includes("..") && !BENCH_EXTENSIONS.some((ext) => bench.endsWith(ext))
  );
}

const text = z.string().max(MAX_TEXT);
const sha256 = z.string().regex(SHA256, "must be a sha256: 64 lowercase hex digits");
const rootPath = text.refine(isRootRelative, {
  message: "must be a path inside the worker's --root: ./ then names, no .., no absolute path",
});
const plugin = z.union([text.regex(PACKAGE_NAME), rootPath], {
  error: "must be an npm package name or a path inside the worker's --root (./NAME, no .., not absolute)",
});
const bench = text.refine((value) => isBenchName(value) || isRootRelative(value), {
  message:
    "must be a bench name (benches/NAME.ts) or a path inside the worker's --root (./NAME.ts, no .., not absolute)",
});
const positive = z.number().positive().max(Number.MAX_SAFE_INTEGER);

const topologySchema = z
  .record(text, z.json())
  .refine(
    (topology) =>
      topology.plugins === undefined ||
      (Array.isArray(topology.plugins) &&
        topology.plugins.length <= MAX_PLUGINS &&
        topology.plugins.every((entry) => typeof entry === "string" && plugin.safeParse(entry).success)),
    {
      message: `plugins: must be at most ${MAX_PLUGINS} npm package names or paths inside the worker's --root (./NAME, no .., not absolute)`,
    },
  );

const sweepJobSchema = z.strictObject({
  point: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  key: z.string().regex(SHA256, "must be a point key: 64 lowercase hex digits"),
  bench,
  benchDigest: sha256,
  inputs: z.strictObject({
    topology: topologySchema,
    params: z.record(text.min(1).regex(/^[^=]*$/, "a param name has no ="), z.json()),
    plugins: z.array(plugin).max(MAX_PLUGINS),
  }),
  run: z.strictObject({
    verify: z.boolean(),
    maxEvents: positive.optional(),
    maxSimTimeNs: positive.optional(),
    maxStallCalls: z.number().int().min(1).max(SWEEP_LIMITS.maxEvents).optional(),
    memoryMb: z.number().int().min(SWEEP_LIMITS.minMemoryMb).max(SWEEP_LIMITS.maxMemoryMb),
    timeoutS: z.number().positive().max(SWEEP_LIMITS.maxTimeoutS).optional(),
    cacheDir: text.optional(),
  }),
});

/** The zod schema of a job on a sweep's queue ({@link QueuedJob}), as a worker checks it. */
export const queuedJobSchema = z.strictObject({
  job: sweepJobSchema,
  pluginDigests: z
    .record(rootPath, sha256.nullable())
    .refine((digests) => Object.keys(digests).length <= 2 * MAX_PLUGINS, "too many plug-ins"),
  versions: z
    .record(text.regex(PACKAGE_NAME), text)
    .refine((versions) => Object.keys(versions).length > 0, "must name the sweep's @kb package versions"),
});

/**
 * What a queued job carries: the sweep's job (its bench and plug-in paths relative to the sweep's
 * folder, `./...`, which a worker reads from its --root), the sha256 of each plug-in given by
 * path, so a worker can tell that its copy is the one the sweep planned with, and the sweep's @kb
 * package versions. Names and digests only, never code: a worker runs what it already has.
 */
export interface QueuedJob {
  readonly job: SweepJob;
  /** Plug-in path as the job names it -> sha256 of its file (or package folder), `null` when missing at the sweep. */
  readonly pluginDigests: Readonly<Record<string, string | null>>;
  /**
   * The versions of the @kb packages the sweep's own `kb run` would use (`packageVersions()` of
   * `@kb/runtime/node`): a worker with other versions refuses the point, so one table never mixes
   * results of two simulators. A job without them is refused.
   */
  readonly versions: Readonly<Record<string, string>>;
}

/** A job a worker took: checked ({@link QueuedJob}), or why it refuses it. */
export type CheckedJob = { readonly queued: QueuedJob } | { readonly refusal: string };

/**
 * Checks the data of job `jobId` taken from a queue: a {@link QueuedJob} as `kb sweep --redis`
 * adds it, at most {@link MAX_JOB_JSON} characters of JSON, with no `__proto__`, `prototype` or
 * `constructor` key at any depth; anything else is refused with the first reason, naming the
 * field and what to do.
 */
export function checkQueuedJob(data: unknown, jobId: string): CheckedJob {
  const refuse = (why: string): CheckedJob => ({
    refusal: `kb worker on ${hostname()} refused job ${quoted(jobId)}: ${why}. A sweep's queue takes only the jobs kb sweep --redis adds; run the sweep again with the same kb version as the workers, and let only it (and the workers) write to this Redis.`,
  });
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch {
    json = undefined;
  }
  if (json === undefined) return refuse("its data is not JSON");
  if (json.length > MAX_JOB_JSON) {
    return refuse(
      `its data is ${json.length} characters of JSON, more than the ${MAX_JOB_JSON} a job may have`,
    );
  }
  // Keys that reach an object's prototype when written as paths, at any depth.
  const forbidden = prototypeKeyPath(data);
  if (forbidden !== undefined)
    return refuse(
      `${formatIssuePath(forbidden)}: the key ${quoted(String(forbidden.at(-1) ?? ""))} is not allowed in a job`,
    );
  const parsed = queuedJobSchema.safeParse(data);
  if (parsed.success) return { queued: parsed.data as QueuedJob };
  const issue = parsed.error.issues[0];
  const where = issue === undefined ? "its data" : formatIssuePath(issue.path, "its data");
  return refuse(`${where}: ${issue?.message ?? "not a job"}${found(data, issue?.path ?? [])}`);
}

/** ` (got "...")` of the value at `path` when it is a string or number, shortened; else "". */
function found(data: unknown, path: readonly PropertyKey[]): string {
  let value: unknown = data;
  for (const key of path) {
    if (value === null || typeof value !== "object") return "";
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return typeof value === "string" || typeof value === "number" ? ` (got ${quoted(String(value))})` : "";
}

/** `text` as a JSON string, at most 80 characters of it. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}
