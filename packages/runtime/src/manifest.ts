import type { KbPlugin } from "@kb/components";
import { KbError } from "@kb/errors";
import type { Topology } from "@kb/topology";
import * as z from "zod";
import type { SourceBytes, SourceFiles } from "./source-files.js";

// A run's identity (DESIGN §10): what went into it, so that two runs with the same manifest digest
// are the same run and a sweep or `kb run --cache` need not simulate it twice. Browser-safe: the
// digests use Web Crypto (globalThis.crypto.subtle), which Node >= 20 has too.

/** A plug-in a run loaded: its package name, version and the digest of its entry file. */
const pluginSchema = z.object({
  name: z.string().describe("Package name, or the path the run was given."),
  version: z.string().nullable().describe("Its package.json version; null for a bare file."),
  digest: z
    .string()
    .nullable()
    .describe(
      "sha256 of its metadata, factories and the code the loader read (its package's files, or its file and the files it imports by relative path), hex; null when not known.",
    ),
});

/** The published zod schema of a run manifest (`RunResults.manifest`, `kb run --manifest-only`). */
export const RunManifestSchema = z.object({
  schema: z.literal("kb.manifest/1"),
  packages: z
    .record(z.string(), z.string())
    .describe("Version of every @kb package the run used, by name (from each package.json)."),
  plugins: z.array(pluginSchema).describe("Plug-ins the run loaded (the topology's and --plugin), by name."),
  topology: z.object({
    name: z.string(),
    digest: z
      .string()
      .describe(
        "sha256 of the canonical JSON of the resolved topology (every default filled in), hex: a reformatted or commented YAML file with the same content has the same digest.",
      ),
  }),
  bench: z.object({
    name: z.string(),
    digest: z
      .string()
      .describe(
        "sha256 of the bench file's bytes, hex; for a bench that imports files by relative path, of the relative paths and bytes of it and those files (transitively), sorted.",
      ),
  }),
  params: z.record(z.string(), z.unknown()).describe("Bench params after defaults."),
  dataFiles: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      "sha256 (hex) of each data file the bench reads, by the param that names it (`dataFileParam`): an edited file is another run. Absent when the run reads none.",
    ),
  seed: z
    .number()
    .nullable()
    .describe("The bench's seed param (params.seed) when it has one; runs use no other randomness."),
  options: z
    .record(z.string(), z.unknown())
    .describe(
      "Run options that change the results JSON (verify, checkPhases). Limits are not among them (a run that reaches one has no results), nor traces and output files.",
    ),
  node: z
    .string()
    .describe(
      "The JavaScript runtime that ran it: on Node its version (process.version, `v20.11.1`), in a browser `browser ` and the engine of its user agent (`browser Chrome/131.0.6778.85`); informative, not part of the digest.",
    ),
  digest: z
    .string()
    .describe(
      "sha256 of the canonical JSON of every field above but node and digest, hex: the run's identity.",
    ),
});

/** A run's manifest: see {@link RunManifestSchema}. */
export type RunManifest = z.infer<typeof RunManifestSchema>;

/** A manifest before its digest is computed. */
export type RunManifestInput = Omit<RunManifest, "schema" | "digest">;

/**
 * JSON with the keys of every object sorted (arrays keep their order), no whitespace: equal
 * values give equal text whatever order their keys were written in. `undefined` fields are left
 * out, as JSON.stringify does; a non-finite number or a value JSON cannot hold is an error.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      throw new KbError("RUNTIME_INVALID", `canonicalJson: ${value} has no JSON form.`);
    }
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  throw new KbError("RUNTIME_INVALID", `canonicalJson: a ${typeof value} has no JSON form.`);
}

/** The sha256 of `data` (a string is hashed as UTF-8), as 64 lowercase hex digits. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const hash = await globalThis.crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(hash), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The sha256 (hex) of a bench's or plug-in's files: for a lone file, the sha256 of its bytes (a
 * single-file bench's digest is its file's, as before); for several, the sha256 of each one's
 * relative path and bytes, `path\0bytes\0`, in sorted path order. Deterministic: the same files
 * in any insertion order give the same digest, and no time or absolute path enters it.
 */
export function sourceFilesDigest(files: SourceFiles): Promise<string> {
  const paths = Object.keys(files).sort();
  const encoder = new TextEncoder();
  const bytesOf = (path: string): Uint8Array => {
    const bytes = files[path] as SourceBytes;
    return typeof bytes === "string" ? encoder.encode(bytes) : bytes;
  };
  if (paths.length === 1) return sha256Hex(bytesOf(paths[0] as string));
  const parts: Uint8Array[] = [];
  const separator = new Uint8Array([0]);
  for (const path of paths) parts.push(encoder.encode(path), separator, bytesOf(path), separator);
  const all = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return sha256Hex(all);
}

/** A bench's code as files: a lone text or bytes is one file (its digest is its sha256). */
function benchFilesOf(source: string | Uint8Array | SourceFiles): SourceFiles {
  return typeof source === "string" || source instanceof Uint8Array ? { bench: source } : source;
}

/**
 * Completes a manifest with its digest: the sha256 of the canonical JSON of every field but
 * `node`. The Node version is recorded but left out of the identity: the simulation uses no
 * Node-specific behaviour (integer and IEEE arithmetic, no wall time, no Math.random), so a
 * cache filled under Node 20 serves Node 22, and a worker pool of mixed Node versions shares it.
 */
export async function completeManifest(input: RunManifestInput): Promise<RunManifest> {
  const { node, ...identity } = input;
  const body = { schema: "kb.manifest/1" as const, ...identity };
  return { ...body, node, digest: await sha256Hex(canonicalJson(body)) };
}

