import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { KbPlugin } from "@kb/components";
import { loadPlugins, loadTopologyPlugins } from "@kb/components/node";
import { readUserFile } from "@kb/errors/node";
import { resolveTopology, type Topology, type TopologyInput } from "@kb/topology";
import { loadTopologyFile } from "@kb/topology/node";
import type { Bench } from "../bench.js";
import { MANIFEST_PACKAGES } from "../bench-imports.js";
import { type DigestedPlugin, manifestOf, type RunManifest } from "../manifest.js";
import { readDataFiles } from "./data-files-node.js";
import { PLUGIN_SHARED_MODULES } from "./plugin-modules.js";
import { benchFiles, pluginCodeDigest } from "./source-files-node.js";

/** The @kb packages a run of `@kb/runtime` uses: itself and what it depends on (not the CLI's own). */
const RUNTIME_PACKAGES = MANIFEST_PACKAGES.filter((name) => name !== "@kb/cli" && name !== "@kb/ccl");

/**
 * The versions of packages, by name, read from each one's `package.json` (every @kb package
 * exports `./package.json`) as resolved from `from` (a file URL or path; default this package).
 * A package that cannot be resolved from there is left out.
 */
export function packageVersions(
  names: readonly string[] = RUNTIME_PACKAGES,
  from: string | URL = import.meta.url,
): Record<string, string> {
  const require = createRequire(from);
  const versions: Record<string, string> = {};
  for (const name of [...names].sort()) {
    try {
      const json = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")) as {
        version?: unknown;
      };
      if (typeof json.version === "string") versions[name] = json.version;
    } catch {
      // Not installed beside `from`: not part of this run.
    }
  }
  return versions;
}

/** The largest bench file digested: 16 MiB (a bench is a few KB of TypeScript). */
const BENCH_FILE_MAX_BYTES = 16 * 2 ** 20;

/** What {@link runManifest} describes. */
export interface RunManifestOptions {
  readonly bench: Bench;
  /** The bench's file: it and the files it imports by relative path are the bench's digest. */
  readonly benchFile: string;
  /** A topology file path, or a topology object. */
  readonly topology: string | TopologyInput;
  /** The bench params after defaults (`parseBenchParams`). */
  readonly params: Readonly<Record<string, unknown>>;
  /** Plug-ins beyond the topology's own `plugins:` (names or paths, as `--plugin` takes them). */
  readonly plugins?: readonly string[];
  /** Run options that change the results (verify, checkPhases). */
  readonly options?: Readonly<Record<string, unknown>>;
  /** Package versions (default: {@link packageVersions} of @kb/runtime and its dependencies). */
  readonly packages?: Readonly<Record<string, string>>;
}

/**
 * A run's manifest (`RunResults.manifest`, `kb run --manifest-only`) without running it: the
 * resolved topology and its digest, the plug-ins it loads (imported to read their metadata), the
 * bench file's digest, params, seed, options, package versions and the Node version (`manifestOf`
 * with the files read). Throws what loading the topology and the plug-ins throws.
 */
export async function runManifest(options: RunManifestOptions): Promise<RunManifest> {
  const extra = options.plugins ?? [];
  let topology: Topology;
  let plugins: readonly KbPlugin[];
  if (typeof options.topology === "string") {
    topology = loadTopologyFile(options.topology);
    plugins = await loadTopologyPlugins(options.topology, topology, extra, PLUGIN_SHARED_MODULES);
  } else {
    topology = resolveTopology(options.topology);
    plugins = await loadPlugins([...topology.plugins, ...extra], {
      from: process.cwd(),
      shared: PLUGIN_SHARED_MODULES,
    });
  }
  // Read first for its checks (a missing, unreadable or oversized file is a located error).
  readUserFile(options.benchFile, {
    what: "bench file",
    maxBytes: BENCH_FILE_MAX_BYTES,
    code: "RUNTIME_INVALID",
  });
  return manifestOf({
    bench: options.bench,
    benchSource: benchFiles(options.benchFile),
    topology,
    plugins: await Promise.all(plugins.map(withCodeDigest)),
    params: options.params,
    dataFiles: readDataFiles(options.bench, options.params),
    options: options.options ?? {},
    packages: options.packages ?? packageVersions(),
    runtime: process.version,
  });
}

/** A loaded plug-in with the digest of the files it was loaded from (`codeSource`), when it was. */
async function withCodeDigest(plugin: KbPlugin): Promise<DigestedPlugin> {
  return plugin.codeSource === undefined
    ? plugin
    : { ...plugin, codeDigest: await pluginCodeDigest(plugin.codeSource) };
}
