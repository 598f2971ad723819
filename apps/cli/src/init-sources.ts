import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { KbError } from "@kb/errors";

// Where the @kb packages of a `kb init` project come from: the registry once they are published
// (a registry install of kb), else the very packages this kb runs with, so that a plain
// `npm install` resolves them with no @kb package on any registry: `file:` links to the
// folders of a kernbench-ts clone (each links its own dependencies, installed in the clone), or
// `file:` paths to the tarballs kb itself was installed from (then every @kb package the project
// needs, transitively, is listed: npm finds them at the top level instead of asking a registry).

/** How this kb's @kb packages were installed, which decides what `kb init` depends on. */
export type KbSource =
  | { readonly kind: "registry" }
  /** A kernbench-ts workspace (a clone): `root` is its top folder. */
  | { readonly kind: "clone"; readonly root: string }
  /** npm installed kb from tarballs: each package's `.tgz`, by name (absolute paths). */
  | { readonly kind: "tarballs"; readonly tarballs: ReadonlyMap<string, string> };

/** A package.json, as far as kb init reads it. */
interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies?: Readonly<Record<string, string>>;
}

/** The CLI's own folder (apps/cli in a clone, node_modules/@kb/cli when installed). */
const CLI_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(CLI_DIR, "package.json"));

/** The package.json of `name` as this kb resolves it (`@kb/cli`: kb's own). */
export function installedManifest(name: string): Manifest {
  const file = name === "@kb/cli" ? join(CLI_DIR, "package.json") : require.resolve(`${name}/package.json`);
  return JSON.parse(readFileSync(file, "utf8")) as Manifest;
}

/** The real folder of `name` as this kb resolves it. */
function installedDir(name: string): string {
  if (name === "@kb/cli") return realpathSync(CLI_DIR);
  return realpathSync(dirname(require.resolve(`${name}/package.json`)));
}

let detected: KbSource | undefined;

/**
 * Where this kb's packages come from: a clone when its package.json still has `workspace:`
 * ranges (never so once published), tarballs when npm's lockfile beside its `node_modules`
 * records `file:...tgz` for it, else the registry.
 */
export function kbSource(): KbSource {
  detected ??= detectSource();
  return detected;
}

function detectSource(): KbSource {
  const own = installedManifest("@kb/cli");
  if (Object.values(own.dependencies ?? {}).some((range) => range.startsWith("workspace:"))) {
    return { kind: "clone", root: resolve(installedDir("@kb/cli"), "..", "..") };
  }
  // .../node_modules/@kb/cli: npm's hidden lockfile is .../node_modules/.package-lock.json, its
  // paths relative to the folder that holds node_modules.
  const modules = dirname(dirname(CLI_DIR));
  if (basename(modules) !== "node_modules") return { kind: "registry" };
  const project = dirname(modules);
  const tarballs = new Map<string, string>();
  for (const lockfile of [join(modules, ".package-lock.json"), join(project, "package-lock.json")]) {
    if (!existsSync(lockfile)) continue;
    let lock: { packages?: Record<string, { resolved?: string }> };
    try {
      lock = JSON.parse(readFileSync(lockfile, "utf8")) as typeof lock;
    } catch {
      continue;
    }
    for (const [path, entry] of Object.entries(lock.packages ?? {})) {
      const name = /^node_modules\/(@kb\/[^/]+)$/.exec(path)?.[1];
      const resolved = entry.resolved;
      if (name === undefined || resolved === undefined) continue;
      if (resolved.startsWith("file:") && resolved.endsWith(".tgz")) {
        tarballs.set(name, resolve(project, resolved.slice("file:".length)));
      }
    }
    if (tarballs.size > 0) break;
  }
  return tarballs.has("@kb/cli") ? { kind: "tarballs", tarballs } : { kind: "registry" };
}

/** `names` and every @kb package they depend on, as this kb has them installed, sorted. */
function withKbDependencies(names: readonly string[]): string[] {
  const all = new Set<string>();
  const visit = (name: string) => {
    if (all.has(name)) return;
    all.add(name);
    for (const dependency of Object.keys(installedManifest(name).dependencies ?? {})) {
      if (dependency.startsWith("@kb/")) visit(dependency);
    }
  };
  for (const name of names) visit(name);
  return [...all].sort();
}

