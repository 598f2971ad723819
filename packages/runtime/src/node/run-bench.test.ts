import { fileURLToPath } from "node:url";
import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineBench } from "../bench.js";
import { canonicalJson, sha256Hex } from "../manifest.js";
import type { RunProgress } from "../run-bench-core-parts.js";
import { failure } from "../test-support.js";
import { runBench } from "./run-bench.js";

// runBench is the one orchestration of a run (DESIGN §10): the same inputs give the same results
// JSON, byte for byte, with a manifest that names them.

const benchFile = fileURLToPath(import.meta.url);

/** Copies n f32 ones to the device and checks them there. */
const copyBench = defineBench({
  name: "copy",
  params: z.object({ n: z.number().int().positive().default(256), seed: z.number().default(3) }),
  async run(sim, p) {
    const ones = Tensor.full([p.n], 1, "f32");
    const actual = await sim.toDevice(ones, { name: "x" });
    return { check: { x: { actual, reference: () => ones } } };
  },
});

describe("runBench", () => {
  it("gives the same results JSON for the same inputs, with the manifest", async () => {
    const options = {
      bench: copyBench,
      benchFile,
      topology: { name: "tiny" },
      params: { n: "512" },
      verify: true,
    };
    const first = await runBench(options);
    const second = await runBench(options);
    expect(JSON.stringify(second.results)).toBe(JSON.stringify(first.results));
    expect(first.passed).toBe(true);
    expect(first.results.verification?.pass).toBe(true);
    expect(first.results.manifest).toEqual(first.manifest);
    expect(first.manifest).toMatchObject({
      schema: "kb.manifest/1",
      plugins: [],
      topology: { name: "tiny" },
      bench: { name: "copy" },
      params: { n: 512, seed: 3 },
      seed: 3,
      options: { verify: true },
      node: process.version,
    });
    expect(first.manifest.packages["@kb/runtime"]).toMatch(/^\d+\.\d+\.\d+/);
    // The vocabulary (dtypes, the math op table phase 2 evaluates with) is a package of its own.
    expect(first.manifest.packages["@kb/spec"]).toMatch(/^\d+\.\d+\.\d+/);
    const { node: _node, digest, ...body } = first.manifest;
    expect(digest).toBe(await sha256Hex(canonicalJson(body)));
    expect(first.results.simTimeNs).toBeGreaterThan(0);
  });

  it("changes the digest with a param, not with a trace", async () => {
    const base = { bench: copyBench, benchFile, topology: { name: "tiny" } };
    const plain = await runBench(base);
    const traced = await runBench({ ...base, trace: {} });
    const other = await runBench({ ...base, params: { n: 128 } });
    expect(traced.manifest.digest).toBe(plain.manifest.digest);
    expect(JSON.stringify(traced.results)).toBe(JSON.stringify(plain.results));
    expect(traced.recorder?.events.length).toBeGreaterThan(0);
    expect(other.manifest.digest).not.toBe(plain.manifest.digest);
  });

  it("reports its stages", async () => {
    const stages: RunProgress["stage"][] = [];
    await runBench({
      bench: copyBench,
      benchFile,
      topology: { name: "tiny" },
      verify: true,
      onProgress: (progress) => {
        if (stages.at(-1) !== progress.stage) stages.push(progress.stage);
      },
    });
    expect(stages).toEqual(["build", "phase1", "phase2", "compare", "reference"]);
  });

  it("refuses bad params before building anything", async () => {
    const error = await failure(
      runBench({ bench: copyBench, benchFile, topology: { name: "tiny" }, params: { m: 1 } }),
    );
    expect(error.message).toContain("m: not a param of this bench");
  });
});
