import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { scaffold } from "./init-command.js";
import { kbDependencies } from "./init-sources.js";
import { kb } from "./test-support.js";

// kb init's project and plug-in, each run as generated: the bench verified against its reference,
// the plug-in's topology validated and probed, and both type-checked against the built packages.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "kb-init-")));
// Type checking needs the packages a user would install: a folder under apps/cli/node_modules
// resolves @kb/*, zod and @types/node as an installed project does (the @kb packages' dist/).
const installed = mkdtempSync(join(root, "apps", "cli", "node_modules", ".kb-init-test-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  rmSync(installed, { recursive: true, force: true });
});

const version = (dir: string) =>
  (JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as { version: string }).version;
const read = (path: string) => readFileSync(path, "utf8");
const json = (path: string) => JSON.parse(read(path)) as Record<string, Record<string, string>>;

async function typecheck(dir: string): Promise<string> {
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  try {
    await promisify(execFile)(process.execPath, [tsc, "--noEmit", "-p", join(dir, "tsconfig.json")]);
    return "";
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

describe("kb init", () => {
  const project = join(scratch, "My Project");

  it("writes a project and says what to do next", async () => {
    const ran = await kb("init", project);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(`kb init: created the project my-project in ${project}:\n`);
    for (const file of [
      ".gitignore",
      "README.md",
      "benches/my-bench.ts",
      "package.json",
      "topologies/default.yaml",
      "tsconfig.json",
    ]) {
      expect(ran.stdout).toContain(`  ${file}\n`);
    }
    expect(ran.stdout).toContain(
      `@kb packages: file: links to the kernbench-ts clone in ${root.replace(/\/$/, "")} (not published yet; see README.md)\n`,
    );
    expect(ran.stdout).toMatch(
      /next:\n {2}cd .*My Project\n {2}npm install\n {2}npx kb run my-bench --verify\n$/,
    );
  });

  it("run from a clone, links the clone's packages (file:), which npm installs without a registry", () => {
    const manifest = json(join(project, "package.json"));
    expect(manifest.name).toBe("my-project");
    const link = (dir: string) => `file:${relative(project, join(root, dir))}`;
    expect(manifest.dependencies).toEqual({
      "@kb/runtime": link("packages/runtime"),
      "@kb/tensor": link("packages/tensor"),
      "@kb/tl": link("packages/tl"),
      zod: json(join(root, "apps", "cli", "package.json")).dependencies?.zod,
    });
    expect(manifest.devDependencies?.["@kb/cli"]).toBe(link("apps/cli"));
    expect(manifest.scripts?.verify).toBe("kb run my-bench --verify");
    expect(read(join(project, "README.md"))).toContain(
      `The \`@kb\` packages are \`file:\` links to the kernbench-ts clone in \`${root.replace(/\/$/, "")}\``,
    );
  });

  it("installed from a registry, depends on what the bench imports at this kb's versions", () => {
    const dir = join(scratch, "from-registry");
    scaffold(dir, { source: { kind: "registry" } });
    const manifest = json(join(dir, "package.json"));
    expect(manifest.dependencies).toEqual({
      "@kb/runtime": `^${version("packages/runtime")}`,
      "@kb/tensor": `^${version("packages/tensor")}`,
      "@kb/tl": `^${version("packages/tl")}`,
      zod: json(join(root, "apps", "cli", "package.json")).dependencies?.zod,
    });
    expect(manifest.devDependencies?.["@kb/cli"]).toBe(`^${version("apps/cli")}`);
    expect(read(join(dir, "README.md"))).toContain("come from the npm registry");
  });

  it("installed from tarballs, lists every @kb package it needs at its tarball, or says which is missing", () => {
    const tarballs = new Map(
      [
        "builtins",
        "ccl",
        "components",
        "data-executor",
        "des",
        "errors",
        "oplog",
        "probe",
        "runtime",
        "spec",
        "sweep",
        "tensor",
        "tl",
        "topology",
        "cli",
      ].map((name) => [`@kb/${name}`, join(scratch, "tarballs", `kb-${name}-0.0.0.tgz`)] as const),
    );
    mkdirSync(join(scratch, "tarballs"), { recursive: true });
    for (const file of tarballs.values()) writeFileSync(file, "");
    const dir = join(scratch, "from-tarballs");
    const specs = kbDependencies({ dependencies: ["@kb/tl"], devDependencies: ["@kb/cli"] }, dir, {
      kind: "tarballs",
      tarballs,
    });
    // @kb/tl and what it needs (the vocabulary of @kb/spec, not the machine); kb's own packages
    // beyond those under devDependencies.
    expect(Object.keys(specs.dependencies)).toEqual([
      "@kb/des",
      "@kb/errors",
      "@kb/spec",
      "@kb/tensor",
      "@kb/tl",
      "@kb/topology",
    ]);
    expect(specs.dependencies["@kb/tl"]).toBe("file:../tarballs/kb-tl-0.0.0.tgz");
    expect(Object.keys(specs.devDependencies)).toEqual([
      "@kb/builtins",
      "@kb/ccl",
      "@kb/cli",
      "@kb/components",
      "@kb/data-executor",
      "@kb/oplog",
      "@kb/probe",
      "@kb/runtime",
      "@kb/sweep",
    ]);
    tarballs.delete("@kb/des");
    expect(() => scaffold(dir, { source: { kind: "tarballs", tarballs } })).toThrow(
      /kb init: this kb was installed from tarballs, but not @kb\/des from one; a project needs it\./,
    );
  });

  it("copies kb's default topology, its schema from the installed @kb/topology", () => {
    const shipped = read(join(root, "topologies", "default.yaml")).split("\n");
    const copy = read(join(project, "topologies", "default.yaml")).split("\n");
    expect(copy[0]).toBe(
      "# yaml-language-server: $schema=../node_modules/@kb/topology/dist/topology.schema.json",
    );
    expect(copy.slice(1)).toEqual(shipped.slice(1));
  });

  it("runs its bench as generated, on its topology, and verifies it", async () => {
    const ran = await kb(
      "run",
      join(project, "benches", "my-bench.ts"),
      "--topology",
      join(project, "topologies", "default.yaml"),
      "--param",
      "n=10000",
      "--param",
      "block=1024",
      "--verify",
    );
    expect(ran.stderr).toBe("");
    expect(ran.stdout).toContain("bench my-bench on topology default");
    expect(ran.stdout).toContain("PASS: 1 of 1 output matches");
    expect(ran.code).toBe(0);
  }, 60_000);

  it("never overwrites a file: it names the ones in the way and writes nothing", async () => {
    const dir = join(scratch, "taken");
    mkdirSync(join(dir, "benches"), { recursive: true });
    writeFileSync(join(dir, "benches", "my-bench.ts"), "mine\n");
    writeFileSync(join(dir, "package.json"), "{}\n");
    const ran = await kb("init", dir);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe(
      `[CLI_USAGE] kb init: benches/my-bench.ts, package.json already exist in ${dir}; kb init never overwrites a file. Choose a new folder, or move them away.\n`,
    );
    expect(read(join(dir, "benches", "my-bench.ts"))).toBe("mine\n");
    expect(() => read(join(dir, "tsconfig.json"))).toThrow();
  });

  it("rejects a name npm would not accept", async () => {
    const ran = await kb("init", join(scratch, "bad-name"), "--name", "Big Name");
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('"Big Name" is not an npm package name');
  });

  it("writes a project that type-checks against the installed packages", async () => {
    const dir = join(installed, "project");
    expect((await kb("init", dir)).code).toBe(0);
    expect(await typecheck(dir)).toBe("");
  }, 60_000);
});

describe("kb init --plugin", () => {
  const plugin = join(scratch, "big-gemm");

  it("writes a plug-in package named kb-plugin-<folder>, with the keyword and its peers", async () => {
    const ran = await kb("init", "--plugin", plugin);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(`kb init: created the plug-in package kb-plugin-big-gemm in ${plugin}:\n`);
    const manifest = json(join(plugin, "package.json"));
    expect(manifest.name).toBe("kb-plugin-big-gemm");
    expect(manifest.keywords).toEqual(["kb-plugin", "kernbench"]);
    expect(manifest.peerDependencies).toEqual({
      "@kb/spec": `^${version("packages/spec")}`,
      zod: json(join(root, "apps", "cli", "package.json")).dependencies?.zod,
    });
    expect(read(join(plugin, "src", "index.ts"))).toContain(
      'meta: { name: "kb-plugin-big-gemm", version: "0.1.0" }',
    );
  });

  it("has a topology that loads it by path and uses its impl, which kb probe checks", async () => {
    const topology = join(plugin, "topologies", "example.yaml");
    const validated = await kb("topology", "validate", topology);
    expect(validated.stderr).toBe("");
    expect(validated.code).toBe(0);
    const probed = await kb("probe", "--topology", topology);
    expect(probed.stdout).toContain("GEMMs on kb-plugin-big-gemm:big_array: gemm-tile 128x128x128 384.00 ns");
    expect(probed.code).toBe(0);
  });

  it("keeps a scoped name given with --name", async () => {
    const dir = join(scratch, "scoped");
    expect((await kb("init", "--plugin", dir, "--name", "@acme/kb-plugin-hbm")).code).toBe(0);
    expect(json(join(dir, "package.json")).name).toBe("@acme/kb-plugin-hbm");
    expect(read(join(dir, "topologies", "example.yaml"))).toContain('impl: "@acme/kb-plugin-hbm:big_array"');
  });

  it("writes a plug-in that type-checks against the installed packages", async () => {
    const dir = join(installed, "plugin");
    expect((await kb("init", "--plugin", dir)).code).toBe(0);
    expect(await typecheck(dir)).toBe("");
  }, 60_000);
});
