import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Tensor } from "@kb/tensor";
import { readmeExample } from "@kb/tooling/readme-example";
import { afterAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { defineBench } from "./bench.js";
import { packageVersions } from "./node/manifest-node.js";
import { runBench } from "./node/run-bench.js";
import { RunResultsSchema } from "./results.js";
import { runBenchCore } from "./run-bench-core.js";
import { failure } from "./test-support.js";

// runBenchCore is the run without files: given the topology's text and the bench's source, it
// gives what runBench (its Node adapter, reading the same files) gives, manifest included.

// The bench's file is a single file (no relative imports): its digest is the sha256 of its text on
// both sides. A bench that imports files passes them (`importedSourceFiles`), as the playground
// does; source-files.test.ts checks that both sides find the same files.
const benchSource = readFileSync(fileURLToPath(import.meta.url), "utf8").replace(/^import .*\n/gm, "");
const benchDir = mkdtempSync(join(tmpdir(), "kb-core-bench-"));
afterAll(() => rmSync(benchDir, { recursive: true, force: true }));
const benchFile = join(benchDir, "copy-bench.ts");
writeFileSync(benchFile, benchSource);

/** Copies n f32 ones to the device and checks them there. */
const copyBench = defineBench({
  name: "copy",
  params: z.object({ n: z.number().int().positive().default(256) }),
  async run(sim, p) {
    const ones = Tensor.full([p.n], 1, "f32");
    const actual = await sim.toDevice(ones, { name: "x" });
    return { check: { x: { actual, reference: () => ones } } };
  },
});

/** Throws a plain error from this file, as a bench with a bug does. */
const throwingBench = defineBench({
  name: "throws",
  params: z.object({}),
  async run() {
    throw new Error("the bench's own bug");
  },
});

/** Returns a report with a series over simulated time, as llama-serve does. */
const reportingBench = defineBench({
  name: "reports",
  params: z.object({}),
  async run() {
    const series = [{ name: "KV cache occupancy", unit: "% of blocks", x: [0, 500], y: [25, 0] }];
    return { report: { title: "t", columns: ["figure", "value"], rows: [["TTFT p50", 1.5]], series } };
  },
});

describe("runBenchCore", () => {
  it("puts the bench's report in the results with its series, which the results schema keeps", async () => {
    const core = await runBenchCore({
      bench: reportingBench,
      topology: { name: "tiny" },
      packages: {},
      benchSource,
    });
    const report = {
      title: "t",
      columns: ["figure", "value"],
      rows: [["TTFT p50", 1.5]],
      series: [{ name: "KV cache occupancy", unit: "% of blocks", x: [0, 500], y: [25, 0] }],
    };
    expect(core.results.report).toEqual(report);
    expect(RunResultsSchema.parse(JSON.parse(JSON.stringify(core.results))).report).toEqual(report);
  });

  it("gives runBench's results JSON, manifest and digest included, from the topology's text", async () => {
    const node = await runBench({
      bench: copyBench,
      benchFile,
      topology: { name: "tiny" },
      params: { n: "512" },
      verify: true,
    });
    const core = await runBenchCore({
      bench: copyBench,
      topology: "name: tiny\n",
      benchSource,
      packages: packageVersions(),
      params: { n: "512" },
      verify: true,
    });
    expect(core.results.verification?.pass).toBe(true);
    expect(core.phase2Ops).toBe(node.phase2Ops);
    expect(JSON.stringify(core.results, null, 2)).toBe(JSON.stringify(node.results, null, 2));
  });

  it("changes the bench digest with the bench's source, not the results", async () => {
    const options = { bench: copyBench, topology: { name: "tiny" }, packages: {} };
    const first = await runBenchCore({ ...options, benchSource });
    const edited = await runBenchCore({ ...options, benchSource: `${benchSource}\n` });
    expect(edited.manifest.bench.digest).not.toBe(first.manifest.bench.digest);
    expect(edited.results.simTimeNs).toBe(first.results.simTimeNs);
  });

  it("makes a plain error the bench threw RUNTIME_INVALID when the hook says it is the user's", async () => {
    const options = {
      bench: throwingBench,
      topology: { name: "tiny" },
      benchSource,
      benchFile: "my-bench.ts",
    };
    const error = await failure(runBenchCore({ ...options, isUserError: () => true }));
    expect(error.code).toBe("RUNTIME_INVALID");
    expect(error.message).toContain(
      '[RUNTIME_INVALID] my-bench.ts: bench "throws" threw: Error: the bench\'s own bug',
    );
    await expect(runBenchCore({ ...options, isUserError: () => false })).rejects.toThrow(
      /^the bench's own bug$/,
    );
    await expect(runBenchCore(options)).rejects.toThrow(/^the bench's own bug$/);
  });

  it("locates the topology text's errors at its name", async () => {
    const error = await failure(
      runBenchCore({
        bench: copyBench,
        topology: "name: tiny\nbogus: 1\n",
        topologyName: "t.yaml",
        benchSource,
      }),
    );
    expect(error.code).toBe("TOPOLOGY_INVALID");
    expect(error.message).toContain("t.yaml:2:1");
  });

  it("refuses options with no machine, or no way to make the manifest", async () => {
    const noMachine = await failure(runBenchCore({ bench: copyBench, benchSource }));
    expect(noMachine.message).toContain("a topology (YAML text or object) or a simulator factory");
    const noSource = await failure(runBenchCore({ bench: copyBench, topology: { name: "tiny" } }));
    expect(noSource.message).toContain("pass topology and benchSource, or a ready manifest");
  });
});

// The example of the README's "One run, two adapters" section, run as written.
describe("README runBenchCore example", () => {
  it("runs a bench from a topology's text, verified", async () => {
    const printed: unknown[][] = [];
    const console = { log: (...values: unknown[]) => printed.push(values) };
    // README example start

    const copy = defineBench({
      name: "copy",
      params: z.object({ n: z.number().int().positive().default(256) }),
      async run(sim, p) {
        const ones = Tensor.full([p.n], 1, "f32");
        const actual = await sim.toDevice(ones, { name: "x" });
        return { check: { x: { actual, reference: () => ones } } };
      },
    });

    const run = await runBenchCore({
      bench: copy,
      topology: "name: demo\n", // YAML text, as an editor holds it
      topologyName: "demo.yaml", // its errors read demo.yaml:line:col
      benchSource: "the bench file's text", // its sha256 is the manifest's bench digest
      params: { n: "1024" }, // as --param n=1024
      verify: true,
      isUserError: () => false, // which plain errors are the bench's: RUNTIME_INVALID, not a kb bug
    });
    console.log(
      run.passed,
      run.results.verification?.pass,
      run.results.simTimeNs > 0,
      run.manifest.topology.name,
    );
    // true true true demo

    // README example end
    expect(printed).toEqual([[true, true, true, "demo"]]);
  });

  it("is the code of the README's One run, two adapters section", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("## One run, two adapters"));
    const dir = mkdtempSync(join(tmpdir(), "kb-readme-"));
    try {
      const file = join(dir, "README.md");
      writeFileSync(file, section);
      const { readme: block, test } = readmeExample(pathToFileURL(file), import.meta.url);
      expect(block).toContain("runBenchCore");
      expect(test).toBe(block);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
