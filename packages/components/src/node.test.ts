import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultRegistry } from "@kb/builtins";
import { isKbError, type KbError } from "@kb/errors";
import { encodeAddress, formatIssue, type LocatedIssue } from "@kb/topology";
import { afterAll, describe, expect, it } from "vitest";
import { buildMachineFromFile, checkTopologyComponents, loadPlugins } from "./node.js";
import { topologyPath } from "./test-support.js";

const root = mkdtempSync(join(tmpdir(), "kb-components-node-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let files = 0;
/** Writes `lines` as a topology file in its own directory under the temp root; returns its path. */
function topologyFile(lines: readonly string[], directory = join(root, `t${files++}`)): string {
  mkdirSync(directory, { recursive: true });
  const file = join(directory, "topology.yaml");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

// One cube of 8 PEs: a template problem hits 8 nodes.
const HEADER = ["name: t", "sip:", "  cubes: 1"];

/** Writes a package into `<directory>/node_modules/<name>`. */
function writePackage(
  directory: string,
  name: string,
  packageJson: object,
  files: Record<string, string>,
): void {
  const dir = join(directory, "node_modules", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name, version: "1.0.0", type: "module", ...packageJson }),
  );
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

// A plug-in shaped like definePlugin's result, without imports (it lives outside the workspace).
const fakePlugin = (name: string) => `
const params = { safeParse: (value) => ({ success: true, data: value }) };
export default {
  meta: { name: ${JSON.stringify(name)}, version: "1.0.0" },
  components: [
    { kind: "pe_gemm", impl: "fast_gemm", description: "A fake GEMM.", params, create: () => { throw new Error("not for running"); } },
  ],
};
`;

const packages = join(root, "project");
writePackage(
  packages,
  "kb-plugin-fake",
  {
    exports: {
      ".": { types: "./dist/index.d.ts", import: "./dist/index.js" },
      "./package.json": "./package.json",
    },
  },
  { "dist/index.js": fakePlugin("kb-plugin-fake") },
);
writePackage(
  packages,
  "@acme/kb-plugin-main",
  { main: "lib/main.js" },
  { "lib/main.js": fakePlugin("@acme/kb-plugin-main") },
);
writePackage(
  packages,
  "kb-plugin-misnamed",
  { exports: "./index.js" },
  { "index.js": fakePlugin("kb-plugin-other") },
);
writePackage(packages, "kb-plugin-unbuilt", { exports: { import: "./dist/index.js" } }, {});
writePackage(packages, "kb-plugin-broken", { exports: "./index.js" }, { "index.js": "export default {;\n" });
writePackage(
  packages,
  "kb-plugin-no-default",
  { exports: "./index.js" },
  { "index.js": "export const x = 1;\n" },
);

async function failure(promise: Promise<unknown>): Promise<KbError> {
  try {
    await promise;
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}

function issuesOf(error: KbError): readonly LocatedIssue[] {
  return (error as unknown as { issues: readonly LocatedIssue[] }).issues;
}

describe("loadPlugins", () => {
  it("resolves packages from node_modules of the directory or a parent, by exports or main", async () => {
    const nested = join(packages, "benches", "deep");
    mkdirSync(nested, { recursive: true });
    const plugins = await loadPlugins(["kb-plugin-fake", "@acme/kb-plugin-main", "kb-plugin-fake"], {
      from: nested,
    });
    expect(plugins.map((plugin) => plugin.meta.name)).toEqual(["kb-plugin-fake", "@acme/kb-plugin-main"]);
    expect(plugins[0]?.components[0]?.impl).toBe("fast_gemm");
  });

  it("searches several directories in order", async () => {
    const plugins = await loadPlugins(["kb-plugin-fake"], { from: [join(root, "elsewhere"), packages] });
    expect(plugins).toHaveLength(1);
  });

  it("an unknown package is COMPONENT_PLUGIN_NOT_FOUND naming the search and the install command", async () => {
    const error = await failure(loadPlugins(["kb-plugin-nowhere"], { from: packages }));
    expect(error.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(error.message).toContain(
      `plug-in package "kb-plugin-nowhere" is not installed: no node_modules/kb-plugin-nowhere in ${packages} or any parent directory.`,
    );
    expect(error.message).toContain("npm install kb-plugin-nowhere");
  });

  it("an impl name in place of a package says where each goes", async () => {
    const error = await failure(loadPlugins(["kb-plugin-fake:fast_gemm"], { from: packages }));
    expect(error.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(error.message).toContain(
      'plugins: lists packages; write "kb-plugin-fake" there and "kb-plugin-fake:fast_gemm" in an impl:.',
    );
  });

  it("a missing entry file or a module that fails to import is COMPONENT_PLUGIN_NOT_FOUND with the cause", async () => {
    const unbuilt = await failure(loadPlugins(["kb-plugin-unbuilt"], { from: packages }));
    expect(unbuilt.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(unbuilt.message).toMatch(
      /cannot import plug-in package "kb-plugin-unbuilt" .*dist\/index\.js does not exist/,
    );
    const broken = await failure(loadPlugins(["kb-plugin-broken"], { from: packages }));
    expect(broken.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(broken.message).toContain('cannot import plug-in package "kb-plugin-broken"');
    expect(broken.cause).toBeInstanceOf(Error);
  });

  it("a default export that is not a plug-in, or named after another package, is COMPONENT_INVALID_DEFINITION", async () => {
    const none = await failure(loadPlugins(["kb-plugin-no-default"], { from: packages }));
    expect(none.code).toBe("COMPONENT_INVALID_DEFINITION");
    expect(none.message).toContain("has no default export");
    const misnamed = await failure(loadPlugins(["kb-plugin-misnamed"], { from: packages }));
    expect(misnamed.code).toBe("COMPONENT_INVALID_DEFINITION");
    expect(misnamed.message).toContain(
      'calls itself "kb-plugin-other"; meta.name must be the package name "kb-plugin-misnamed"',
    );
  });
});

describe("buildMachineFromFile", () => {
  it("builds a machine that runs", async () => {
    const { topology, graph, machine } = await buildMachineFromFile(topologyPath("default"), {
      registryFor: defaultRegistry,
    });
    expect(topology.name).toBe("default");
    expect(graph.nodes.length).toBe(229);
    const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
    const done = machine.submit("sip0.cube0.pe0", [
      {
        kind: "composite_gemm",
        a: hbm(0),
        b: hbm(1 << 20),
        c: hbm(2 << 20),
        m: 128,
        n: 128,
        k: 128,
        dtype: "f16",
      },
    ]);
    machine.run(done);
    expect(machine.env.now).toBeGreaterThan(0);
  });

  it("an unknown impl set by an override is located at that override's impl, listing the impls of the kind", async () => {
    const file = topologyFile([
      ...HEADER,
      "overrides:",
      '  - match: "sip*.cube*.pe*.pe_gemm"',
      "    impl: pe_gemm_v9",
      "  - match: sip0.cube0.pe3.pe_gemm",
      "    impl: pe_gemm_v1",
    ]);
    const error = await failure(buildMachineFromFile(file, { registryFor: defaultRegistry }));
    expect(error.code).toBe("COMPONENT_UNKNOWN_IMPL");
    // The later override restores pe3: 7 of the 8 PEs fail, reported once.
    expect(issuesOf(error)).toEqual([
      {
        file,
        line: 6,
        col: 11,
        path: "overrides[0].impl",
        message:
          'unknown impl "pe_gemm_v9" for kind pe_gemm (7 nodes, e.g. sip0.cube0.pe0.pe_gemm); impls registered for kind pe_gemm: pe_gemm_v1 (built-in), pe_gemm_v2 (built-in). Check the spelling, or load the plug-in that provides it.',
      },
    ]);
    expect(error.message).toContain(`${file}:6:11: overrides[0].impl: unknown impl "pe_gemm_v9"`);
  });

  it("an unknown impl in a template is located at the template, per template", async () => {
    const file = topologyFile([
      ...HEADER,
      "cube:",
      "  xbar: { impl: transit_v2 }",
      "pe_template:",
      "  components:",
      "    pe_math:",
      "      impl: pe_math_v0",
    ]);
    const error = await failure(buildMachineFromFile(file, { registryFor: defaultRegistry }));
    expect(
      issuesOf(error).map((issue) => `${issue.line}:${issue.col} ${issue.path} ${issue.message}`),
    ).toEqual([
      expect.stringMatching(
        /^5:17 cube\.xbar\.impl unknown impl "transit_v2" for kind xbar \(2 nodes, e\.g\. sip0\.cube0\.xbar0\); impls registered for kind xbar: port_hop_v1 \(built-in\), transit_v1 \(built-in\)/,
      ),
      expect.stringMatching(
        /^9:13 pe_template\.components\.pe_math\.impl unknown impl "pe_math_v0" for kind pe_math \(8 nodes, e\.g\. sip0\.cube0\.pe0\.pe_math\); /,
      ),
    ]);
  });

  it("a qualified impl whose plug-in is not listed says to add it to plugins:", async () => {
    const file = topologyFile([
      ...HEADER,
      "overrides:",
      "  - match: sip0.cube0.pe0.pe_gemm",
      "    impl: kb-plugin-fake:fast_gemm",
    ]);
    const error = await failure(buildMachineFromFile(file, { registryFor: defaultRegistry }));
    expect(error.code).toBe("COMPONENT_UNKNOWN_IMPL");
    const [issue] = issuesOf(error);
    expect(issue).toMatchObject({ line: 6, col: 11, path: "overrides[0].impl" });
    expect(issue?.message).toContain(
      'unknown impl "kb-plugin-fake:fast_gemm" for kind pe_gemm (node sip0.cube0.pe0.pe_gemm)',
    );
    expect(issue?.message).toContain(
      'plug-in kb-plugin-fake is not loaded: add it to the topology\'s plugins: list (or pass --plugin), as the package name "kb-plugin-fake" or the path of its folder or file (./kb-plugin-fake, ./kb-plugin-fake.ts).',
    );
  });

  it("lists the impls of loaded plug-ins (found beside the topology) among those available", async () => {
    const file = topologyFile(
      [
        ...HEADER,
        "plugins: [kb-plugin-fake]",
        "overrides:",
        "  - match: sip0.cube0.pe0.pe_gemm",
        "    impl: kb-plugin-fake:slow_gemm",
      ],
      join(packages, "topologies"),
    );
    const error = await failure(buildMachineFromFile(file, { registryFor: defaultRegistry }));
    expect(issuesOf(error)[0]?.message).toContain(
      "impls registered for kind pe_gemm: kb-plugin-fake:fast_gemm (kb-plugin-fake), pe_gemm_v1 (built-in), pe_gemm_v2 (built-in).",
    );
  });

  it("a plug-in listed in the file but not installed is located at its plugins: entry", async () => {
    const file = topologyFile(
      [...HEADER, "plugins:", "  - kb-plugin-fake", "  - kb-plugin-nowhere"],
      join(packages, "missing"),
    );
    const error = await failure(
      buildMachineFromFile(file, { registryFor: defaultRegistry, plugins: ["kb-plugin-fake"] }),
    );
    expect(error.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(error.context).toEqual({ file, line: 6, col: 5 });
    expect(error.message).toContain(`${file}:6:5: plug-in package "kb-plugin-nowhere" is not installed`);
  });

  it("--plugin packages that are not installed are reported without a file position", async () => {
    const file = topologyFile(HEADER);
    const error = await failure(
      buildMachineFromFile(file, { registryFor: defaultRegistry, plugins: ["kb-plugin-nowhere"] }),
    );
    expect(error.code).toBe("COMPONENT_PLUGIN_NOT_FOUND");
    expect(error.context).toEqual({});
  });

  it("a param of the wrong type in a template is located at its value, an unknown one at its key, once for every PE", async () => {
    const file = topologyFile([
      ...HEADER,
      "pe_template:",
      "  components:",
      "    pe_gemm:",
      "      params:",
      "        freq_ghz: fast",
      "        mac_rows: 32",
      "        mac_colz: 32",
    ]);
    const error = await failure(buildMachineFromFile(file, { registryFor: defaultRegistry }));
    expect(error.code).toBe("COMPONENT_INVALID_PARAMS");
    expect(issuesOf(error)).toEqual([
      {
        file,
        line: 8,
        col: 19,
        path: "pe_template.components.pe_gemm.params.freq_ghz",
        message:
          'expected a number, got the string "fast" (impl pe_gemm_v1; 8 nodes, e.g. sip0.cube0.pe0.pe_gemm).',
      },
      {
        file,
        line: 10,
        col: 9,
        path: "pe_template.components.pe_gemm.params.mac_colz",
        message:
          'unknown param "mac_colz" of impl pe_gemm_v1 (8 nodes, e.g. sip0.cube0.pe0.pe_gemm); did you mean "mac_cols"? Params of pe_gemm_v1: dtype_cycles, freq_ghz, mac_cols, mac_rows, overhead_cycles, queue_depth.',
      },
    ]);
  });

  it("a param set by an override is located there; unknown params at their key, with a suggestion", async () => {
    const file = topologyFile([
      ...HEADER,
      "cube:",
      "  hbm:",
      "    params: { queue_depth: 0 }",
      "overrides:",
      "  - match: sip0.cube0.pe*.pe_dma",
      "    params: { setup_ns: -1 }",
      "  - match: sip0.cube0.pe2.pe_dma",
      "    params:",
      "      setup_ns: 5",
      "      setupns: 5",
    ]);
    const error = await failure(buildMachineFromFile(file, { registryFor: defaultRegistry }));
    expect(error.code).toBe("COMPONENT_INVALID_PARAMS");
    expect(
      issuesOf(error).map((issue) => `${issue.line}:${issue.col} ${issue.path}: ${issue.message}`),
    ).toEqual([
      "6:28 cube.hbm.params.queue_depth: value must be >= 1, got number 0 (impl hbm_ctrl_v1; node sip0.cube0.hbm).",
      "9:25 overrides[0].params.setup_ns: value must be >= 0, got number -1 (impl pe_dma_v1; 7 nodes, e.g. sip0.cube0.pe0.pe_dma).",
      '13:7 overrides[1].params.setupns: unknown param "setupns" of impl pe_dma_v1 (node sip0.cube0.pe2.pe_dma); did you mean "setup_ns"? Params of pe_dma_v1: atomic_alu_ns, queue_depth, setup_ns.',
    ]);
  });
});

describe("checkTopologyComponents", () => {
  it("the registry comes from the caller: without registryFor, a KbError naming @kb/builtins' defaultRegistry", async () => {
    const file = topologyPath("default");
    for (const check of [
      () => checkTopologyComponents(file, {} as never),
      () => buildMachineFromFile(file, {} as never),
    ]) {
      const error = await failure(check());
      expect(isKbError(error, "COMPONENT_UNKNOWN_IMPL")).toBe(true);
      expect(error.message).toContain("needs options.registryFor");
      expect(error.message).toContain("{ registryFor: defaultRegistry }");
      expect(error.context.file).toBe(file);
    }
  });

  it("a TCM that cannot hold the scheduler's reserved TCM and the IPCQ slots is located at the param the file sets", async () => {
    const file = topologyFile([
      ...HEADER,
      "pe_template:",
      "  components:",
      "    pe_tcm:",
      "      params: { capacity_bytes: 1048576 }",
    ]);
    const error = await failure(checkTopologyComponents(file, { registryFor: defaultRegistry }));
    expect(error.code).toBe("COMPONENT_INVALID_PARAMS");
    expect(issuesOf(error).map(formatIssue)).toEqual([
      `${file}:7:33: pe_template.components.pe_tcm.params.capacity_bytes: the PE's TCM (pe_tcm capacity_bytes 1048576) minus its IPCQ slots (524288: pe_cpu ipcq_slots x ipcq_slot_bytes per direction) leaves 524288 bytes, less than the scheduler's reserved TCM (pe_scheduler reserved_tcm_bytes 1048576) (8 nodes, e.g. sip0.cube0.pe0). Raise pe_tcm capacity_bytes to at least 1572864, or lower reserved_tcm_bytes to at most 524288 (or use fewer or smaller IPCQ slots).`,
    ]);
  });

  it("a reserved TCM raised by an override is located at the override; a TCM beyond its address window at capacity_bytes", async () => {
    const reserved = topologyFile([
      ...HEADER,
      "overrides:",
      "  - match: sip0.cube0.pe3.pe_scheduler",
      "    params: { reserved_tcm_bytes: 8388608 }",
    ]);
    const first = issuesOf(
      await failure(checkTopologyComponents(reserved, { registryFor: defaultRegistry })),
    );
    expect(first.map((issue) => `${issue.line}:${issue.col} ${issue.path}`)).toEqual([
      "6:35 overrides[0].params.reserved_tcm_bytes",
    ]);
    expect(first[0]?.message).toContain("(node sip0.cube0.pe3)");
    const window = topologyFile([
      ...HEADER,
      "pe_template:",
      "  components:",
      "    pe_tcm: { params: { capacity_bytes: 536870912 } }",
    ]);
    expect(
      issuesOf(await failure(checkTopologyComponents(window, { registryFor: defaultRegistry })))[0]?.message,
    ).toMatch(
      /^pe_tcm capacity_bytes 536870912 is more than a PE's TCM window in the device address \(268435456 bytes, 256 MiB\) \(8 nodes, e\.g\. sip0\.cube0\.pe0\)\. Set it to 268435456 or less\.$/,
    );
  });

  it("returns the topology's warnings, located", async () => {
    const file = topologyFile([...HEADER, "  ucie: { pattern: all_to_all, bw_gbs: 256 }"]);
    const { warnings } = await checkTopologyComponents(file, { registryFor: defaultRegistry });
    expect(warnings.map(formatIssue)).toEqual([
      `${file}:4:20: sip.ucie.pattern: pattern all_to_all links cubes, but sip.cubes is 1, so no sip.ucie link is built. Remove sip.ucie, or raise sip.cubes.`,
    ]);
  });
});
