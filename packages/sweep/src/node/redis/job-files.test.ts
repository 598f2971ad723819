import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SweepJob } from "../../executor.js";
import { pathDigest, pluginPaths, queuedJob, refusalOf } from "./job-files.js";

const scratch = mkdtempSync(join(tmpdir(), "kb-job-files-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** A folder with `files` (relative path -> text) written in it. */
function folderWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(scratch, "d-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** A job of the bench `./bench.ts` with `plugins`, its topology naming `topologyPlugins`. */
function jobOf(benchText: string, plugins: string[] = [], topologyPlugins: unknown[] = []): SweepJob {
  return {
    point: 3,
    key: "k".repeat(64),
    bench: "./bench.ts",
    benchDigest: sha256(benchText),
    inputs: { topology: { name: "t", plugins: topologyPlugins }, params: { n: 1 }, plugins },
    run: { verify: false, memoryMb: 4096 },
  };
}

describe("pathDigest", () => {
  it("is the sha256 of a file's bytes, found with or without its extension", () => {
    const dir = folderWith({ "plug.ts": "export default 1;\n" });
    expect(pathDigest(join(dir, "plug.ts"))).toBe(sha256("export default 1;\n"));
    expect(pathDigest(join(dir, "plug"))).toBe(sha256("export default 1;\n"));
    expect(pathDigest(join(dir, "missing"))).toBeNull();
  });

  it("of a plug-in file covers the files it imports by relative path (fault: an edited model the worker ran)", () => {
    const dir = folderWith({
      "plug.ts": 'import { T_RP } from "./model.js";\nexport default T_RP;\n',
      "model.ts": "export const T_RP = 14;\n",
    });
    const before = pathDigest(join(dir, "plug.ts"));
    writeFileSync(join(dir, "model.ts"), "export const T_RP = 40;\n");
    expect(pathDigest(join(dir, "plug.ts"))).not.toBe(before);
  });

  it("of a package folder changes with any file's path or bytes, not with node_modules or dot-folders", () => {
    const files = { "package.json": "{}", "src/index.ts": "export {};\n" };
    const a = folderWith(files);
    const b = folderWith({ ...files, "node_modules/x/index.js": "junk", ".git/HEAD": "ref" });
    expect(pathDigest(a)).toBe(pathDigest(b));
    expect(pathDigest(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(pathDigest(folderWith({ ...files, "src/index.ts": "export {}; \n" }))).not.toBe(pathDigest(a));
    expect(pathDigest(folderWith({ "package.json": "{}", "lib/index.ts": "export {};\n" }))).not.toBe(
      pathDigest(a),
    );
  });
});

describe("pluginPaths and queuedJob", () => {
  it("list the plug-ins given by path, the point's and its topology's, once each; package names are not files", () => {
    const job = jobOf(
      "b",
      ["./hbm.ts", "kb-plugin-systolic-gemm", "./hbm.ts"],
      ["/abs/pe.ts", 7, "npm-name"],
    );
    expect(pluginPaths(job)).toEqual(["./hbm.ts", "/abs/pe.ts"]);
  });

  it("carry the sha256 of each plug-in as the sweep's folder has it, null for a missing one", () => {
    const root = folderWith({ "hbm.ts": "hbm v1\n" });
    const queued = queuedJob(jobOf("b", ["./hbm.ts", "./gone.ts"]), root);
    expect(queued.pluginDigests).toEqual({ "./hbm.ts": sha256("hbm v1\n"), "./gone.ts": null });
    // Names and digests only: JSON as it crosses Redis.
    expect(JSON.parse(JSON.stringify(queued))).toEqual(queued);
  });
});

describe("refusalOf", () => {
  const bench = "export default defineBench({});\n";

  it("lets a worker with the same bench and plug-ins run the job", () => {
    const sweepSide = folderWith({ "bench.ts": bench, "hbm.ts": "hbm v1\n" });
    const workerSide = folderWith({ "bench.ts": bench, "hbm.ts": "hbm v1\n" });
    const queued = queuedJob(jobOf(bench, ["./hbm.ts"]), sweepSide);
    expect(refusalOf(queued, join(workerSide, "bench.ts"), workerSide)).toBeNull();
  });

  it("refuses a bench whose bytes differ, naming the file, both digests and what to do", () => {
    const workerSide = folderWith({ "bench.ts": `${bench}// edited\n` });
    const queued = queuedJob(jobOf(bench), workerSide);
    const reason = refusalOf(queued, join(workerSide, "bench.ts"), workerSide);
    expect(reason).toBe(
      `kb worker on ${hostname()} refused point 3: its bench ${join(workerSide, "bench.ts")} has sha256 ` +
        `${sha256(`${bench}// edited\n`).slice(0, 12)}, the sweep planned with ${sha256(bench).slice(0, 12)}. ` +
        "Give the worker the same bench file (same checkout or installation) and run the sweep again.",
    );
  });

  it("refuses a job of a sweep whose @kb versions differ from the worker's, naming the first package", () => {
    const side = folderWith({ "bench.ts": bench });
    const sweepVersions = { "@kb/components": "0.4.0", "@kb/runtime": "0.3.0" };
    const queued = queuedJob(jobOf(bench), side, sweepVersions);
    expect(queued.versions).toEqual(sweepVersions);
    expect(refusalOf(queued, join(side, "bench.ts"), side, { ...sweepVersions })).toBeNull();
    expect(
      refusalOf(queued, join(side, "bench.ts"), side, { ...sweepVersions, "@kb/runtime": "0.3.1" }),
    ).toBe(
      `kb worker on ${hostname()} refused point 3: it runs @kb/runtime 0.3.1, the sweep planned with @kb/runtime 0.3.0. ` +
        "Install the same kb version on the workers as on the sweep's machine (npm install -g @kb/cli@VERSION, or the same checkout built), then run the sweep again.",
    );
    // A package on one side only differs too; a job or a worker without versions is not checked.
    expect(refusalOf(queued, join(side, "bench.ts"), side, { "@kb/runtime": "0.3.0" })).toContain(
      "it runs @kb/components (none), the sweep planned with @kb/components 0.4.0",
    );
    expect(
      refusalOf(queuedJob(jobOf(bench), side), join(side, "bench.ts"), side, { "@kb/runtime": "9" }),
    ).toBeNull();
    expect(refusalOf(queued, join(side, "bench.ts"), side)).toBeNull();
  });

  it("refuses when the worker has no such bench", () => {
    const workerSide = folderWith({});
    const reason = refusalOf(queuedJob(jobOf(bench), workerSide), undefined, workerSide);
    expect(reason).toContain(`refused point 3: it has no bench "./bench.ts" (looked from ${workerSide})`);
    expect(reason).toContain("Start the worker in the sweep's folder (or --root it)");
  });

  it("refuses a plug-in that differs or is missing on the worker", () => {
    const sweepSide = folderWith({ "hbm.ts": "hbm v1\n" });
    const queued = queuedJob(jobOf(bench, ["./hbm.ts"]), sweepSide);
    const other = folderWith({ "bench.ts": bench, "hbm.ts": "hbm v2\n" });
    expect(refusalOf(queued, join(other, "bench.ts"), other)).toContain(
      `its plug-in ${join(other, "hbm.ts")} has sha256 ${sha256("hbm v2\n").slice(0, 12)}, the sweep planned with ${sha256("hbm v1\n").slice(0, 12)}`,
    );
    const without = folderWith({ "bench.ts": bench });
    expect(refusalOf(queued, join(without, "bench.ts"), without)).toContain(
      `its plug-in ${join(without, "hbm.ts")} has sha256 (missing)`,
    );
  });

  it("checks a topology's plug-in by its absolute path", () => {
    const shared = folderWith({ "pe.ts": "pe v1\n" });
    const worker = folderWith({ "bench.ts": bench });
    const queued = queuedJob(jobOf(bench, [], [join(shared, "pe.ts")]), folderWith({}));
    expect(refusalOf(queued, join(worker, "bench.ts"), worker)).toBeNull();
    writeFileSync(join(shared, "pe.ts"), "pe v2\n");
    expect(refusalOf(queued, join(worker, "bench.ts"), worker)).toContain(
      `its plug-in ${join(shared, "pe.ts")}`,
    );
  });
});
