import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SweepJob } from "../../executor.js";
import { jobFiles, pathDigest, pluginPaths, queuedJob, rootRelative } from "./job-files.js";

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
  it("is the sha256 of a file's bytes, found with or without its extension", async () => {
    const dir = folderWith({ "plug.ts": "export default 1;\n" });
    expect(await pathDigest(join(dir, "plug.ts"))).toBe(sha256("export default 1;\n"));
    expect(await pathDigest(join(dir, "plug"))).toBe(sha256("export default 1;\n"));
    expect(await pathDigest(join(dir, "missing"))).toBeNull();
  });

  it("of a plug-in file covers the files it imports by relative path (fault: an edited model the worker ran)", async () => {
    const dir = folderWith({
      "plug.ts": 'import { T_RP } from "./model.js";\nexport default T_RP;\n',
      "model.ts": "export const T_RP = 14;\n",
    });
    const before = await pathDigest(join(dir, "plug.ts"));
    writeFileSync(join(dir, "model.ts"), "export const T_RP = 40;\n");
    expect(await pathDigest(join(dir, "plug.ts"))).not.toBe(before);
  });

  it("of a package folder changes with any file's path or bytes, not with node_modules or dot-folders", async () => {
    const files = { "package.json": "{}", "src/index.ts": "export {};\n" };
    const a = folderWith(files);
    const b = folderWith({ ...files, "node_modules/x/index.js": "junk", ".git/HEAD": "ref" });
    expect(await pathDigest(a)).toBe(await pathDigest(b));
    expect(await pathDigest(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(await pathDigest(folderWith({ ...files, "src/index.ts": "export {}; \n" }))).not.toBe(
      await pathDigest(a),
    );
    expect(await pathDigest(folderWith({ "package.json": "{}", "lib/index.ts": "export {};\n" }))).not.toBe(
      await pathDigest(a),
    );
  });
});

const VERSIONS = { "@kb/runtime": "0.3.0" };

describe("pluginPaths and queuedJob", () => {
  it("list the plug-ins given by path, the point's and its topology's, once each; package names are not files", async () => {
    const job = jobOf(
      "b",
      ["./hbm.ts", "kb-plugin-systolic-gemm", "./hbm.ts"],
      ["/abs/pe.ts", 7, "npm-name"],
    );
    expect(pluginPaths(job)).toEqual(["./hbm.ts", "/abs/pe.ts"]);
  });

  it("carry the sha256 of each plug-in as the sweep's folder has it, null for a missing one", async () => {
    const root = folderWith({ "hbm.ts": "hbm v1\n" });
    const queued = await queuedJob(jobOf("b", ["./hbm.ts", "./gone.ts"]), root, VERSIONS);
    expect(queued.pluginDigests).toEqual({ "./hbm.ts": sha256("hbm v1\n"), "./gone.ts": null });
    expect(queued.versions).toEqual(VERSIONS);
    // Names and digests only: JSON as it crosses Redis.
    expect(JSON.parse(JSON.stringify(queued))).toEqual(queued);
  });

  it("name every path relative to the sweep's folder (a topology's absolute plug-in too), and refuse one outside it", async () => {
    const root = folderWith({ "plugins/pe.ts": "pe\n", "bench.ts": "b" });
    const queued = await queuedJob(
      { ...jobOf("b", ["./plugins/../plugins/pe.ts"], [join(root, "plugins", "pe.ts")]), bench: "bench.ts" },
      root,
      VERSIONS,
    );
    expect(queued.job.bench).toBe("./bench.ts");
    expect(queued.job.inputs.plugins).toEqual(["./plugins/pe.ts"]);
    expect(queued.job.inputs.topology.plugins).toEqual(["./plugins/pe.ts"]);
    expect(queued.pluginDigests).toEqual({ "./plugins/pe.ts": sha256("pe\n") });
    await expect(queuedJob(jobOf("b", ["../elsewhere.ts"]), root, VERSIONS)).rejects.toThrow(
      `point 3: the plug-in ../elsewhere.ts is outside the sweep's folder ${root}, and kb workers read files only inside their --root`,
    );
    expect(rootRelative(root, "/etc/passwd")).toBeNull();
    expect(rootRelative(root, ".")).toBeNull();
    expect(rootRelative(root, "a/b.ts")).toBe("./a/b.ts");
  });
});