/** What {@link manifestOf} describes: a run's inputs, loaded (no file or package is read). */
export interface ManifestInputs {
  readonly bench: { readonly name: string };
  /**
   * The bench's code: its file's text or bytes, or the file and the files it imports by relative
   * path (`importedSourceFiles`; `benchFiles` of `@kb/runtime/node` reads them). Their
   * {@link sourceFilesDigest} is the bench's digest: for a lone file, the sha256 of its bytes.
   */
  readonly benchSource: string | Uint8Array | SourceFiles;
  /** The resolved topology (every default filled in, as `parseTopology` gives it). */
  readonly topology: Topology;
  /** The plug-ins the run loads (the topology's and any others), with the digests of their code. */
  readonly plugins: readonly DigestedPlugin[];
  /** The bench params after defaults (`parseBenchParams`). */
  readonly params: Readonly<Record<string, unknown>>;
  /** Run options that change the results (verify, checkPhases). */
  readonly options: Readonly<Record<string, unknown>>;
  /** The bytes of each data file the params name (`dataFileParams`), by param: their sha256 go in `dataFiles`. */
  readonly dataFiles?: Readonly<Record<string, Uint8Array>>;
  /** Versions of the @kb packages the run uses, by name. */
  readonly packages: Readonly<Record<string, string>>;
  /** The manifest's `node` field (default {@link runtimeVersion}). */
  readonly runtime?: string;
}

/**
 * A run's manifest from its loaded inputs, on any platform: the digests of the topology, the
 * plug-ins and the bench source, the params, seed, options and package versions. The Node
 * manifest (`runManifest` of `@kb/runtime/node`) reads the files and calls this; a browser passes
 * the editor's text, so the same inputs give the same digest in both.
 */
export async function manifestOf(inputs: ManifestInputs): Promise<RunManifest> {
  const params = inputs.params as Record<string, unknown>;
  return completeManifest({
    packages: { ...inputs.packages },
    plugins: await Promise.all(
      inputs.plugins.map(async (plugin) => ({
        name: plugin.meta.name,
        version: plugin.meta.version,
        digest: await pluginDigest(plugin),
      })),
    ),
    topology: { name: inputs.topology.name, digest: await sha256Hex(canonicalJson(inputs.topology)) },
    bench: { name: inputs.bench.name, digest: await sourceFilesDigest(benchFilesOf(inputs.benchSource)) },
    params: { ...params },
    ...(await dataFileDigests(inputs.dataFiles)),
    seed: typeof params.seed === "number" ? params.seed : null,
    options: { ...inputs.options },
    node: inputs.runtime ?? runtimeVersion(),
  });
}

/** `{ dataFiles }` with the sha256 of each file by param, or nothing when there are none. */
async function dataFileDigests(
  files: Readonly<Record<string, Uint8Array>> | undefined,
): Promise<{ dataFiles?: Record<string, string> }> {
  const params = Object.keys(files ?? {}).sort();
  if (files === undefined || params.length === 0) return {};
  const dataFiles: Record<string, string> = {};
  for (const param of params) dataFiles[param] = await sha256Hex(files[param] as Uint8Array);
  return { dataFiles };
}

/**
 * The manifest's `node` field for this host: Node's `process.version`, else `browser` and the
 * engine named by the user agent (`browser Chrome/131.0.6778.85`, `browser Firefox/133.0`,
 * `browser Safari/18.1`), else `unknown`.
 */
export function runtimeVersion(): string {
  const host = globalThis as { process?: { versions?: { node?: string }; version?: string } };
  if (host.process?.versions?.node !== undefined && host.process.version !== undefined) {
    return host.process.version;
  }
  const agent = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent;
  if (agent === undefined) return "unknown";
  const engine =
    /\b(?:HeadlessChrome|Chrome|Firefox)\/[\d.]+/.exec(agent)?.[0] ??
    /\bVersion\/([\d.]+).*\bSafari\//.exec(agent)?.[1]?.replace(/^/, "Safari/");
  return `browser ${engine ?? agent}`;
}

/**
 * A loaded plug-in with the digest of the code the loader read (`pluginCodeDigest` of
 * `@kb/runtime/node` of its `KbPlugin.codeSource`: its package folder's files, or its file and the
 * files it imports by relative path, by {@link sourceFilesDigest}); none for a plug-in built in
 * memory.
 */
export interface DigestedPlugin extends KbPlugin {
  readonly codeDigest?: string | undefined;
}

/**
 * A plug-in's digest: the sha256 of the canonical JSON of its meta, the digest of its code
 * ({@link DigestedPlugin.codeDigest}) and, for each component, its kind, impl, description, flags
 * and the source text of its `create` function. An edit to any file of the plug-in changes it; a
 * plug-in built in memory (no `codeDigest`) is covered by its metadata and factories only.
 */
export function pluginDigest(plugin: DigestedPlugin): Promise<string> {
  return sha256Hex(
    canonicalJson({
      meta: plugin.meta,
      code: plugin.codeDigest,
      components: plugin.components.map((component) => ({
        kind: component.kind,
        impl: component.impl,
        description: component.description,
        alsoKinds: component.alsoKinds,
        analytic: component.analytic,
        create: codeOf(component),
      })),
    }),
  );
}

/**
 * The source text a plug-in component runs: a framework definition's `create`; for a timing model
 * written on @kb/spec (plain data), each of its functions (`create`, `timing`, `process`, ...)
 * by name, in name order.
 */
function codeOf(component: KbPlugin["components"][number]): string {
  if (component.contract === undefined) return component.create.toString();
  return Object.entries(component)
    .filter((entry): entry is [string, () => unknown] => typeof entry[1] === "function")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, fn]) => `${name}: ${fn.toString()}`)
    .join("\n");
}
