import { type ChildProcess, execFile, spawn } from "node:child_process";
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
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@kb/tooling/node/free-port";
import { expect } from "vitest";

// For registry-e2e.test.ts: a real private registry (verdaccio) on 127.0.0.1 in a temp folder,
// the workspace's public packages released to it by the release script (scripts/release.mjs,
// `pnpm release`: changeset version in a throwaway copy, then npm publish in dependency order),
// and plain npm commands run against it.

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** Whether the install end-to-end tests run: in CI (CI=true) or with KB_REGISTRY_E2E=1. */
export const INSTALL_E2E = process.env.CI === "true" || process.env.KB_REGISTRY_E2E === "1";

/** `ran`, after expecting it exited 0 (else the failure shows its output). */
export function succeeded(ran: Ran): Ran {
  expect(ran.code, `exit ${ran.code}\n${ran.stdout}\n${ran.stderr}`).toBe(0);
  return ran;
}

/** The `kb` npm installed in `cwd`'s node_modules/.bin, run there. */
export function installedKb(cwd: string, ...args: string[]): Promise<Ran> {
  return run(join(cwd, "node_modules", ".bin", "kb"), args, cwd);
}

/** What a command printed and returned. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command args` in `cwd` with `env` added; never throws for a non-zero exit. */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      command,
      [...args],
      { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        done({ code, stdout, stderr: error !== null && stderr === "" ? String(error) : stderr });
      },
    );
  });
}

/** A verdaccio started by {@link startRegistry}. */
export interface Registry {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  /** An npm user config that installs from the registry only (no credentials). */
  readonly installConfig: string;
  /** An npm user config that can publish to it. */
  readonly publishConfig: string;
  /** Its output so far, for failure messages. */
  log(): string;
  /** Stops it and everything it started; resolves when it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts verdaccio (this package's dev dependency) in `dir`: storage and users there, the
 * `@kb/*` and `kb-plugin-*` packages served from it alone, anything else proxied from npmjs.
 * Creates a user and returns npm configs for installing and for publishing.
 */
export async function startRegistry(dir: string): Promise<Registry> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  writeFileSync(
    join(dir, "config.yaml"),
    [
      "storage: ./storage",
      "auth:",
      "  htpasswd:",
      "    file: ./htpasswd",
      "    max_users: 10",
      "uplinks:",
      "  npmjs:",
      "    url: https://registry.npmjs.org/",
      "packages:",
      '  "@kb/*":',
      "    access: $all",
      "    publish: $authenticated",
      '  "kb-plugin-*":',
      "    access: $all",
      "    publish: $authenticated",
      '  "**":',
      "    access: $all",
      "    proxy: npmjs",
      "log: { type: stdout, format: pretty, level: warn }",
      "",
    ].join("\n"),
  );
  const bin = join(repoRoot, "packages", "e2e-tests", "node_modules", "verdaccio", "bin", "verdaccio");
  // Its own process group, so stopping it ends whatever it started too.
  const child: ChildProcess = spawn(
    process.execPath,
    [bin, "--config", join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`],
    { cwd: dir, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
      const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    await waitFor(
      async () => (await fetch(`${url}-/ping`)).ok,
      60_000,
      () => output,
    );
    const response = await fetch(`${url}-/user/org.couchdb.user:kb-e2e`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "kb-e2e", password: "kb-e2e-password" }),
    });
    const { token } = (await response.json()) as { token?: string };
    if (token === undefined) throw new Error(`verdaccio created no user (${response.status})`);
    const installConfig = join(dir, "install.npmrc");
    const publishConfig = join(dir, "publish.npmrc");
    const common = `registry=${url}\nupdate-notifier=false\nfund=false\naudit=false\n`;
    writeFileSync(installConfig, common);
    writeFileSync(publishConfig, `${common}//127.0.0.1:${port}/:_authToken=${token}\n`);
    return { url, installConfig, publishConfig, log: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitFor(ready: () => Promise<boolean>, ms: number, log: () => string): Promise<void> {
  const deadline = performance.now() + ms;
  for (;;) {
    try {
      if (await ready()) return;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline) throw new Error(`verdaccio did not start in ${ms} ms:\n${log()}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  files?: string[];
}

/** The workspace's package folders, relative (the globs of pnpm-workspace.yaml). */
function workspaceDirs(): string[] {
  return [
    ...["packages", "apps", "examples"].flatMap((group) =>
      readdirSync(join(repoRoot, group)).map((name) => `${group}/${name}`),
    ),
    "benches",
  ].filter((dir) => existsSync(join(repoRoot, dir, "package.json")));
}

/**
 * Copies the workspace into `copy` as a release sees it: every package.json (changesets needs
 * them all), the changesets, the LICENSE, and the published files of each public package (their
 * built dist/: build first). Returns the public packages' versions before the release, by name.
 */
export function releaseCopy(copy: string): Map<string, string> {
  mkdirSync(copy, { recursive: true });
  for (const file of ["package.json", "pnpm-workspace.yaml", "LICENSE"]) {
    cpSync(join(repoRoot, file), join(copy, file));
  }
  cpSync(join(repoRoot, ".changeset"), join(copy, ".changeset"), { recursive: true });
  const versions = new Map<string, string>();
  for (const dir of workspaceDirs()) {
    const manifest = JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8")) as Manifest;
    mkdirSync(join(copy, dir), { recursive: true });
    cpSync(join(repoRoot, dir, "package.json"), join(copy, dir, "package.json"));
    if (manifest.private === true) continue;
    for (const entry of [...(manifest.files ?? []), "README.md"]) {
      const from = join(repoRoot, dir, entry);
      if (!existsSync(from)) {
        if (entry === "README.md") continue;
        throw new Error(`${dir}/${entry} is missing: build the workspace first (pnpm build)`);
      }
      cpSync(from, join(copy, dir, entry), { recursive: true });
    }
    versions.set(manifest.name, manifest.version);
  }
  return versions;
}

/** What the release script reports of each package it published or packed. */
export interface Released {
  readonly name: string;
  readonly version: string;
  /** The tarball's files, sorted. */
  readonly files: readonly string[];
}

/** The release script, `pnpm release` (scripts/release.mjs), run with `args`. */
export async function release(args: readonly string[], cwd: string = repoRoot): Promise<Released[]> {
  const dir = mkdtempSync(join(tmpdir(), "kb-release-report-"));
  try {
    const report = join(dir, "released.json");
    const script = join(repoRoot, "scripts", "release.mjs");
    const ran = await run(process.execPath, [script, ...args, "--json", report], cwd);
    if (ran.code !== 0)
      throw new Error(`scripts/release.mjs ${args.join(" ")} failed:\n${ran.stdout}${ran.stderr}`);
    return JSON.parse(readFileSync(report, "utf8")) as Released[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `pnpm release` of a {@link releaseCopy} to the registry, as a dry run of the real one:
 * `changeset version` there, then every public package published in dependency order (no build:
 * the copy has the built files).
 */
export function publishAll(copy: string, registry: Registry): Promise<Released[]> {
  return release(
    ["--root", copy, "--no-build", "--registry", registry.url, "--userconfig", registry.publishConfig],
    copy,
  );
}