describe("jobFiles", () => {
  const bench = "export default defineBench({});\n";
  const noBench = () => undefined;

  it("lets a worker with the same bench and plug-ins run the job, with the real paths of its plug-ins", async () => {
    const sweepSide = folderWith({ "bench.ts": bench, "hbm.ts": "hbm v1\n" });
    const workerSide = folderWith({ "bench.ts": bench, "hbm.ts": "hbm v1\n" });
    const queued = await queuedJob(jobOf(bench, ["./hbm"], [join(sweepSide, "hbm.ts")]), sweepSide, VERSIONS);
    const files = await jobFiles(queued, workerSide, VERSIONS, noBench);
    expect(files).toEqual({
      benchFile: join(realpathSync(workerSide), "bench.ts"),
      job: expect.objectContaining({
        inputs: {
          topology: { name: "t", plugins: [join(realpathSync(workerSide), "hbm.ts")] },
          params: { n: 1 },
          plugins: [join(realpathSync(workerSide), "hbm.ts")],
        },
      }),
    });
  });

  it("finds a bench name with findBench", async () => {
    const side = folderWith({ "benches/gemm.ts": bench });
    const queued = await queuedJob({ ...jobOf(bench), bench: "gemm" }, side, VERSIONS);
    expect(
      await jobFiles(queued, side, VERSIONS, (name) => join(side, "benches", `${name}.ts`)),
    ).toMatchObject({
      benchFile: join(side, "benches", "gemm.ts"),
    });
  });

  it("refuses a bench whose bytes differ, naming the file, both digests and what to do", async () => {
    const workerSide = folderWith({ "bench.ts": `${bench}// edited\n` });
    const queued = await queuedJob(jobOf(bench), workerSide, VERSIONS);
    expect(await jobFiles(queued, workerSide, VERSIONS, noBench)).toEqual({
      refusal:
        `kb worker on ${hostname()} refused point 3: its bench ${join(realpathSync(workerSide), "bench.ts")} has sha256 ` +
        `${sha256(`${bench}// edited\n`).slice(0, 12)}, the sweep planned with ${sha256(bench).slice(0, 12)}. ` +
        "Give the worker the same bench file (same checkout or installation) and run the sweep again.",
    });
  });

  it("refuses a job of a sweep whose @kb versions differ from the worker's, naming the first package", async () => {
    const side = folderWith({ "bench.ts": bench });
    const sweepVersions = { "@kb/components": "0.4.0", "@kb/runtime": "0.3.0" };
    const queued = await queuedJob(jobOf(bench), side, sweepVersions);
    expect(await jobFiles(queued, side, { ...sweepVersions }, noBench)).not.toHaveProperty("refusal");
    expect(await jobFiles(queued, side, { ...sweepVersions, "@kb/runtime": "0.3.1" }, noBench)).toEqual({
      refusal:
        `kb worker on ${hostname()} refused point 3: it runs @kb/runtime 0.3.1, the sweep planned with @kb/runtime 0.3.0. ` +
        "Install the same kb version on the workers as on the sweep's machine (npm install -g @kb/cli@VERSION, or the same checkout built), then run the sweep again.",
    });
    // A package on one side only differs too.
    expect(await jobFiles(queued, side, { "@kb/runtime": "0.3.0" }, noBench)).toMatchObject({
      refusal: expect.stringContaining(
        "it runs @kb/components (none), the sweep planned with @kb/components 0.4.0",
      ),
    });
  });

  it("refuses when the worker has no such bench", async () => {
    const workerSide = folderWith({});
    const files = await jobFiles(
      await queuedJob(jobOf(bench), workerSide, VERSIONS),
      workerSide,
      VERSIONS,
      noBench,
    );
    expect(files).toMatchObject({
      refusal: expect.stringContaining(
        `refused point 3: it has no bench "./bench.ts" (looked from ${workerSide})`,
      ),
    });
  });

  it("refuses a plug-in that differs or is missing on the worker", async () => {
    const sweepSide = folderWith({ "hbm.ts": "hbm v1\n" });
    const queued = await queuedJob(jobOf(bench, ["./hbm.ts"]), sweepSide, VERSIONS);
    const other = folderWith({ "bench.ts": bench, "hbm.ts": "hbm v2\n" });
    expect(await jobFiles(queued, other, VERSIONS, noBench)).toMatchObject({
      refusal: expect.stringContaining(
        `its plug-in ${join(other, "hbm.ts")} has sha256 ${sha256("hbm v2\n").slice(0, 12)}, the sweep planned with ${sha256("hbm v1\n").slice(0, 12)}`,
      ),
    });
    const without = folderWith({ "bench.ts": bench });
    expect(await jobFiles(queued, without, VERSIONS, noBench)).toMatchObject({
      refusal: expect.stringContaining(`its plug-in ${join(without, "hbm.ts")} has sha256 (missing)`),
    });
  });
});

describe("fault: a job's files out of the worker's --root", () => {
  const bench = "export default 1;\n";

  it("refuses a bench or plug-in that is a symlink out of the root, without reading it as the job's", async () => {
    const outside = folderWith({ "evil.ts": bench });
    const root = folderWith({});
    symlinkSync(join(outside, "evil.ts"), join(root, "bench.ts"));
    symlinkSync(outside, join(root, "plugins"));
    const queued = await queuedJob(jobOf(bench), outside, VERSIONS);
    expect(await jobFiles(queued, root, VERSIONS, () => undefined)).toMatchObject({
      refusal: expect.stringContaining(
        `refused point 3: its bench "./bench.ts" is a link to ${realpathSync(join(outside, "evil.ts"))}, which leads out of its --root ${root}`,
      ),
    });
    writeFileSync(join(root, "real-bench.ts"), bench);
    const withPlugin = {
      ...queued,
      job: {
        ...queued.job,
        bench: "./real-bench.ts",
        inputs: { ...queued.job.inputs, plugins: ["./plugins/evil"] },
      },
      pluginDigests: { "./plugins/evil": sha256(bench) },
    };
    expect(await jobFiles(withPlugin, root, VERSIONS, () => undefined)).toMatchObject({
      refusal: expect.stringContaining(
        `its plug-in "./plugins/evil" is a link to ${realpathSync(join(outside, "evil.ts"))}`,
      ),
    });
  });
});
