#!/usr/bin/env node
// `pnpm release`: version, build and publish the workspace's public packages (docs/releasing.md).
//
//   node scripts/release.mjs [options]
//     --registry URL     publish to this registry (default: npm's configured one)
//     --userconfig FILE  npm config to publish with (credentials)
//     --pack DIR         write the tarballs into DIR instead of publishing (no version bump):
//                        what `npm install DIR/*.tgz` installs with no registry for @kb
//     --no-version       do not run `changeset version` first
//     --no-build         do not build first (the packages' dist/ must exist)
//     --provenance       publish with provenance (or NPM_CONFIG_PROVENANCE=true, as npm reads
//                        it; only from a CI npm supports, such as GitHub Actions)
//     --dry-run          npm publish --dry-run: pack and check, publish nothing
//     --root DIR         the workspace to release (default: this repository)
//     --json FILE        write what was published or packed: [{ name, version, files }]
//
// Each package is staged in a temp folder as it is published: its package.json with the
// `workspace:` ranges made versions (as pnpm publish writes them) and no devDependencies, its
// `files`, README.md and the repository's LICENSE. Packages go in dependency order, each checked
// to carry LICENSE, README.md and its types; a version already on the registry is skipped, so a
// release stopped halfway is finished by running it again.
//
// The npm scope is set in one place, the root package.json's `kbRelease.scope` ("@kb"). Under
// another scope (say "@kernbench", if "@kb" cannot be had) each @kb/NAME is published as
// @kernbench/NAME and depended on through an npm alias ("@kb/des": "npm:@kernbench/des@^1.0.0"),
// so it still installs as node_modules/@kb/NAME and the code's `@kb/...` imports stay as they are.

import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..");

/** The command line, parsed. */
function parseArgs(argv) {
  const options = { version: true, build: true, provenance: false, dryRun: false };
  const value = (i, flag) => {
    const next = argv[i + 1];
    if (next === undefined || next.startsWith("--")) fail(`${flag} needs a value`);
    return next;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--registry") options.registry = value(i++, flag);
    else if (flag === "--userconfig") options.userconfig = resolve(value(i++, flag));
    else if (flag === "--pack") options.pack = resolve(value(i++, flag));
    else if (flag === "--root") options.root = resolve(value(i++, flag));
    else if (flag === "--json") options.json = resolve(value(i++, flag));
    else if (flag === "--no-version") options.version = false;
    else if (flag === "--no-build") options.build = false;
    else if (flag === "--provenance") options.provenance = true;
    else if (flag === "--dry-run") options.dryRun = true;
    else fail(`unknown option ${flag}; see the top of scripts/release.mjs`);
  }
  return options;
}

function fail(message) {
  process.stderr.write(`release: ${message}\n`);
  process.exit(1);
}

/** The workspace's package folders (the globs of pnpm-workspace.yaml), with their manifests. */
export function workspacePackages(root) {
  const dirs = ["packages", "apps", "examples"]
    .filter((group) => existsSync(join(root, group)))
    .flatMap((group) => readdirSync(join(root, group)).map((name) => join(root, group, name)));
  dirs.push(join(root, "benches"));
  return dirs
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({ dir, json: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }));
}

/** The public packages, each after the workspace packages it depends on. */
export function dependencyOrder(packages) {
  const byName = new Map(packages.map((pkg) => [pkg.json.name, pkg]));
  const ordered = [];
  const seen = new Set();
  const visit = (pkg) => {
    if (seen.has(pkg.json.name)) return;
    seen.add(pkg.json.name);
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
      for (const name of Object.keys(pkg.json[field] ?? {})) {
        const dependency = byName.get(name);
        if (dependency !== undefined) visit(dependency);
      }
    }
    ordered.push(pkg);
  };
  for (const pkg of [...packages].sort((a, b) => a.json.name.localeCompare(b.json.name))) visit(pkg);
  return ordered.filter((pkg) => pkg.json.private !== true);
}

/** The scope to publish under: the root package.json's `kbRelease.scope`, default "@kb". */
export function publishScope(root) {
  const json = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const scope = json.kbRelease?.scope ?? "@kb";
  if (!/^@[a-z0-9][a-z0-9._~-]*$/.test(scope))
    throw new Error(`kbRelease.scope "${scope}" is not an npm scope`);
  return scope;
}

/** The name `name` is published under with `scope`: @kb/NAME becomes SCOPE/NAME. */
export function publishedName(name, scope) {
  return scope === "@kb" || !name.startsWith("@kb/") ? name : `${scope}/${name.slice("@kb/".length)}`;
}

/**
 * `json` as published under `scope`: `workspace:` ranges made versions, @kb dependencies as npm
 * aliases of their published names when the scope is not @kb, no devDependencies.
 */
