import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as components from "@kb/components";
import * as oplog from "@kb/oplog";
import * as tensor from "@kb/tensor";
import * as topology from "@kb/topology";
import { describe, expect, it } from "vitest";
import * as spec from "./index.js";

// The vocabulary has one definition, here: the packages that first published it re-export the
// same objects (an import from either keeps working and means the same thing), nothing else
// defines a Dtype, and the kernel library depends on the vocabulary, not on the machine.

const packagesDir = fileURLToPath(new URL("../../", import.meta.url));

/** The package.json of `packages/<name>`. */
function packageJson(name: string): Record<string, Record<string, string> | undefined> {
  return JSON.parse(readFileSync(join(packagesDir, name, "package.json"), "utf8"));
}

/** The `.ts` files under `dir`, recursively (tests included when `tests`). */
function sourceFiles(dir: string, tests: boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path, tests);
    if (!entry.name.endsWith(".ts") || entry.name.endsWith(".d.ts")) return [];
    return tests || !/\.test\.ts$|test-support\.ts$/.test(entry.name) ? [path] : [];
  });
}

describe("the one definition of the vocabulary", () => {
  it("@kb/tensor, @kb/oplog and @kb/components hand out spec's dtypes, not copies", () => {
    expect(spec.DTYPES).toEqual([
      "f32",
      "f16",
      "bf16",
      "i8",
      "i32",
      "i1",
      "u32",
      "u8",
      "u16",
      "i16",
      "i64",
      "u64",
      "f8e4m3",
      "f8e5m2",
      "f4e2m1",
    ]);
    expect(tensor.DTYPES).toBe(spec.DTYPES);
    expect(tensor.DTYPE_BYTES).toBe(spec.DTYPE_BYTES);
    expect(components.DTYPE_BYTES).toBe(spec.DTYPE_BYTES);
    expect(oplog.dtypeSchema).toBe(spec.dtypeSchema);
    expect(spec.dtypeSchema.options).toEqual([...spec.DTYPES]);
    expect(Object.keys(spec.DTYPE_BYTES)).toEqual([...spec.DTYPES]);
  });

  it("@kb/oplog and @kb/components hand out spec's math op table, evaluation and atomics", () => {
    for (const name of ["MATH_OPS", "MATH_SHAPES", "PUBLIC_MATH_OPS", "SCALAR_OPS"] as const) {
      expect(oplog[name], name).toBe(spec[name]);
      expect(components[name], name).toBe(spec[name]);
    }
    for (const name of ["broadcastShapes", "evaluateMath", "mathOutputShape", "atomicResult"] as const) {
      expect(oplog[name], name).toBe(spec[name]);
      expect(components[name], name).toBe(spec[name]);
    }
    expect(oplog.atomicOpSchema).toBe(spec.atomicOpSchema);
    expect(components.maskPieces).toBe(spec.maskPieces);
    expect(components.indexedRuns).toBe(spec.indexedRuns);
  });

  it("the HBM params a controller receives are the topology's HBM node keys, plus its queue depth", () => {
    expect(topology.HBM_GEOMETRY_KEYS).toBe(spec.HBM_GEOMETRY_KEYS);
    expect(components.hbmTopologyParams).toBe(spec.hbmTopologyParams);
    expect(Object.keys(spec.hbmTopologyParams.shape)).toEqual([...spec.HBM_NODE_KEYS, "queue_depth"]);
    expect([...spec.HBM_GEOMETRY_KEYS, ...spec.HBM_TIMING_KEYS].sort()).toEqual(
      [...spec.HBM_NODE_KEYS].sort(),
    );
    // What a default topology gives an HBM controller node parses as its model's params.
    const graph = topology.expandTopology(topology.resolveTopology({ name: "t" }));
    const controller = graph.nodes.find((node) => node.kind === "hbm_ctrl");
    expect(controller).toBeDefined();
    const params = spec.hbmTopologyParams.parse(controller?.params);
    expect(params.channels).toBe(8);
    expect(params.queue_depth).toBe(64);
  });

  it("no package but @kb/spec spells out the Dtype union or a dtype enum (subsets derive from it)", () => {
    const found = readdirSync(packagesDir)
      .filter((name) => name !== "spec")
      .flatMap((name) => {
        const src = join(packagesDir, name, "src");
        return readdirSync(join(packagesDir, name)).includes("src") ? sourceFiles(src, false) : [];
      })
      .filter((file) => {
        const text = readFileSync(file, "utf8");
        return /^export type Dtype\s*=\s*"/m.test(text) || /z\.enum\(\[\s*"f32",\s*"f16"/.test(text);
      })
      .map((file) => file.slice(packagesDir.length));
    expect(found).toEqual([]);
  });

  it("@kb/tl depends on @kb/spec, not on the machine (@kb/components)", () => {
    const tl = packageJson("tl");
    expect(tl.dependencies?.["@kb/spec"]).toBe("workspace:^");
    expect(tl.dependencies?.["@kb/components"]).toBeUndefined();
    expect(tl.peerDependencies?.["@kb/components"]).toBeUndefined();
    // Only its tests build a machine (a devDependency); no shipped file imports the machine.
    const importers = sourceFiles(join(packagesDir, "tl", "src"), false)
      .filter((file) => readFileSync(file, "utf8").includes('"@kb/components'))
      .map((file) => file.slice(packagesDir.length));
    expect(importers).toEqual([]);
  });

  it("@kb/spec itself depends on @kb/errors and zod only", () => {
    const own = packageJson("spec");
    expect(Object.keys(own.dependencies ?? {})).toEqual(["@kb/errors"]);
    expect(Object.keys(own.peerDependencies ?? {})).toEqual(["zod"]);
    const imported = new Set(
      sourceFiles(join(packagesDir, "spec", "src"), false).flatMap((file) =>
        [...readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?\bfrom "([^".][^"]*)"/gm)].map(
          (match) => match[1],
        ),
      ),
    );
    expect([...imported].sort()).toEqual(["@kb/errors", "zod"]);
  });
});
