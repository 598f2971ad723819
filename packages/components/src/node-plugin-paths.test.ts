import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as builtins from "@kb/builtins";
import { defaultRegistry } from "@kb/builtins";

// What kb hands a plug-in file besides @kb/components and zod (PLUGIN_SHARED_MODULES of @kb/runtime/node).
const shared = { "@kb/builtins": builtins };

import { isKbError, type KbError } from "@kb/errors";
import { encodeAddress, type LocatedIssue } from "@kb/topology";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Component } from "./component.js";
import type { Machine } from "./machine.js";
import { buildMachineFromFile, checkTopologyComponents, isPluginPath, loadPlugins } from "./node.js";

// Plug-ins given by path (a topology's plugins:, --plugin): files and package directories, JS and
// TypeScript, in a temp folder with no node_modules: @kb/components and zod come from kernbench.

const examplePlugin = fileURLToPath(new URL("../../../examples/kb-plugin-systolic-gemm", import.meta.url));

let dir: string;
beforeEach(() => {
  // Real path: messages name resolved paths (macOS's /tmp is a link).
  dir = realpathSync(mkdtempSync(join(tmpdir(), "kb-plugin-paths-")));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(path: string, text: string): string {
  const file = join(dir, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** A topology of one cube (8 PEs) in the temp folder, with these extra lines. */
const topology = (lines: readonly string[], path = "topology.yaml") =>
  write(path, `${["name: t", "sip:", "  cubes: 1", ...lines].join("\n")}\n`);

// A GEMM plug-in in plain JavaScript: pe_gemm_v1 with a square array of `size`.
const BIG_GEMM_JS = `import { BUILTIN_COMPONENTS } from "@kb/builtins";
import { defineComponent, definePlugin } from "@kb/components";
import * as z from "zod";

const v1 = BUILTIN_COMPONENTS.find((definition) => definition.impl === "pe_gemm_v1");
export default definePlugin({
  meta: { name: "big", version: "1.0.0" },
  components: [
    defineComponent({
      kind: "pe_gemm",
      impl: "big_gemm",
      description: "pe_gemm_v1 with a size x size array.",
      params: z.strictObject({ size: z.number().int().min(1).default(64) }),
      create: (context, params) => v1.create(context, v1.params.parse({ mac_rows: params.size, mac_cols: params.size })),
    }),
  ],
});
`;

// The same in TypeScript, importing a sibling module by its .js name (as tsc wants).
const BIG_GEMM_TS = `import { defineComponent, definePlugin, type KbPlugin } from "@kb/components";
import { sizeParams, v1 } from "./v1.js";

const plugin: KbPlugin = definePlugin({
  meta: { name: "big-ts", version: "1.0.0" },
  components: [
    defineComponent({
      kind: "pe_gemm",
      impl: "big_gemm",
      description: "pe_gemm_v1 with a size x size array.",
      params: sizeParams,
      create: (context, params: { size: number }) =>
        v1.create(context, v1.params.parse({ mac_rows: params.size, mac_cols: params.size })),
    }),
  ],
});
export default plugin;
`;
const V1_TS = `import { BUILTIN_COMPONENTS } from "@kb/builtins";
import type { ComponentDefinition } from "@kb/components";
import * as z from "zod";

export const v1 = BUILTIN_COMPONENTS.find((definition) => definition.impl === "pe_gemm_v1") as ComponentDefinition;
export const sizeParams = z.strictObject({ size: z.number().int().min(1).default(64) });
`;

/** Simulated ns of one 256^3 f16 composite GEMM on PE 0. */
function gemmNs(machine: Machine): number {
  const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
  const done = machine.submit("sip0.cube0.pe0", [
    {
      kind: "composite_gemm",
      a: hbm(0),
      b: hbm(1 << 20),
      c: hbm(2 << 20),
      m: 256,
      n: 256,
      k: 256,
      dtype: "f16",
    },
  ]);
  machine.run(done);
  return machine.env.now;
}

async function failure(promise: Promise<unknown>): Promise<KbError> {
  try {
    await promise;
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}

const issuesOf = (error: KbError) => (error as unknown as { issues: readonly LocatedIssue[] }).issues;

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

const OVERRIDE_GEMM = (impl: string, params = "") => [
  "overrides:",
  '  - match: "sip*.cube*.pe*.pe_gemm"',
  `    impl: "${impl}"`,
  ...(params === "" ? [] : [`    params: ${params}`]),
];

describe("isPluginPath", () => {
  it("paths start with ./, ../, / or a drive; everything else is a package name", () => {
    for (const path of ["./x.ts", "../x", "/abs/x.js", ".", "..", ".\\x.ts", "C:\\x\\y.ts", "c:/x"]) {
      expect(isPluginPath(path), path).toBe(true);
    }
    for (const name of ["kb-plugin-x", "@acme/kb-plugin-y", ".hidden", "x/y.ts"]) {
      expect(isPluginPath(name), name).toBe(false);
    }
  });
});

describe("plug-ins by path", () => {
  it("a .js file named in plugins: resolves from the topology's directory; its impl changes the timing", async () => {
    write("plugins/big.js", BIG_GEMM_JS);
    const base = await buildMachineFromFile(topology([], "designs/base.yaml"), {
      registryFor: defaultRegistry,
      shared,
    });
    const file = topology(
      ["plugins: [../plugins/big.js]", ...OVERRIDE_GEMM("big:big_gemm", "{ size: 64 }")],
      "designs/big.yaml",
    );
    const { machine, plugins } = await buildMachineFromFile(file, { registryFor: defaultRegistry, shared });
    expect(plugins.map((plugin) => plugin.meta.name)).toEqual(["big"]);
    const gemm = machine.component("sip0.cube0.pe0.pe_gemm");
    expect(gemm.impl).toBe("big:big_gemm");
    // The plug-in's components are the machine's classes: @kb/components came from kernbench.
    expect(gemm).toBeInstanceOf(Component);
    // A 64 x 64 array does a 128-tile in a quarter of the 32 x 32 array's cycles.
    expect(gemmNs(machine)).toBeLessThan(gemmNs(base.machine) * 0.6);
  });

  it("a .ts file (with a sibling .ts imported as .js) and a path without its extension", async () => {
    write("src/big.ts", BIG_GEMM_TS);
    write("src/v1.ts", V1_TS);
    const file = topology(["plugins: [./src/big]", ...OVERRIDE_GEMM("big-ts:big_gemm", "{ size: 128 }")]);
    const { machine } = await buildMachineFromFile(file, { registryFor: defaultRegistry, shared });
    expect(machine.component("sip0.cube0.pe0.pe_gemm").params).toMatchObject({
      mac_rows: 128,
      mac_cols: 128,
    });
  });

  it("a package directory: its built entry (examples/kb-plugin-systolic-gemm, by a relative path)", async () => {
    const path = relative(dir, examplePlugin);
    expect(path.startsWith("../")).toBe(true);
    const file = topology([
      `plugins: ["${path}"]`,
      ...OVERRIDE_GEMM("kb-plugin-systolic-gemm:systolic_gemm", "{ rows: 16, cols: 16 }"),
    ]);
    const { machine } = await buildMachineFromFile(file, { registryFor: defaultRegistry, shared });
    const gemm = machine.component("sip0.cube0.pe0.pe_gemm");
    expect(gemm.impl).toBe("kb-plugin-systolic-gemm:systolic_gemm");
    // The topology's params went through the plug-in's schema (defaults filled in). Its dist
    // imports the built @kb/components (from its own node_modules) while these tests run the
    // sources (two copies of the engine's classes), so the machine is not run here.
    expect(gemm.params).toMatchObject({ rows: 16, cols: 16 });
  });

  it("a package directory whose entry is not built loads its src/index.ts", async () => {
    write(
      "kb-plugin-big/package.json",
      JSON.stringify({ name: "kb-plugin-big", type: "module", exports: { ".": "./dist/index.js" } }),
    );
    write("kb-plugin-big/src/index.ts", BIG_GEMM_TS);
    write("kb-plugin-big/src/v1.ts", V1_TS);
    const plugins = await loadPlugins(["./kb-plugin-big"], { from: dir, shared });
    // meta.name is free for a path: "big-ts" in the package kb-plugin-big.
    expect(plugins.map((plugin) => plugin.meta.name)).toEqual(["big-ts"]);
  });

  it("--plugin paths resolve from the current directory; the same file twice (by any path) loads once", async () => {
    write("plugins/big.js", BIG_GEMM_JS);
    const file = topology(
      ["plugins: [./plugins/big.js]", ...OVERRIDE_GEMM("big:big_gemm")],
      "t/topology.yaml",
    );
    // The topology's path is relative to t/, --plugin's to the working directory.
    write("t/plugins/big.js", BIG_GEMM_JS);
    const twice = await failure(
      inDirectory(dir, () =>
        buildMachineFromFile(file, { registryFor: defaultRegistry, shared, plugins: ["./plugins/big.js"] }),
      ),
    );
    expect(twice.message).toContain("plug-in big is registered twice");
    const { plugins } = await inDirectory(join(dir, "t"), () =>
      checkTopologyComponents(file, {
        registryFor: defaultRegistry,
        shared,
        plugins: ["./plugins/big.js", "./plugins/../plugins/big.js", "./plugins/big"],
      }),
    );
    expect(plugins).toHaveLength(1);
  });

  it("an .mjs file with no package.json around it loads (ESM by its extension)", async () => {
    write("big.mjs", BIG_GEMM_JS);
    const plugins = await loadPlugins(["./big.mjs"], { from: dir, shared });
    expect(plugins[0]?.components[0]?.impl).toBe("big_gemm");
  });
});

describe("README", () => {
  it("my-dma.ts and its topology lines, saved in an empty folder, build a machine with the slow DMA", async () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const source = /```ts\n(\/\/ my-dma\.ts\n[\s\S]*?)```/.exec(readme)?.[1];
    const yaml = /```yaml\n(plugins: \[\.\/my-dma\.ts\]\n[\s\S]*?)```/.exec(readme)?.[1];
    expect(source).toBeDefined();
    expect(yaml).toBeDefined();
    write("my-dma.ts", source ?? "");
    const file = write("topology.yaml", `name: t\nsip:\n  cubes: 1\n${yaml}`);
    const { machine } = await buildMachineFromFile(file, { registryFor: defaultRegistry, shared });
    expect(machine.component("sip0.cube0.pe3.pe_dma").impl).toBe("my-dma:slow_dma");
    expect(machine.component("sip0.cube0.pe3.pe_dma").params).toMatchObject({ setup_ns: 1000 });
  });
});

describe("plug-in path errors", () => {
  it("a missing path in plugins: is COMPONENT_PLUGIN_NOT_FOUND at its entry, naming the absolute path", async () => {
    const file = topology(["plugins:", "  - ./plugins/nope.ts"]);
    const error = await failure(buildMachineFromFile(file, { registryFor: defaultRegistry, shared }));
    expect(error.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(error.context).toEqual({ file, line: 5, col: 5 });
    expect(error.message).toBe(
      `[COMPONENT_PLUGIN_NOT_FOUND] ${file}:5:5: plug-in path "./plugins/nope.ts" does not exist: resolved from ${dir} to ${dir}/plugins/nope.ts; tried ${dir}/plugins/nope.ts. ` +
        "Give a package directory (with package.json) or a .ts, .mts, .js or .mjs file; a path in plugins: is relative to the topology file, one given with --plugin to the current directory.",
    );
  });

  it("a path without an extension lists every file tried", async () => {
    const error = await failure(loadPlugins(["../nope"], { from: join(dir, "sub"), shared }));
    const path = join(dir, "nope");
    expect(error.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(error.detail).toContain(
      `plug-in path "../nope" does not exist: resolved from ${join(dir, "sub")} to ${path}; tried ${path}, ${path}.ts, ${path}.mts, ${path}.js, ${path}.mjs.`,
    );
  });

  it("a directory without package.json, a file of another kind, a module that fails to load", async () => {
    mkdirSync(join(dir, "empty"));
    const empty = await failure(loadPlugins(["./empty"], { from: dir, shared }));
    expect(empty.detail).toBe(
      `plug-in path "./empty" (${dir}/empty) is a directory without package.json. Give a package directory or the plug-in's .ts or .js file.`,
    );
    write("plugin.json", "{}");
    const json = await failure(loadPlugins(["./plugin.json"], { from: dir, shared }));
    expect(json.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(json.detail).toContain("is not a .ts, .mts, .js or .mjs file");
    write("broken.ts", 'import { nothing } from "kb-no-such-module";\nexport default nothing;\n');
    const broken = await failure(loadPlugins(["./broken.ts"], { from: dir, shared }));
    expect(broken.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(broken.detail).toContain(`cannot import plug-in path "./broken.ts" (${dir}/broken.ts): `);
    expect(broken.detail).toContain("kb-no-such-module");
  });

  it("a file whose default export is not a plug-in is COMPONENT_INVALID_DEFINITION", async () => {
    write("none.ts", "export const x: number = 1;\n");
    const none = await failure(loadPlugins(["./none.ts"], { from: dir, shared }));
    expect(none.code).toBe("COMPONENT_INVALID_DEFINITION");
    expect(none.detail).toContain(`plug-in path "./none.ts" (${dir}/none.ts) has no default export.`);
  });
});

describe("checkTopologyComponents", () => {
  it("returns the topology, graph, plug-ins and registry without building a machine", async () => {
    write("plugins/big.js", BIG_GEMM_JS);
    const file = topology(["plugins: [./plugins/big.js]", ...OVERRIDE_GEMM("big:big_gemm")]);
    const checked = await checkTopologyComponents(file, { registryFor: defaultRegistry, shared });
    expect(checked.topology.name).toBe("t");
    expect(checked.graph.nodes.length).toBeGreaterThan(0);
    expect(checked.registry.hasPlugin("big")).toBe(true);
    expect(checked.registry.resolve(checked.graph.node("sip0.cube0.pe0.pe_gemm")).impl).toBe("big_gemm");
  });

  it("locates a plug-in impl's rejected params at the param", async () => {
    write("plugins/big.js", BIG_GEMM_JS);
    const file = topology([
      "plugins: [./plugins/big.js]",
      ...OVERRIDE_GEMM("big:big_gemm", "{ size: 0, sise: 2 }"),
    ]);
    const error = await failure(checkTopologyComponents(file, { registryFor: defaultRegistry, shared }));
    expect(error.code).toBe("COMPONENT_INVALID_PARAMS");
    expect(issuesOf(error)).toEqual([
      {
        file,
        line: 8,
        col: 21,
        path: "overrides[0].params.size",
        message:
          "value must be >= 1, got number 0 (impl big:big_gemm; 8 nodes, e.g. sip0.cube0.pe0.pe_gemm).",
      },
      {
        file,
        line: 8,
        col: 24,
        path: "overrides[0].params.sise",
        message:
          'unknown param "sise" of impl big:big_gemm (8 nodes, e.g. sip0.cube0.pe0.pe_gemm); did you mean "size"? Params of big:big_gemm: size.',
      },
    ]);
  });
});
