import { builtinModules } from "node:module";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Metafile, type Plugin } from "esbuild";

// Bundling for the browser as a user's bundler would (esbuild, platform "browser", nothing made
// external by hand), from the packages' sources: `@kb/<name>` and `@kb/<name>/<entry>` resolve to
// `packages/<name>/src/<entry>.ts` as in vitest and the root tsconfig, so no build is needed.
// A Node built-in is not an error here but a finding, with the chain of imports that reached it.

/** The repository's root folder, with a trailing slash. */
export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** A Node built-in a bundle imports, and how the entry reached it. */
export interface NodeImport {
  /** The import as written (`node:fs`, `fs/promises`). */
  readonly module: string;
  /** Files from the entry to the importing file, relative to the repository, then the module. */
  readonly chain: readonly string[];
}

/** What {@link bundleForBrowser} returns. */
export interface BrowserBundle {
  /** The bundle, an ES module. */
  readonly code: string;
  /** Every Node built-in it imports (left external so that all are found, not just the first). */
  readonly nodeImports: readonly NodeImport[];
}

const NODE_BUILTIN = new RegExp(
  `^(node:.*|(${builtinModules.map((name) => name.replace(/[/\\-]/g, "\\$&")).join("|")})(/.*)?)$`,
);

const kbSources: Plugin = {
  name: "kb-sources",
  setup(build) {
    build.onResolve({ filter: /^@kb\/[a-z-]+(\/[a-z-]+)?$/ }, ({ path }) => {
      const [, name, entry] = /^@kb\/([a-z-]+)(?:\/([a-z-]+))?$/.exec(path) as RegExpExecArray;
      return { path: `${repoRoot}packages/${name}/src/${entry ?? "index"}.ts` };
    });
  },
};

/**
 * Bundles `entry` (a file, absolute or relative to the repository) for the browser, minified
 * when asked. Throws esbuild's error for anything else it cannot resolve.
 */
export async function bundleForBrowser(
  entry: string,
  options: { minify?: boolean } = {},
): Promise<BrowserBundle> {
  const found: { module: string; importer: string }[] = [];
  const nodeBuiltins: Plugin = {
    name: "node-builtins",
    setup(build) {
      build.onResolve({ filter: NODE_BUILTIN }, ({ path, importer }) => {
        found.push({ module: path, importer: relative(repoRoot, importer) });
        return { path, external: true };
      });
    },
  };
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: repoRoot,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    minify: options.minify ?? false,
    write: false,
    metafile: true,
    logLevel: "silent",
    plugins: [kbSources, nodeBuiltins],
  });
  const entryFile = relative(repoRoot, entry.startsWith("/") ? entry : `${repoRoot}${entry}`);
  const parents = importParents(result.metafile, entryFile);
  const nodeImports = found.map(({ module, importer }) => ({
    module,
    chain: [...chainTo(parents, importer), module],
  }));
  return { code: result.outputFiles[0]?.text ?? "", nodeImports };
}

/** `a -> b -> node:fs`: a finding as the failure message shows it. */
export function formatChain(found: NodeImport): string {
  return found.chain.join(" -> ");
}

/** The first importer of each input on a breadth-first walk from `entry` (shortest chains). */
function importParents(metafile: Metafile, entry: string): Map<string, string | null> {
  const parents = new Map<string, string | null>([[entry, null]]);
  const queue = [entry];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const imported of metafile.inputs[next]?.imports ?? []) {
      if (imported.external === true || parents.has(imported.path)) continue;
      parents.set(imported.path, next);
      queue.push(imported.path);
    }
  }
  return parents;
}

function chainTo(parents: Map<string, string | null>, file: string): string[] {
  const chain: string[] = [];
  for (let at: string | null | undefined = file; at != null; at = parents.get(at)) chain.unshift(at);
  return chain;
}