export function publishedManifest(json, versions, scope = "@kb") {
  const out = structuredClone(json);
  out.name = publishedName(json.name, scope);
  delete out.devDependencies;
  for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
    const ranges = out[field];
    for (const [name, range] of Object.entries(ranges ?? {})) {
      if (!range.startsWith("workspace:")) continue;
      const spec = range.slice("workspace:".length);
      const version = versions.get(name);
      if (version === undefined)
        throw new Error(`${json.name} depends on ${name}, which is not in the workspace`);
      ranges[name] = spec === "*" ? version : spec === "^" || spec === "~" ? spec + version : spec;
    }
    for (const [name, range] of Object.entries(ranges ?? {})) {
      if (publishedName(name, scope) !== name) ranges[name] = `npm:${publishedName(name, scope)}@${range}`;
    }
  }
  return out;
}

/** Copies what `pkg` publishes into `stage` with its published package.json. */
function stagePackage(root, pkg, versions, scope, stage) {
  mkdirSync(stage, { recursive: true });
  for (const entry of [...(pkg.json.files ?? []), "README.md"]) {
    const from = join(pkg.dir, entry);
    if (!existsSync(from)) {
      if (entry === "README.md") continue;
      throw new Error(`${pkg.json.name}: ${entry} is missing in ${pkg.dir}; build first (pnpm build)`);
    }
    cpSync(from, join(stage, entry), { recursive: true });
  }
  cpSync(join(root, "LICENSE"), join(stage, "LICENSE"));
  writeFileSync(
    join(stage, "package.json"),
    `${JSON.stringify(publishedManifest(pkg.json, versions, scope), null, 2)}\n`,
  );
}

/** What a published package must carry; the missing ones, named. */
function missingFiles(json, files) {
  const paths = new Set(files.map((file) => file.path));
  const required = ["LICENSE", "README.md", "package.json"];
  if (typeof json.types === "string") required.push(json.types.replace(/^\.\//, ""));
  return required.filter((path) => !paths.has(path));
}

function npm(args, cwd, options) {
  const config = [
    ...(options.registry === undefined ? [] : ["--registry", options.registry]),
    ...(options.userconfig === undefined ? [] : ["--userconfig", options.userconfig]),
  ];
  return execFileSync("npm", [...args, ...config], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Whether npm refused a publish because that version is on the registry already. */
function alreadyPublished(error) {
  const text = `${error?.stderr ?? ""}${error?.stdout ?? ""}${error?.message ?? ""}`;
  return /EPUBLISHCONFLICT|cannot publish over|previously published|already present/i.test(text);
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const root = options.root ?? repo;
  const run = (command, args) => execFileSync(command, args, { cwd: root, stdio: "inherit" });
  if (options.version && options.pack === undefined) {
    run(process.execPath, [join(repo, "node_modules", "@changesets", "cli", "bin.js"), "version"]);
  }
  const packages = workspacePackages(root);
  if (options.build) {
    // The public packages and what they build from (not the playground, not the perf suites).
    const filters = dependencyOrder(packages).map((pkg) => `--filter=${pkg.json.name}...`);
    run(process.execPath, [join(repo, "node_modules", "turbo", "bin", "turbo"), "run", "build", ...filters]);
  }
  const versions = new Map(packages.map((pkg) => [pkg.json.name, pkg.json.version]));
  const scope = publishScope(root);
  const stages = mkdtempSync(join(tmpdir(), "kb-release-"));
  const report = [];
  try {
    for (const pkg of dependencyOrder(packages)) {
      const { version } = pkg.json;
      const name = publishedName(pkg.json.name, scope);
      const stage = join(stages, name.replace("/", "+"));
      stagePackage(root, pkg, versions, scope, stage);
      let out;
      if (options.pack !== undefined) {
        mkdirSync(options.pack, { recursive: true });
        out = npm(["pack", stage, "--pack-destination", options.pack, "--json"], stages, options);
      } else {
        const flags = ["--access", "public", "--ignore-scripts", "--json"];
        if (options.provenance) flags.push("--provenance");
        if (options.dryRun) flags.push("--dry-run");
        try {
          out = npm(["publish", stage, ...flags], stages, options);
        } catch (error) {
          if (!alreadyPublished(error))
            throw new Error(`npm publish of ${name}@${version} failed: ${error.stderr ?? error}`);
          process.stdout.write(`release: ${name}@${version} is published already, skipped\n`);
          continue;
        }
      }
      const parsed = JSON.parse(out.slice(out.indexOf(out.trimStart().startsWith("[") ? "[" : "{")));
      const files = (Array.isArray(parsed) ? parsed[0] : (parsed[name] ?? parsed)).files ?? [];
      const missing = missingFiles(pkg.json, files);
      if (missing.length > 0) throw new Error(`${name}@${version} lacks ${missing.join(", ")}`);
      report.push({ name, version, files: files.map((file) => file.path).sort() });
      const what = options.pack !== undefined ? "packed" : options.dryRun ? "checked (dry run)" : "published";
      process.stdout.write(`release: ${what} ${name}@${version} (${files.length} files)\n`);
    }
  } finally {
    rmSync(stages, { recursive: true, force: true });
  }
  if (options.json !== undefined) writeFileSync(options.json, `${JSON.stringify(report, null, 2)}\n`);
  if (options.pack === undefined && !options.dryRun && options.root === undefined) {
    process.stdout.write("release: done; tag it with `npx changeset tag && git push --follow-tags`\n");
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}