/**
 * `^version` of an @kb package as this kb has it; published under another scope than @kb (the
 * release's `kbRelease.scope`, docs/releasing.md), an npm alias of it, so that it installs as
 * `node_modules/@kb/NAME`, where the code imports it from.
 */
function registrySpec(name: string): string {
  const range = `^${installedManifest(name).version}`;
  const scope = installedManifest("@kb/cli").name.split("/")[0] ?? "@kb";
  return scope === "@kb" ? range : `npm:${scope}/${name.slice("@kb/".length)}@${range}`;
}

/** A `file:` spec of `target` as npm writes it in `dir`'s package.json (relative, `/`). */
function fileSpec(dir: string, target: string): string {
  const path = relative(dir, target).split(sep).join("/");
  return `file:${path.startsWith(".") ? path : `./${path}`}`;
}

/**
 * The dependency specs of a project in `dir` for the @kb packages `groups` name (e.g.
 * `dependencies` and `devDependencies`), from `source`: `^version` from the registry, `file:`
 * links to a clone's folders, or `file:` tarball paths, the latter with every @kb package they
 * need added to the first group that needs it.
 *
 * Throws a `KbError` (`CLI_USAGE`) when kb was installed from tarballs but not from one of a
 * package it needs (so `npm install` would ask a registry for it).
 */
export function kbDependencies<G extends string>(
  groups: Readonly<Record<G, readonly string[]>>,
  dir: string,
  source: KbSource = kbSource(),
): Record<G, Record<string, string>> {
  const out = {} as Record<G, Record<string, string>>;
  const listed = new Set<string>();
  for (const group of Object.keys(groups) as G[]) {
    const names = source.kind === "tarballs" ? withKbDependencies(groups[group]) : [...groups[group]];
    const specs: Record<string, string> = {};
    for (const name of names) {
      if (listed.has(name)) continue;
      listed.add(name);
      if (source.kind === "registry") specs[name] = registrySpec(name);
      else if (source.kind === "clone") specs[name] = fileSpec(dir, installedDir(name));
      else {
        const tarball = source.tarballs.get(name);
        if (tarball === undefined || !existsSync(tarball)) {
          throw new KbError(
            "CLI_USAGE",
            `kb init: this kb was installed from tarballs, but ${tarball === undefined ? `not ${name} from one` : `${name}'s tarball ${tarball} is gone`}; a project needs it. ` +
              "Install kb with every @kb tarball (npm install /path/to/tarballs/*.tgz, made by `npx -y pnpm@10 release --pack DIR` in a clone), then run kb init again.",
          );
        }
        specs[name] = fileSpec(dir, tarball);
      }
    }
    out[group] = specs;
  }
  return out;
}

/** What the generated README says of where the @kb packages come from (Markdown). */
export function sourceNote(source: KbSource = kbSource()): string {
  switch (source.kind) {
    case "registry":
      return "The `@kb` packages come from the npm registry, at the versions of the `kb` that made this folder.";
    case "clone":
      return (
        `The \`@kb\` packages are \`file:\` links to the kernbench-ts clone in \`${source.root}\` (the \`kb\` that made ` +
        "this folder ran from it, and they are not on a registry yet): keep that clone where it is, installed " +
        "and built (`npx -y pnpm@10 install && npx -y pnpm@10 build` there). Once they are published, " +
        "`npm install` them by name (`npm install @kb/<name>`) to depend on registry versions instead."
      );
    case "tarballs":
      return (
        `The \`@kb\` packages are \`file:\` paths to the tarballs the \`kb\` that made this folder was installed from (in \`${dirname(source.tarballs.get("@kb/cli") ?? "")}\`), ` +
        "every one the project needs listed, so `npm install` asks no registry for them: keep those files " +
        "where they are. Once the packages are published, `npm install` them by name (`npm install @kb/<name>`) " +
        "to depend on registry versions instead."
      );
  }
}

/** One line for kb init's output: where the @kb packages come from. */
export function sourceLine(source: KbSource = kbSource()): string {
  switch (source.kind) {
    case "registry":
      return "@kb packages: from the npm registry";
    case "clone":
      return `@kb packages: file: links to the kernbench-ts clone in ${source.root} (not published yet; see README.md)`;
    case "tarballs":
      return `@kb packages: file: paths to the tarballs kb was installed from (not published yet; see README.md)`;
  }
}
