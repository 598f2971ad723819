import {
  existsSync,
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
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSTALL_E2E, installedKb, type Ran, release, run, succeeded } from "./registry-support.js";

// Issue 34 point 2: before the @kb packages are published, a kb init project and a kb init
// --plugin package install with plain npm and run, with no @kb package on any registry (npm is
// pointed at a closed port for the @kb scope; everything else comes from the npm registry):
// made by kb run from this clone (file: links to it), and a project by a kb installed from the
// tarballs of `pnpm release --pack` (file: paths to them). Runs with the registry test, in CI (CI=true) or
// with KB_REGISTRY_E2E=1; it needs the build (pnpm test builds first) and the npm registry.

const enabled = INSTALL_E2E;
if (!enabled) {
  console.info(
    "no-registry end-to-end test skipped: it runs in CI (CI=true) or with KB_REGISTRY_E2E=1 (a few minutes: npm install of generated projects).",
  );
}

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const MINUTE = 60_000;

describe.skipIf(!enabled)("kb init folders install with plain npm, no @kb package on any registry", () => {
  let scratch = "";
  /** npm's user config: the @kb scope on a port where nothing listens. */
  let npmrc = "";

  const npm = (cwd: string, ...args: string[]): Promise<Ran> =>
    run("npm", [...args, "--userconfig", npmrc], cwd);
  const kb = installedKb;
  const ok = succeeded;
  const manifest = (dir: string) =>
    JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, Record<string, string>>;
  /** The @kb specs of a package.json, all of its dependency groups. */
  const kbSpecs = (dir: string) =>
    Object.entries({ ...manifest(dir).dependencies, ...manifest(dir).devDependencies })
      .filter(([name]) => name.startsWith("@kb/"))
      .map(([, spec]) => spec);

  /** npm install, then the project's bench verified. */
  async function checkProject(project: string): Promise<void> {
    ok(await npm(project, "install"));
    const verified = ok(await kb(project, "run", "my-bench", "--verify", "--param", "n=20000"));
    expect(verified.stdout).toContain("PASS: 1 of 1 output matches");
  }

  /** npm install, the plug-in's tests from src/ and from dist/, and a bench verified on it. */
  async function checkPlugin(plugin: string): Promise<void> {
    ok(await npm(plugin, "install"));
    expect(ok(await npm(plugin, "test")).stdout).toContain("3 passed");
    ok(await npm(plugin, "run", "build"));
    expect(readdirSync(join(plugin, "dist"))).toContain("index.js");
    expect(ok(await npm(plugin, "test")).stdout).toContain("3 passed");
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
  }

  beforeAll(() => {
    scratch = realpathSync(mkdtempSync(join(tmpdir(), "kb-no-registry-e2e-")));
    npmrc = join(scratch, "npmrc");
    writeFileSync(
      npmrc,
      "@kb:registry=http://127.0.0.1:1/\nfetch-retries=0\nupdate-notifier=false\nfund=false\naudit=false\n",
    );
  });

  afterAll(() => {
    if (scratch !== "") rmSync(scratch, { recursive: true, force: true });
  }, MINUTE);

  /** `kb init ARGS` of this clone's kb, in the scratch folder. */
  const cloneInit = (...args: string[]) =>
    run(process.execPath, [join(repoRoot, "apps", "cli", "dist", "bin.js"), "init", ...args], scratch);

  it(
    "from a clone: a project links the clone's packages, installs, verifies its bench and type-checks",
    async () => {
      ok(await cloneInit("project"));
      const project = join(scratch, "project");
      expect(kbSpecs(project).every((spec) => spec.startsWith("file:"))).toBe(true);
      await checkProject(project);
      ok(await npm(project, "run", "typecheck"));
    },
    5 * MINUTE,
  );

  it(
    "from a clone: a plug-in installs, passes its tests with sources and dist/, and verifies a bench",
    async () => {
      ok(await cloneInit("--plugin", "plugin"));
      const plugin = join(scratch, "plugin");
      expect(kbSpecs(plugin).every((spec) => spec.startsWith("file:"))).toBe(true);
      await checkPlugin(plugin);
    },
    5 * MINUTE,
  );

  it(
    "from tarballs (pnpm release --pack): kb runs, and its project installs from the tarballs",
    async () => {
      const tarballs = join(scratch, "tarballs");
      const packed = await release(["--pack", tarballs, "--no-build"]);
      expect(packed.map((pkg) => pkg.name)).toContain("@kb/cli");
      const app = join(scratch, "app");
      mkdirSync(app);
      writeFileSync(
        join(app, "package.json"),
        JSON.stringify({ name: "app", private: true, type: "module" }),
      );
      const files = readdirSync(tarballs).filter(
        (file) => file.startsWith("kb-") && !file.startsWith("kb-plugin-"),
      );
      ok(await npm(app, "install", ...files.map((file) => join(tarballs, file))));
      const gemm = ok(
        await kb(app, "run", "gemm", "--param", "M=256", "--param", "N=256", "--param", "K=256"),
      );
      expect(gemm.stdout).toContain("bench gemm on topology default");
      // kb check finds the @kb declarations where kb is installed, not in a clone.
      expect(ok(await kb(app, "check", "gemm")).stdout).toMatch(
        /^ok: \S*gemm\.ts and the \d+ files it imports type-check clean\n$/,
      );
      // BullMQ and ioredis are optional peers of @kb/sweep: not installed, and kb worker says so.
      expect(existsSync(join(app, "node_modules", "bullmq"))).toBe(false);
      expect(existsSync(join(app, "node_modules", "ioredis"))).toBe(false);
      const worker = await kb(app, "worker", "--redis", "redis://127.0.0.1:1", "--queue", "q");
      expect(worker.stderr).toContain(
        "kb sweep --redis / kb worker need bullmq and ioredis: npm install bullmq ioredis",
      );
      expect(worker.stderr).not.toContain("    at ");
      expect(worker.code).toBe(1);

      const init = ok(await kb(app, "init", "project"));
      expect(init.stdout).toContain("@kb packages: file: paths to the tarballs kb was installed from");
      const project = join(app, "project");
      // Every @kb package it needs, at its tarball: npm asks no registry for any.
      expect(kbSpecs(project).length).toBeGreaterThan(4);
      expect(
        kbSpecs(project).every((spec) => /^file:\.\.\/\.\.\/tarballs\/kb-[a-z-]+-[\d.]+\.tgz$/.test(spec)),
      ).toBe(true);
      // (A plug-in's install from real copies, not links, is the registry test's.)
      await checkProject(project);
    },
    10 * MINUTE,
  );
});
