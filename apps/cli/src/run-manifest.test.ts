import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// kb run's manifest (the run's identity) and the results cache keyed by its digest.

const scratch = mkdtempSync(join(tmpdir(), "kb-run-manifest-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const small = ["run", "vector-add", "--param", "n=1024"];

describe("kb run --manifest-only and --cache", () => {
  it("prints the manifest the results carry, without running", async () => {
    const only = await kb(...small, "--manifest-only");
    expect(only.code).toBe(0);
    const manifest = JSON.parse(only.stdout) as { digest: string; params: unknown; bench: { name: string } };
    expect(manifest.bench.name).toBe("vector-add");
    expect(manifest.params).toEqual({ n: 1024, chunk: 8192, dtype: "f16", seed: 1 });
    const run = await kb(...small, "--json");
    expect((JSON.parse(run.stdout) as { manifest: unknown }).manifest).toEqual(manifest);
    // Another param is another run.
    const other = JSON.parse((await kb(...small, "--param", "seed=2", "--manifest-only")).stdout) as {
      digest: string;
    };
    expect(other.digest).not.toBe(manifest.digest);
  });

  it("keeps a run's results by digest and prints them instead of simulating again", async () => {
    const cache = join(scratch, "cache");
    const first = await kb(...small, "--json", "--cache", cache);
    const { digest } = (JSON.parse(first.stdout) as { manifest: { digest: string } }).manifest;
    const file = join(cache, `${digest}.json`);
    // The entry holds the results and the sha256 of the text printed (run-cache-faults.test.ts).
    const entry = JSON.parse(readFileSync(file, "utf8")) as { sha256: string; results: unknown };
    expect(`${JSON.stringify(entry.results, null, 2)}\n`).toBe(first.stdout);
    expect((await kb(...small, "--json", "--cache", cache)).stdout).toBe(first.stdout);
    const cached = await kb(...small, "--cache", cache);
    expect(cached.stdout).toContain(`cached: ${file} (the same manifest digest; not simulated again)`);
    expect(cached.stderr).toBe("");
  });

  it("simulates a run that writes a trace, and refuses --manifest-only with one", async () => {
    const cache = join(scratch, "cache-trace");
    const trace = join(scratch, "t.json");
    const run = await kb(...small, "--cache", cache, "--trace", trace);
    expect(run.code).toBe(0);
    expect(existsSync(trace)).toBe(true);
    expect(existsSync(cache)).toBe(false);
    const refused = await kb(...small, "--manifest-only", "--trace", trace);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("--manifest-only runs nothing, so it writes no --trace or --oplog file");
  });
});
