import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { KbError } from "@kb/errors";
import type { Command } from "commander";
import { shippedDir } from "./bench-files.js";
import {
  installedManifest,
  type KbSource,
  kbDependencies,
  kbSource,
  sourceLine,
  sourceNote,
} from "./init-sources.js";
import type { CliIo } from "./run-cli.js";

// `kb init [DIR]`: a project (a bench with its kernel and reference, a topology, a tsconfig) or,
// with --plugin, a plug-in package, each running as generated. The files come from
// apps/cli/templates/ ({{name}} and {{kbPackages}} replaced), the package.json is written here
// with the @kb packages this kb runs with (registry ranges, or file: specs when kb is not a
// registry install: init-sources.ts), and the project's topology is kb's shipped default.

/** Options of `kb init` as commander parses them. */
interface InitOptions {
  plugin?: boolean;
  name?: string;
}

/** What {@link scaffold} makes. */
export interface ScaffoldOptions {
  /** A plug-in package rather than a project. */
  readonly plugin?: boolean;
  /** The package name; default: from the folder's name (`kb-plugin-<folder>` for a plug-in). */
  readonly name?: string;
  /** Where the @kb packages come from; default: where this kb's came from ({@link kbSource}). */
  readonly source?: KbSource;
}

/** The templates: `templates/` beside `src/` and `dist/`. */
const TEMPLATES = resolve(dirname(fileURLToPath(import.meta.url)), "..", "templates");

/** Type checking of what kb init makes (not a runtime need: kb runs .ts files as they are). */
const DEV_TOOLS = { "@types/node": "^20.19.0", typescript: "~5.9.3" };

/** A plug-in's test runner (its src/index.test.ts). */
const VITEST = "^4.1.0";

/** Adds `kb init [dir]` to the program. */
export function addInitCommand(program: Command, io: CliIo): Command {
  return program
    .command("init")
    .summary("create a project (a bench, a topology) or, with --plugin, a plug-in package")
    .description(
      "Create a kernbench project in DIR (default: the current folder): package.json with the @kb " +
        "packages its bench imports, topologies/default.yaml (a copy of kb's default design point), " +
        "benches/my-bench.ts (a kernel, its host reference and its params), tsconfig.json, README.md " +
        "and .gitignore. With --plugin, a plug-in package instead: src/index.ts (a PE_GEMM impl), " +
        "topologies/example.yaml that uses it, src/index.test.ts with vitest.config.ts, package.json " +
        "(keyword kb-plugin, @kb/spec and zod as peers), tsconfig.json, README.md. The @kb " +
        "packages are registry ranges when kb was installed from a registry, else file: specs of the " +
        "packages this kb runs with (links to its clone, or the tarballs it was installed from), so " +
        "npm install needs no registry for them. Existing files are never overwritten: kb init stops " +
        "and names them.",
    )
    .argument("[dir]", "folder to create or fill", ".")
    .option("--plugin", "create a plug-in package instead of a project")
    .option("--name <name>", "package name (default: the folder's name; kb-plugin-NAME for a plug-in)")
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb init my-project && cd my-project && npm install && npx kb run my-bench --verify\n" +
        "  kb init --plugin kb-plugin-big-gemm && cd kb-plugin-big-gemm && npx kb probe --topology topologies/example.yaml",
    )
    .action((dir: string, options: InitOptions) => {
      const target = resolve(dir);
      const made = scaffold(target, {
        ...(options.plugin === true ? { plugin: true } : {}),
        ...(options.name !== undefined ? { name: options.name } : {}),
      });
      const where = relative(process.cwd(), target) || ".";
      const cd = where === "." ? "" : `  cd ${where}\n`;
      const next =
        options.plugin === true
          ? "  npm test\n  npx kb probe --topology topologies/example.yaml\n  npx kb run gemm --topology topologies/example.yaml --verify\n"
          : "  npx kb run my-bench --verify\n";
      io.stdout.write(
        `kb init: created ${options.plugin === true ? "the plug-in package" : "the project"} ${made.name} in ${target}:\n` +
          made.files.map((file) => `  ${file}\n`).join("") +
          `${sourceLine()}\n` +
          `next:\n${cd}  npm install\n${next}`,
      );
    });
}

/**
 * Writes a project (or a plug-in package) into `dir`, creating it if needed, and returns the
 * package name and the files written (relative, sorted). Throws a `KbError` (`CLI_USAGE`) when
 * `dir` is a file, the name is not an npm package name, or a file it would write exists.
 */
