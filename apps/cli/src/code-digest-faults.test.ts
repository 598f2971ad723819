import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// An edit to the code a run loads (a plug-in's files, a file the bench imports) is a new run:
// a new manifest digest, a `kb run --cache` miss, a sweep's points run again. Before, a plug-in's
// digest hashed only its factories' text (the SDK's wrapper for defineMemoryModel) and a bench's
// only its own file, so a fixed model came back from the cache with the old numbers.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "kb-code-digest-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A folder with a copy of the closed-page HBM plug-in's sources and a topology that uses it. */
function pluginSetup(name: string): { dir: string; topology: string; model: string } {
  const dir = join(scratch, name);
  mkdirSync(dir);
  cpSync(join(root, "examples", "kb-plugin-closed-page-hbm", "src"), join(dir, "plugin"), {
    filter: (source) => !source.endsWith(".test.ts"),
    recursive: true,
  });
  const base = readFileSync(join(root, "topologies", "default.yaml"), "utf8");
  const topology = join(dir, "topology.yaml");
  writeFileSync(
    topology,
    `${base}\nplugins: [./plugin/index.ts]\n`.replace(
      /^ {2}hbm:\n/m,
      '  hbm:\n    impl: "kb-plugin-closed-page-hbm:closed_page_hbm"\n',
    ),
  );
  return { dir, topology, model: join(dir, "plugin", "closed-page-hbm.ts") };
}

/** Makes the model's row precharge 14 ns -> 40 ns: one constant of the plug-in. */
function editModel(model: string): void {
  const text = readFileSync(model, "utf8");
  const edited = text.replace(/(t_rp_ns: ns\("[^"]*", )14\)/, "$140)");
  expect(edited).not.toBe(text);
  writeFileSync(model, edited);
}

/** Copies benches/vector-add.ts and the library it imports (benches/lib) into `dir`. */
function copyBench(dir: string): string {
  cpSync(join(root, "benches", "vector-add.ts"), join(dir, "vector-add.ts"));
  cpSync(join(root, "benches", "lib"), join(dir, "lib"), { recursive: true });
  return join(dir, "vector-add.ts");
}

/** One constant of a file the bench imports: the largest seed lib/params.ts accepts, 2^32 - 16 -> - 17. */
function editLibrary(dir: string): void {
  const params = join(dir, "lib", "params.ts");
  const text = readFileSync(params, "utf8");
  const edited = text.replace(".max(2 ** 32 - 16)", ".max(2 ** 32 - 17)");
  expect(edited).not.toBe(text);
  writeFileSync(params, edited);
}

interface Manifest {
  digest: string;
  plugins: { name: string; digest: string | null }[];
  bench: { digest: string };
}

const manifestOf = (stdout: string): Manifest => (JSON.parse(stdout) as { manifest: Manifest }).manifest;

describe("fault: an edited plug-in served from the cache", () => {
  it("a constant edited in a plug-in file gives a new plug-in digest and a cache miss", async () => {
    const { dir, topology, model } = pluginSetup("run");
    const cache = join(dir, "cache");
    const args = [
      "run",
      "vector-add",
      "--param",
      "n=4096",
      "--topology",
      topology,
      "--json",
      "--cache",
      cache,
    ];
    const first = await kb(...args);
    expect(first.code).toBe(0);
    const before = manifestOf(first.stdout);
    editModel(model);
    const second = await kb(...args);
    expect(second.code).toBe(0);
    const after = manifestOf(second.stdout);
    expect(after.plugins[0]?.digest).not.toBe(before.plugins[0]?.digest);
    expect(after.digest).not.toBe(before.digest);
    // Simulated, not served: the cache now holds both runs.
    expect(readdirSync(cache).sort()).toEqual([`${before.digest}.json`, `${after.digest}.json`].sort());
  }, 60_000);
});

describe("fault: an edited file a bench imports served from the cache", () => {
  it("a constant edited in a bench's imported file gives a new bench digest and a cache miss", async () => {
    const dir = join(scratch, "bench");
    mkdirSync(dir);
    copyBench(dir);
    const cache = join(dir, "cache");
    const args = ["run", join(dir, "vector-add.ts"), "--param", "n=4096", "--json", "--cache", cache];
    const first = await kb(...args);
    expect(first.code).toBe(0);
    const before = manifestOf(first.stdout);
    editLibrary(dir);
    const second = await kb(...args);
    expect(second.code).toBe(0);
    const after = manifestOf(second.stdout);
    expect(after.bench.digest).not.toBe(before.bench.digest);
    expect(after.digest).not.toBe(before.digest);
    expect(readdirSync(cache)).toHaveLength(2);
  }, 60_000);
});

describe("fault: a sweep that does not re-run points of an edited plug-in or bench library", () => {
  it("a sweep over 2 points, run, plug-in edited, run again: the 2 points run again; the same for a file the bench imports", async () => {
    const { dir, topology, model } = pluginSetup("sweep");
    const bench = copyBench(dir);
    const spec = join(dir, "sweep.yaml");
    writeFileSync(
      spec,
      [
        "name: edited",
        `bench: ${bench}`,
        `topology: ${topology}`,
        "axes:",
        "  n: { path: params.n, values: [2048, 4096] }",
        "metrics:",
        "  time: simTimeNs",
        "",
      ].join("\n"),
    );
    const out = join(dir, "out");
    const first = await kb("sweep", spec, "--out", out);
    expect(first.code).toBe(0);
    const again = await kb("sweep", spec, "--out", out);
    expect(again.stderr).toContain("2 points (2 already in the table), 0 to run");
    editModel(model);
    const edited = await kb("sweep", spec, "--out", out);
    expect(edited.code).toBe(0);
    expect(edited.stderr).toContain("edited: 2 points, 2 to run");
    editLibrary(dir);
    const library = await kb("sweep", spec, "--out", out);
    expect(library.code).toBe(0);
    expect(library.stderr).toContain("edited: 2 points, 2 to run");
    const rows = readFileSync(join(out, "results.jsonl"), "utf8").split("\n").filter(Boolean);
    expect(rows.map((row) => (JSON.parse(row) as { status: string }).status)).toEqual(Array(6).fill("ok"));
  }, 180_000);
});
