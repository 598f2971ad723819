import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// The built kb run from an empty folder: what a user gets after `npm i -g @kb/cli`. Its benches
// and topologies come from dist/shipped, copied there by the build (tsup.config.ts); the bench
// files import only @kb/* and zod, which kb hands them. Needs the build (`pnpm test` builds first).

const root = fileURLToPath(new URL("../../../", import.meta.url));
const dist = join(root, "apps", "cli", "dist");
const bin = join(dist, "bin.js");
const shipped = join(dist, "shipped");
const empty = realpathSync(mkdtempSync(join(tmpdir(), "kb-shipped-")));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function kb(...args: string[]): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: empty, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

/** The plain-named files of a folder with one extension, sorted; with `deep`, of its subfolders too. */
function names(dir: string, extension: string, deep = false): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: deep })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .filter((name) => name.endsWith(extension) && !basename(name).slice(0, -extension.length).includes("."))
    .sort();
}

describe("the built kb in an empty folder", () => {
  it("ships every bench of benches/ with its lib/, and every topology, not perf/ or test/", () => {
    expect(existsSync(bin), `${bin} is missing: build first (npx -y pnpm@10 build)`).toBe(true);
    expect(names(join(shipped, "benches"), ".ts")).toEqual(names(join(root, "benches"), ".ts"));
    expect(names(join(shipped, "benches", "lib"), ".ts", true)).toEqual(
      names(join(root, "benches", "lib"), ".ts", true),
    );
    expect(names(join(shipped, "topologies"), ".yaml")).toEqual([
      "default.yaml",
      "ref-4sip.yaml",
      "ref-cube.yaml",
    ]);
    expect(existsSync(join(shipped, "topologies", "topology.schema.json"))).toBe(true);
    expect(existsSync(join(shipped, "benches", "perf"))).toBe(false);
    expect(existsSync(join(shipped, "benches", "test"))).toBe(false);
  });

  it("runs a shipped bench by name on the shipped default topology", async () => {
    const ran = await kb("run", "vector-add", "--json");
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    const results = JSON.parse(ran.stdout) as { bench: string; topology: string };
    expect([results.bench, results.topology]).toEqual(["vector-add", "default"]);
  });

  it("verifies a shipped bench against its reference, on a shipped topology given by name", async () => {
    const ran = await kb("run", "softmax", "--verify", "--topology", "ref-cube", "--param", "rows=64");
    expect(ran.stderr).toBe("");
    expect(ran.stdout).toContain("bench softmax on topology ref-cube");
    expect(ran.stdout).toMatch(/PASS: 1 of 1 output matches/);
    expect(ran.code).toBe(0);
  });

  it("probes the shipped default topology", async () => {
    const ran = await kb("probe", "--json");
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ topology: "default", pass: true });
  });

  it("lists where it looked for an unknown topology", async () => {
    const ran = await kb("probe", "--topology", "nope");
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`looked for topologies/nope.yaml in ${empty} and its parents`);
    expect(ran.stderr).toContain(
      `Topologies found in ${join(shipped, "topologies")}: default, ref-4sip, ref-cube.`,
    );
  });
});
