import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// kb run's optional outputs under faults: a cache entry that was edited or damaged, a cache that
// cannot be written, a full disk under --trace / --oplog (a symlink to /dev/full in place of the
// temporary file the output is written to: this process's pid names it).

const scratch = mkdtempSync(join(tmpdir(), "kb-run-cache-faults-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const small = ["run", "vector-add", "--param", "n=1024"];

/** The true results (no cache) and their digest, once. */
const truth = (async () => {
  const run = await kb(...small, "--json");
  expect(run.code).toBe(0);
  return {
    stdout: run.stdout,
    digest: (JSON.parse(run.stdout) as { manifest: { digest: string } }).manifest.digest,
  };
})();

function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(/internal error|\n\s+at /);
}

describe("fault: a cache entry that is not what the run wrote", () => {
  for (const [what, damage] of [
    [
      "hand-edited (another simulated time)",
      (text: string) => text.replace(/"simTimeNs": [\d.]+/, '"simTimeNs": 1'),
    ],
    ["cut short", (text: string) => text.slice(0, text.length / 2)],
    ["not JSON", () => "garbage\n"],
    ["JSON of another shape", () => '{"sha256": "00", "results": {"x": 1}}\n'],
  ] as const) {
    it(`${what}: is ignored with a warning, the run is done again and re-cached`, async () => {
      const { stdout, digest } = await truth;
      const cache = join(scratch, `cache-${what.split(" ")[0]}`);
      expect((await kb(...small, "--json", "--cache", cache)).stdout).toBe(stdout);
      const file = join(cache, `${digest}.json`);
      writeFileSync(file, damage(readFileSync(file, "utf8")));
      const again = await kb(...small, "--json", "--cache", cache);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(stdout);
      expect(again.stderr).toContain(`kb run: warning: ignoring the cache entry ${file}`);
      expectNoStack(again.stderr);
      // Re-cached: the next run prints it without a warning.
      const cached = await kb(...small, "--json", "--cache", cache);
      expect(cached).toEqual({ code: 0, stdout, stderr: "" });
    });
  }

  it("a cache entry that is a FIFO is ignored with a warning, not waited on", async () => {
    const { stdout, digest } = await truth;
    const cache = join(scratch, "cache-fifo");
    mkdirSync(cache);
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [join(cache, `${digest}.json`)]);
    const again = await kb(...small, "--json", "--cache", cache);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(stdout);
    expect(again.stderr).toContain("kb run: warning: ignoring the cache entry");
  });
});

describe("fault: an optional output that cannot be written", () => {
  it("a cache that cannot be written: the results are printed, a warning says why, no partial file stays", async () => {
    const { stdout, digest } = await truth;
    const cache = join(scratch, "cache-full");
    mkdirSync(cache);
    symlinkSync("/dev/full", join(cache, `${digest}.json.tmp-${process.pid}`));
    const run = await kb(...small, "--json", "--cache", cache);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(stdout);
    expect(run.stderr).toContain(
      `kb run: warning: cannot write the results cache ${join(cache, `${digest}.json`)}`,
    );
    expect(run.stderr).toContain("ENOSPC");
    expectNoStack(run.stderr);
    expect(readdirSync(cache)).toEqual([]);
  });

  it("a cache folder that is a file: the results are printed with a warning", async () => {
    const { stdout } = await truth;
    const cache = join(scratch, "cache-is-a-file");
    writeFileSync(cache, "");
    const run = await kb(...small, "--json", "--cache", cache);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(stdout);
    expect(run.stderr).toContain("kb run: warning: cannot write the results cache");
  });

  for (const option of ["--trace", "--oplog"]) {
    it(`a full disk under ${option}: exit 1 naming the file and ENOSPC, results printed, no file left`, async () => {
      const { stdout } = await truth;
      const dir = mkdtempSync(join(scratch, "full-"));
      const target = join(dir, option === "--trace" ? "t.json" : "o.jsonl");
      const temp = `${target}.tmp-${process.pid}-${option.slice(2)}`;
      // JsonlSink writes a temporary file of its own beside the path it is given.
      symlinkSync("/dev/full", option === "--oplog" ? `${temp}.tmp-${process.pid}` : temp);
      const run = await kb(...small, "--json", option, target);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe(stdout);
      expect(run.stderr).toContain(`cannot write ${target}: ENOSPC`);
      expectNoStack(run.stderr);
      expect(existsSync(target)).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    });
  }
});