export function scaffold(dir: string, options: ScaffoldOptions = {}): { name: string; files: string[] } {
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    throw new KbError(
      "CLI_USAGE",
      `kb init: ${dir} is a file; give a folder (a new one, or one without these files).`,
    );
  }
  const plugin = options.plugin === true;
  const name = options.name ?? nameOf(dir, plugin);
  if (!PACKAGE_NAME.test(name)) {
    throw new KbError(
      "CLI_USAGE",
      `kb init: "${name}" is not an npm package name (lower case letters, digits, - . _ ~, optionally @scope/): pass --name.`,
    );
  }
  const source = options.source ?? kbSource();
  const files = new Map<string, string>();
  const templates = join(TEMPLATES, plugin ? "plugin" : "project");
  for (const file of listFiles(templates)) {
    // npm leaves .gitignore out of a package: the template is named gitignore.
    const target = file === "gitignore" ? ".gitignore" : file;
    const text = readFileSync(join(templates, file), "utf8");
    files.set(target, text.replaceAll("{{name}}", name).replaceAll("{{kbPackages}}", sourceNote(source)));
  }
  const manifest = plugin ? pluginPackage(name, dir, source) : projectPackage(name, dir, source);
  files.set("package.json", `${JSON.stringify(manifest, null, 2)}\n`);
  if (!plugin) files.set(join("topologies", "default.yaml"), projectTopology());

  const existing = [...files.keys()].filter((file) => existsSync(join(dir, file))).sort();
  if (existing.length > 0) {
    throw new KbError(
      "CLI_USAGE",
      `kb init: ${existing.join(", ")} already ${existing.length === 1 ? "exists" : "exist"} in ${dir}; kb init never overwrites a file. Choose a new folder, or move ${existing.length === 1 ? "it" : "them"} away.`,
    );
  }
  for (const [file, text] of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return { name, files: [...files.keys()].sort() };
}

// npm's rules for a package name, scoped or not (lower case, URL-safe).
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** A package name from a folder's name: lower case, other characters as `-`. */
function nameOf(dir: string, plugin: boolean): string {
  const base =
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9._~-]+/g, "-")
      .replace(/^[-._~]+|-+$/g, "") || (plugin ? "my-plugin" : "my-project");
  return plugin && !base.startsWith("kb-plugin-") ? `kb-plugin-${base}` : base;
}

/** The files under `dir`, relative, with `/` separators. */
function listFiles(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? listFiles(join(dir, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}

/** The package.json of a project: what its bench imports, and kb and TypeScript to run and check it. */
function projectPackage(name: string, dir: string, source: KbSource): Record<string, unknown> {
  const zod = installedManifest("@kb/cli").dependencies?.zod;
  const kb = kbDependencies(
    { dependencies: ["@kb/runtime", "@kb/tensor", "@kb/tl"], devDependencies: ["@kb/cli"] },
    dir,
    source,
  );
  return {
    name,
    version: "0.1.0",
    private: true,
    type: "module",
    scripts: {
      bench: "kb run my-bench",
      verify: "kb run my-bench --verify",
      probe: "kb probe",
      typecheck: "tsc",
    },
    dependencies: { ...kb.dependencies, zod },
    devDependencies: { ...kb.devDependencies, ...DEV_TOOLS },
  };
}

/**
 * The package.json of a plug-in: ESM, built to dist/, written on the contracts alone: @kb/spec and
 * zod as peers (a range even when the dev dependency is a file: spec), tested with vitest against
 * the machine and the built-in models (@kb/components and @kb/builtins, dev dependencies: its test
 * builds machines with `defaultRegistry`).
 */
function pluginPackage(name: string, dir: string, source: KbSource): Record<string, unknown> {
  const zod = installedManifest("@kb/cli").dependencies?.zod;
  const kb = kbDependencies(
    { devDependencies: ["@kb/builtins", "@kb/cli", "@kb/components", "@kb/spec"] },
    dir,
    source,
  );
  return {
    name,
    version: "0.1.0",
    description: "A kernbench-ts plug-in: big_array, a PE_GEMM impl.",
    type: "module",
    sideEffects: false,
    license: "MIT",
    keywords: ["kb-plugin", "kernbench"],
    exports: {
      ".": { types: "./dist/index.d.ts", import: "./dist/index.js", default: "./dist/index.js" },
      "./package.json": "./package.json",
    },
    main: "./dist/index.js",
    types: "./dist/index.d.ts",
    files: ["dist", "README.md"],
    engines: { node: ">=20" },
    scripts: {
      build: "tsc",
      typecheck: "tsc --noEmit",
      test: "vitest run",
      probe: "kb probe --topology topologies/example.yaml",
      prepublishOnly: "tsc",
    },
    peerDependencies: { "@kb/spec": `^${installedManifest("@kb/spec").version}`, zod },
    devDependencies: { ...kb.devDependencies, zod, ...DEV_TOOLS, vitest: VITEST },
  };
}

/** kb's shipped default topology, its schema taken from the installed @kb/topology. */
function projectTopology(): string {
  const text = readFileSync(join(shippedDir(), "topologies", "default.yaml"), "utf8");
  return text.replace(
    /^# yaml-language-server: \$schema=\S+/,
    "# yaml-language-server: $schema=../node_modules/@kb/topology/dist/topology.schema.json",
  );
}
