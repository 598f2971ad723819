import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { RunResultsSchema } from "@kb/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// Plug-ins given by path (--plugin ./x.ts, plugins: [./x.js]) with kb run and kb topology
// validate, in a temp folder with no node_modules: the plug-ins get @kb/components, @kb/builtins
// and zod from kb.

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const copyBench = fileURLToPath(new URL("__fixtures__/copy-bench.ts", import.meta.url));
const REFERENCE_TOPOLOGIES = ["default.yaml", "ref-cube.yaml", "ref-4sip.yaml"];

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "kb-cli-plugin-paths-")));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(path: string, text: string): string {
  const file = join(dir, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** A topology of one cube in the temp folder, with these lines after its header (line 4 on). */
const topology = (path: string, lines: readonly string[] = []) =>
  write(path, `${["name: t", "sip:", "  cubes: 1", ...lines].join("\n")}\n`);

/** Runs `body` with the working directory set to `directory` (--plugin paths resolve from it). */
async function inDirectory<T>(directory: string, body: () => Promise<T>): Promise<T> {
  const previous = process.cwd();
  process.chdir(directory);
  try {
    return await body();
  } finally {
    process.chdir(previous);
  }
}

// A TypeScript plug-in: pe_dma_v1 with a descriptor setup of `setup_ns` per copy (default 1000).
const SLOW_DMA_TS = `import { BUILTIN_COMPONENTS } from "@kb/builtins";
import { type ComponentDefinition, defineComponent, definePlugin } from "@kb/components";
import * as z from "zod";

const dma = BUILTIN_COMPONENTS.find((definition) => definition.impl === "pe_dma_v1") as ComponentDefinition;
const setupNs: number = 1000;

export default definePlugin({
  meta: { name: "slow-dma", version: "0.1.0" },
  components: [
    defineComponent({
      kind: "pe_dma",
      impl: "slow_dma",
      description: "pe_dma_v1 with a slow descriptor setup.",
      params: z.strictObject({ setup_ns: z.number().min(0).default(setupNs) }),
      create: (context, params: { setup_ns: number }) => dma.create(context, dma.params.parse(params)),
    }),
  ],
});
`;

const SLOW_DMA_OVERRIDE = ["overrides:", '  - match: "sip*.cube*.pe*.pe_dma"', "    impl: slow-dma:slow_dma"];

describe("kb run --plugin PATH", () => {
  it("a TypeScript plug-in beside the working directory times the run's DMA", async () => {
    write("my-dma.ts", SLOW_DMA_TS);
    const base = topology("base.yaml");
    const slow = topology("slow.yaml", SLOW_DMA_OVERRIDE);
    const [before, after] = await inDirectory(dir, async () => [
      await kb("run", copyBench, "--topology", base, "--json"),
      await kb("run", copyBench, "--topology", slow, "--plugin", "./my-dma.ts", "--json"),
    ]);
    expect(after.stderr).toBe("");
    expect(after.code).toBe(0);
    const baseNs = RunResultsSchema.parse(JSON.parse(before?.stdout ?? "")).simTimeNs;
    const slowNs = RunResultsSchema.parse(JSON.parse(after?.stdout ?? "")).simTimeNs;
    // The copy's load and store are one DMA copy each, 1000 ns of setup apiece, one after the other.
    expect(slowNs - baseNs).toBeCloseTo(2000, 6);
  });

  it("a --plugin path that does not exist is exit 1 naming the absolute path", async () => {
    const file = topology("t.yaml");
    const run = await inDirectory(dir, () =>
      kb("run", copyBench, "--topology", file, "--plugin", "./nope.ts"),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `[COMPONENT_PLUGIN_NOT_FOUND] plug-in path "./nope.ts" does not exist: resolved from ${dir} to ${dir}/nope.ts; tried ${dir}/nope.ts. ` +
        "Give a package directory (with package.json) or a .ts, .mts, .js or .mjs file; a path in plugins: is relative to the topology file, one given with --plugin to the current directory.\n",
    );
  });
});

describe("kb topology validate: plug-ins, impls and params", () => {
  it("passes on the reference topologies", async () => {
    const files = REFERENCE_TOPOLOGIES.map((name) => repo(`topologies/${name}`));
    const run = await kb("topology", "validate", ...files);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n").map((line) => line.split(":")[0])).toEqual([
      ...files.map((file) => `OK ${file}`),
      "",
    ]);
  });

  it("loads --plugin paths from the working directory and plugins: paths from the file's directory", async () => {
    write("my-dma.ts", SLOW_DMA_TS);
    const viaOption = topology("designs/a.yaml", SLOW_DMA_OVERRIDE);
    const gemm = relative(join(dir, "designs"), repo("examples/kb-plugin-systolic-gemm"));
    const viaFile = topology("designs/b.yaml", [
      `plugins: [../my-dma.ts, "${gemm}"]`,
      ...SLOW_DMA_OVERRIDE,
      '  - match: "sip*.cube*.pe*.pe_gemm"',
      "    impl: kb-plugin-systolic-gemm:systolic_gemm",
    ]);
    const run = await inDirectory(dir, () =>
      kb("topology", "validate", viaOption, "--plugin", "./my-dma.ts"),
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^OK .*a\.yaml: t: 1 SIP\(s\), 1 cube\(s\), 8 PE\(s\), \d+ nodes, \d+ links\n$/,
    );
    expect(run.stdout.startsWith(`OK ${viaOption}: `)).toBe(true);
    const fromFile = await kb("topology", "validate", viaFile);
    expect(fromFile.stderr).toBe("");
    expect(fromFile.stdout.startsWith(`OK ${viaFile}: t: `)).toBe(true);
  });

  it("an unknown impl, at its impl:", async () => {
    const file = topology("t.yaml", SLOW_DMA_OVERRIDE);
    const run = await kb("topology", "validate", file);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      `${file}:6:11: overrides[0].impl: unknown impl "slow-dma:slow_dma" for kind pe_dma (8 nodes, e.g. sip0.cube0.pe0.pe_dma); impls registered for kind pe_dma: pe_dma_v1 (built-in). plug-in slow-dma is not loaded: add it to the topology's plugins: list (or pass --plugin), as the package name "slow-dma" or the path of its folder or file (./slow-dma, ./slow-dma.ts).\n`,
    );
  });

  it("bad params of an impl, at the param", async () => {
    write("my-dma.ts", SLOW_DMA_TS);
    const file = topology("t.yaml", [
      "plugins: [./my-dma.ts]",
      ...SLOW_DMA_OVERRIDE,
      "    params: { setup_ns: -5 }",
      "pe_template:",
      "  components:",
      "    pe_gemm: { params: { mac_rowz: 64 } }",
    ]);
    const run = await kb("topology", "validate", file);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `${file}:8:25: overrides[0].params.setup_ns: value must be >= 0, got number -5 (impl slow-dma:slow_dma; 8 nodes, e.g. sip0.cube0.pe0.pe_dma).\n` +
        `${file}:11:26: pe_template.components.pe_gemm.params.mac_rowz: unknown param "mac_rowz" of impl pe_gemm_v1 (8 nodes, e.g. sip0.cube0.pe0.pe_gemm); did you mean "mac_rows"? Params of pe_gemm_v1: dtype_cycles, freq_ghz, mac_cols, mac_rows, overhead_cycles, queue_depth.\n`,
    );
  });

  it("a plug-in package that is not installed, at its plugins: entry", async () => {
    const file = topology("t.yaml", ["plugins:", "  - kb-plugin-nowhere"]);
    const run = await inDirectory(dir, () => kb("topology", "validate", file));
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `[COMPONENT_PLUGIN_NOT_FOUND] ${file}:5:5: plug-in package "kb-plugin-nowhere" is not installed: no node_modules/kb-plugin-nowhere in ${dir} or any parent directory. ` +
        "Install it where the topology is (npm install kb-plugin-nowhere), fix the name, or give its path (./...).\n",
    );
  });

  it("a plug-in path that does not exist, at its plugins: entry", async () => {
    const file = topology("designs/t.yaml", ["plugins: [../plugins/hbm]"]);
    const run = await kb("topology", "validate", file);
    expect(run.code).toBe(1);
    const path = join(dir, "plugins", "hbm");
    expect(run.stderr).toBe(
      `[COMPONENT_PLUGIN_NOT_FOUND] ${file}:4:11: plug-in path "../plugins/hbm" does not exist: resolved from ${dir}/designs to ${path}; tried ${path}, ${path}.ts, ${path}.mts, ${path}.js, ${path}.mjs. ` +
        "Give a package directory (with package.json) or a .ts, .mts, .js or .mjs file; a path in plugins: is relative to the topology file, one given with --plugin to the current directory.\n",
    );
  });

  it("--help shows --plugin", async () => {
    const help = await kb("topology", "validate", "--help");
    expect(help.stdout).toContain("--plugin <package-or-path...>");
  });
});
