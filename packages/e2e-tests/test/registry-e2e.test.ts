import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  INSTALL_E2E,
  installedKb,
  publishAll,
  type Ran,
  type Registry,
  type Released,
  releaseCopy,
  run,
  startRegistry,
  succeeded,
} from "./registry-support.js";

// Issue 18 point 4: the packages as a user gets them. A real private registry (verdaccio) on
// 127.0.0.1, the public packages released to it by `pnpm release`'s script in a throwaway copy
// (its dry run: changeset version, then npm publish in dependency order, issue 34 point 4),
// then plain npm in empty folders: kb with its shipped benches and topologies,
// @kb/des alone, @kb/runtime from code, a kb init project, the example plug-ins through
// plugins:. The registry and everything it started are stopped at the end, pass or fail.
// Runs in CI (CI=true, .ci/run) or with KB_REGISTRY_E2E=1; it needs the build (pnpm test builds
// first) and the npm registry (verdaccio proxies the packages' own dependencies from it).

const enabled = INSTALL_E2E;
if (!enabled) {
  console.info(
    "registry end-to-end test skipped: it runs in CI (CI=true) or with KB_REGISTRY_E2E=1 (about a minute: verdaccio, npm publish, npm install).",
  );
}

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const MINUTE = 60_000;

describe.skipIf(!enabled)("the packages from a registry, with plain npm", () => {
  let scratch = "";
  let registry: Registry | undefined;
  /** A folder with @kb/cli installed from the registry. */
  let app = "";
  /** The public packages' versions before the release, by name. */
  let before = new Map<string, string>();
  /** What the release published. */
  let released: Released[] = [];

  /** npm with the registry's install config, in `cwd`. */
  const npm = (cwd: string, ...args: string[]): Promise<Ran> =>
    run(
      "npm",
      [...args, "--userconfig", registry?.installConfig ?? "", "--registry", registry?.url ?? ""],
      cwd,
      {
        npm_config_cache: join(scratch, "npm-cache"),
      },
    );
  const kb = installedKb;
  /** An empty folder with a package.json, as `npm init` makes. */
  const emptyProject = (name: string): string => {
    const dir = join(scratch, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
    return dir;
  };
  const ok = succeeded;

  beforeAll(async () => {
    scratch = realpathSync(mkdtempSync(join(tmpdir(), "kb-registry-e2e-")));
    registry = await startRegistry(join(scratch, "registry"));
    before = releaseCopy(join(scratch, "copy"));
    released = await publishAll(join(scratch, "copy"), registry);
    app = emptyProject("app");
    ok(await npm(app, "install", "@kb/cli"));
  }, 10 * MINUTE);

  afterAll(async () => {
    await registry?.stop();
    if (scratch !== "") rmSync(scratch, { recursive: true, force: true });
  }, MINUTE);

  it("pnpm release: versions bumped by the changesets, in dependency order, each with LICENSE, README and types", () => {
    const names = released.map((pkg) => pkg.name);
    expect([...names].sort()).toEqual([...before.keys()].sort());
    // Each after what it depends on.
    expect(names.indexOf("@kb/errors")).toBeLessThan(names.indexOf("@kb/des"));
    expect(names.indexOf("@kb/components")).toBeLessThan(names.indexOf("@kb/runtime"));
    expect(names.indexOf("@kb/runtime")).toBeLessThan(names.indexOf("@kb/cli"));
    const cli = released.find((pkg) => pkg.name === "@kb/cli");
    expect(cli?.version).not.toBe(before.get("@kb/cli")); // .changeset/ has @kb/cli changes
    for (const pkg of released) {
      expect(pkg.files, pkg.name).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json"]));
      expect(
        pkg.files.some((file) => file.endsWith(".d.ts")),
        `${pkg.name} has types`,
      ).toBe(true);
    }
  });

  it(
    "kb runs the benches and topologies it ships, in a folder that has none",
    async () => {
      expect(readdirSync(app).sort()).toEqual(["node_modules", "package-lock.json", "package.json"]);
      const gemm = ok(
        await kb(app, "run", "gemm", "--param", "M=256", "--param", "N=256", "--param", "K=256"),
      );
      expect(gemm.stdout).toContain("bench gemm on topology default");
      const softmax = ok(
        await kb(app, "run", "softmax", "--verify", "--param", "rows=64", "--topology", "ref-cube"),
      );
      expect(softmax.stdout).toContain("bench softmax on topology ref-cube");
      expect(softmax.stdout).toContain("PASS: 1 of 1 output matches");
      expect(ok(await kb(app, "probe")).stdout).toMatch(/PASS: 6 of 6 invariant\(s\) hold/);
      const unknown = await kb(app, "run", "gemm", "--topology", "nope");
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain(
        `${join(app, "node_modules", "@kb", "cli", "dist", "shipped", "topologies")}: default, ref-4sip, ref-cube`,
      );
    },
    3 * MINUTE,
  );

  it(
    "kb web serves the shipped default topology",
    async () => {
      const child = spawn(join(app, "node_modules", ".bin", "kb"), ["web", "--port", "0"], {
        cwd: app,
        stdio: ["ignore", "pipe", "pipe"],
      });
      try {
        const url = await new Promise<string>((done, fail) => {
          let output = "";
          child.stdout.on("data", (chunk: Buffer) => {
            output += chunk.toString();
            const served = /serving on (http:\/\/\S+)/.exec(output);
            if (served?.[1] !== undefined) done(served[1]);
          });
          child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
          child.once("exit", (code) => fail(new Error(`kb web exited ${code}:\n${output}`)));
        });
        const data = (await (await fetch(new URL("api/data", url))).json()) as {
          topology?: { name?: string };
        };
        expect(data.topology?.name).toBe("default");
      } finally {
        child.kill("SIGTERM");
      }
    },
    MINUTE,
  );

  it(
    "@kb/des installs alone and runs its README example",
    async () => {
      const dir = emptyProject("des");
      ok(await npm(dir, "install", "@kb/des"));
      expect(readdirSync(join(dir, "node_modules", "@kb")).sort()).toEqual(["des", "errors"]);
      writeFileSync(join(dir, "example.mjs"), readmeExample("packages/des/README.md"));
      expect(ok(await run(process.execPath, ["example.mjs"], dir)).stdout).toContain(
        "[ '7: a', '12: b', '17: c' ]",
      );
    },
    2 * MINUTE,
  );

  it(
    "@kb/runtime runs a kernel from code, its README example",
    async () => {
      const dir = emptyProject("runtime");
      ok(await npm(dir, "install", "@kb/runtime"));
      writeFileSync(join(dir, "example.mjs"), readmeExample("packages/runtime/README.md"));
      expect(ok(await run(process.execPath, ["example.mjs"], dir)).stdout).toBe("8 8192 true\n");
    },
    2 * MINUTE,
  );

  it(
    "kb init makes a project that installs, verifies its bench and type-checks",
    async () => {
      ok(await kb(app, "init", "project"));
      const project = join(app, "project");
      ok(await npm(project, "install"));
      const verified = ok(await kb(project, "run", "my-bench", "--verify", "--param", "n=20000"));
      expect(verified.stdout).toContain("PASS: 1 of 1 output matches");
      ok(await npm(project, "run", "typecheck"));
    },
    3 * MINUTE,
  );

  it(
    "the example plug-ins install from the registry and serve a topology's plugins:",
    async () => {
      const project = join(app, "project");
      ok(await npm(project, "install", "kb-plugin-systolic-gemm", "kb-plugin-closed-page-hbm"));
      writeFileSync(
        join(project, "topologies", "plugins.yaml"),
        [
          "name: plugins",
          "plugins: [kb-plugin-systolic-gemm, kb-plugin-closed-page-hbm]",
          "sip:",
          "  cubes: 1",
          "cube:",
          "  hbm:",
          '    impl: "kb-plugin-closed-page-hbm:closed_page_hbm"',
          "overrides:",
          '  - match: "sip*.cube*.pe*.pe_gemm"',
          '    impl: "kb-plugin-systolic-gemm:systolic_gemm"',
          "",
        ].join("\n"),
      );
      ok(await kb(project, "topology", "validate", "topologies/plugins.yaml"));
      const gemm = ok(
        await kb(
          project,
          "run",
          "gemm",
          "--topology",
          "plugins",
          "--param",
          "M=256",
          "--param",
          "N=256",
          "--param",
          "K=256",
        ),
      );
      expect(gemm.stdout).toContain("bench gemm on topology plugins");
      expect(gemm.stdout).toContain("kb-plugin-systolic-gemm:systolic_gemm");
    },
    3 * MINUTE,
  );

  it(
    "the example router plug-in installs from the registry and passes allreduce --verify on its credit-mesh.yaml",
    async () => {
      const project = join(app, "project");
      ok(await npm(project, "install", "kb-plugin-credit-router"));
      const allreduce = ok(
        await kb(
          project,
          "run",
          "allreduce",
          "--verify",
          "--plugin",
          "kb-plugin-credit-router",
          "--topology",
          "node_modules/kb-plugin-credit-router/credit-mesh.yaml",
          "--param",
          "maxBytes=65536",
        ),
      );
      expect(allreduce.stdout).toContain("bench allreduce on topology credit-mesh");
      expect(allreduce.stdout).toMatch(/PASS: \d+ of \d+ outputs match/);
    },
    3 * MINUTE,
  );

  it(
    "kb init --plugin makes a package that installs, passes its tests with sources and dist/, is probed and verified",
    async () => {
      ok(await kb(app, "init", "--plugin", "big-gemm"));
      const plugin = join(app, "big-gemm");
      ok(await npm(plugin, "install"));
      expect(ok(await npm(plugin, "test")).stdout).toContain("3 passed"); // from src/
      ok(await npm(plugin, "run", "build"));
      expect(readdirSync(join(plugin, "dist"))).toContain("index.js");
      expect(ok(await npm(plugin, "test")).stdout).toContain("3 passed"); // from dist/
      const probed = ok(await kb(plugin, "probe", "--topology", "topologies/example.yaml"));
      expect(probed.stdout).toContain("GEMMs on kb-plugin-big-gemm:big_array");
      const verified = ok(
        await kb(
          plugin,
          "run",
          "gemm",
          "--topology",
          "topologies/example.yaml",
          "--verify",
          "--param",
          "M=256",
        ),
      );
      expect(verified.stdout).toContain("PASS: 2 of 2 outputs match");
    },
    3 * MINUTE,
  );

  it(
    "runs every README's TypeScript examples but the marked fragments (issue 18 point 5)",
    async () => {
      const project = join(app, "project"); // kb init's, with the example plug-ins installed
      const libraries = [
        "builtins",
        "ccl",
        "components",
        "data-executor",
        "des",
        "errors",
        "oplog",
        "probe",
        "spec",
        "topology",
        "cli",
      ];
      ok(await npm(project, "install", ...libraries.map((name) => `@kb/${name}`)));
      // The topology the systolic plug-in's README loads is the one it shows.
      const systolic = /^```yaml\n(name: systolic\n[\s\S]*?)^```/m.exec(
        readFileSync(join(repoRoot, "examples", "kb-plugin-systolic-gemm", "README.md"), "utf8"),
      )?.[1];
      writeFileSync(join(project, "systolic.yaml"), systolic ?? "");
      const readmes = [
        ...libraries.map((name) => (name === "cli" ? "apps/cli/README.md" : `packages/${name}/README.md`)),
        "packages/runtime/README.md",
        "packages/tensor/README.md",
        "packages/tl/README.md",
        "examples/kb-plugin-closed-page-hbm/README.md",
        "examples/kb-plugin-credit-router/README.md",
        "examples/kb-plugin-systolic-gemm/README.md",
      ];
      const failed: string[] = [];
      let ran = 0;
      for (const readme of readmes) {
        for (const { line, js, fragment } of readmeExamples(readme)) {
          if (fragment) continue;
          const file = `readme-${readme.replaceAll("/", "-")}-${line}.mjs`;
          writeFileSync(join(project, file), js);
          const result = await run(process.execPath, [file], project);
          ran++;
          if (result.code !== 0)
            failed.push(`${readme}:${line}: exit ${result.code}\n${result.stderr.slice(0, 2000)}`);
        }
      }
      expect(failed).toEqual([]);
      expect(ran).toBeGreaterThanOrEqual(20);
    },
    5 * MINUTE,
  );
});

/** The marker of a README example that uses names from the text around it. */
const FRAGMENT = "<!-- fragment:";

/**
 * The ```ts blocks of a README as JavaScript (types removed), with their line and whether the
 * line before the fence marks them as a fragment.
 */
function readmeExamples(readme: string): { line: number; js: string; fragment: boolean }[] {
  const lines = readFileSync(join(repoRoot, readme), "utf8").split("\n");
  const examples: { line: number; js: string; fragment: boolean }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```ts") continue;
    const end = lines.indexOf("```", i + 1);
    const code = lines.slice(i + 1, end).join("\n");
    const js = ts.transpileModule(code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    examples.push({ line: i + 1, js, fragment: lines[i - 1]?.startsWith(FRAGMENT) === true });
    i = end;
  }
  return examples;
}

/** The first example of a README, as JavaScript. */
function readmeExample(readme: string): string {
  const first = readmeExamples(readme)[0];
  if (first === undefined) throw new Error(`${readme} has no ts example`);
  return first.js;
}
