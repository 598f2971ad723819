import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@kb/tooling/node/free-port";

// For registry-e2e.test.ts: a real private registry (verdaccio) on 127.0.0.1 in a temp folder,
// the workspace's public packages versioned by `changeset version` in a throwaway copy and
// published to it with npm, and plain npm commands run against it.

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

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
  const bin = join(repoRoot, "apps", "cli", "node_modules", "verdaccio", "bin", "verdaccio");
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
  devDependencies?: Record<string, string>;
  [field: string]: unknown;
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
 * Copies the workspace into `copy` as a release would see it: every package.json (changesets
 * needs them all), the changesets, and the published files of each public package (their built
 * dist/: build first). Then runs `changeset version` there and returns the public packages'
 * folders in the copy.
 */
export async function versionedCopy(copy: string): Promise<string[]> {
  mkdirSync(copy, { recursive: true });
  for (const file of ["package.json", "pnpm-workspace.yaml", "LICENSE"]) {
    cpSync(join(repoRoot, file), join(copy, file));
  }
  cpSync(join(repoRoot, ".changeset"), join(copy, ".changeset"), { recursive: true });
  const published: string[] = [];
  for (const dir of workspaceDirs()) {
    const manifest = JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8")) as Manifest;
    mkdirSync(join(copy, dir), { recursive: true });
    cpSync(join(repoRoot, dir, "package.json"), join(copy, dir, "package.json"));
    if (manifest.private === true) continue;
    for (const entry of manifest.files ?? []) {
      const from = join(repoRoot, dir, entry);
      if (!existsSync(from))
        throw new Error(`${dir}/${entry} is missing: build the workspace first (pnpm build)`);
      cpSync(from, join(copy, dir, entry), { recursive: true });
    }
    published.push(join(copy, dir));
  }
  const changeset = join(repoRoot, "node_modules", "@changesets", "cli", "bin.js");
  const versioned = await run(process.execPath, [changeset, "version"], copy);
  if (versioned.code !== 0)
    throw new Error(`changeset version failed:\n${versioned.stdout}${versioned.stderr}`);
  return published;
}

/**
 * Publishes the packages in `dirs` (of a {@link versionedCopy}) to the registry with npm:
 * `workspace:` ranges become the versions `changeset version` gave (as pnpm publish writes them),
 * and devDependencies, which only the workspace needs, are dropped.
 */
export async function publishAll(dirs: readonly string[], registry: Registry): Promise<string[]> {
  const manifests = dirs.map((dir) => ({
    dir,
    json: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest,
  }));
  const versions = new Map(manifests.map(({ json }) => [json.name, json.version]));
  const names: string[] = [];
  for (const { dir, json } of manifests) {
    delete json.devDependencies;
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
      const ranges = json[field] as Record<string, string> | undefined;
      for (const [name, range] of Object.entries(ranges ?? {})) {
        if (!range.startsWith("workspace:")) continue;
        const spec = range.slice("workspace:".length);
        const version = versions.get(name);
        if (version === undefined) throw new Error(`${json.name} depends on ${name}, which is not published`);
        (ranges as Record<string, string>)[name] =
          spec === "*" ? version : spec === "^" || spec === "~" ? spec + version : spec;
      }
    }
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(json, null, 2)}\n`);
    const published = await run(
      "npm",
      [
        "publish",
        "--userconfig",
        registry.publishConfig,
        "--registry",
        registry.url,
        "--access",
        "public",
        "--ignore-scripts",
      ],
      dir,
    );
    if (published.code !== 0) throw new Error(`npm publish of ${json.name} failed:\n${published.stderr}`);
    names.push(`${json.name}@${json.version}`);
  }
  return names;
}
