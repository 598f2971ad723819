import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ImplInfo } from "./format-components.js";
import { kb } from "./test-support.js";

// A project with a plug-in installed: node_modules/kb-plugin-demo (plain ESM, importing zod, which
// is linked to the zod the CLI uses) and a topology that lists it.
const project = mkdtempSync(join(tmpdir(), "kb-cli-components-"));
afterAll(() => rmSync(project, { recursive: true, force: true }));
mkdirSync(join(project, "node_modules", "kb-plugin-demo"), { recursive: true });
symlinkSync(
  dirname(createRequire(import.meta.url).resolve("zod/package.json")),
  join(project, "node_modules", "zod"),
  "dir",
);
writeFileSync(
  join(project, "node_modules", "kb-plugin-demo", "package.json"),
  JSON.stringify({ name: "kb-plugin-demo", version: "2.0.0", type: "module", exports: "./index.js" }),
);
writeFileSync(
  join(project, "node_modules", "kb-plugin-demo", "index.js"),
  `import * as z from "zod";
export default {
  meta: { name: "kb-plugin-demo", version: "2.0.0" },
  components: [{
    kind: "pe_gemm",
    impl: "demo_gemm",
    description: "A demonstration GEMM timing model.",
    params: z.strictObject({
      lanes: z.number().int().min(1).describe("How many lanes."),
      mode: z.enum(["fast", "exact"]).default("exact").describe("Which formula."),
    }),
    create: () => { throw new Error("listing only"); },
  }],
};
`,
);
const topology = join(project, "topology.yaml");
writeFileSync(topology, "name: demo\nplugins:\n  - kb-plugin-demo\n");
const missing = join(project, "missing.yaml");
writeFileSync(missing, "name: demo\nplugins: [kb-plugin-demo, kb-plugin-nowhere]\n");

describe("kb components", () => {
  for (const path of [["components"], ["components", "list"]]) {
    it(`kb ${[...path, "--help"].join(" ")} prints usage and exits 0`, async () => {
      const run = await kb(...path, "--help");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: ${["kb", ...path].join(" ")} `));
      expect(run.stderr).toBe("");
    });
  }

  it("kb --help lists the components command", async () => {
    expect((await kb("--help")).stdout).toContain("components");
  });
});

describe("kb components list", () => {
  it("prints every built-in kind with its impls, descriptions and params", async () => {
    const run = await kb("components", "list");
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^17 built-in impl\(s\)\. /);
    expect(run.stdout).toContain(
      [
        "pe_gemm",
        "  pe_gemm_v1 (built-in)",
        "    GEMM engine: an output-stationary mac_rows x mac_cols MAC array; a tile",
      ].join("\n"),
    );
    expect(run.stdout).toContain(
      ["    freq_ghz         number > 0, default 1", "                     Clock, GHz."].join("\n"),
    );
    expect(run.stdout).toContain("  pe_gemm_v2 (built-in)\n");
    // Both HBM controllers, the analytic one and the bank-aware one, with their params.
    expect(run.stdout).toContain("  hbm_ctrl_v1 (built-in)");
    expect(run.stdout).toContain("  hbm_ctrl_v2 (built-in)");
    expect(run.stdout).toMatch(/hbm_ctrl_v2[\s\S]*page_policy/);
    expect(run.stdout).toContain('    dataflow         "os" | "ws" | "is", default "os"\n');
    expect(run.stdout).toContain("    fold_overlap     boolean, default false\n");
    // The transit impl serves four kinds: described once, referred to under the others.
    expect(run.stdout).toContain(
      "xbar\n  port_hop_v1 (built-in): described under bridge\n  transit_v1 (built-in): described under bridge\n",
    );
    for (const line of run.stdout.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
  });

  it("--json prints an array of impls with each param's type, default and description", async () => {
    const run = await kb("components", "list", "--json");
    expect(run.code).toBe(0);
    const impls = JSON.parse(run.stdout) as ImplInfo[];
    const kinds = new Set(impls.map((impl) => impl.kind));
    for (const kind of ["pe_cpu", "pe_gemm", "pe_math", "hbm_ctrl", "xbar", "noc_router", "io_cpu", "sram"]) {
      expect(kinds.has(kind)).toBe(true);
    }
    const gemm = impls.find((impl) => impl.impl === "pe_gemm_v1");
    expect(gemm).toMatchObject({ kind: "pe_gemm", source: "built-in" });
    expect(gemm?.params.map((param) => param.name)).toEqual([
      "freq_ghz",
      "mac_rows",
      "mac_cols",
      "overhead_cycles",
      "dtype_cycles",
      "queue_depth",
    ]);
    expect(gemm?.params[0]).toMatchObject({
      name: "freq_ghz",
      type: "number > 0",
      required: false,
      default: 1,
      description: "Clock, GHz.",
    });
    expect(gemm?.params[4]).toMatchObject({
      type: "record<string, number > 0>",
      default: { f16: 1, bf16: 1, f32: 4, i8: 0.5, i32: 4, f8e4m3: 0.5, f8e5m2: 0.5, f4e2m1: 0.5 },
    });
  });

  it("--topology adds the plug-ins it lists (resolved beside it); --plugin of the same one is merged", async () => {
    const run = await kb(
      "components",
      "list",
      "--topology",
      topology,
      "--plugin",
      "kb-plugin-demo",
      "--json",
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const demo = (JSON.parse(run.stdout) as ImplInfo[]).filter((impl) => impl.source === "kb-plugin-demo");
    expect(demo).toEqual([
      {
        kind: "pe_gemm",
        impl: "kb-plugin-demo:demo_gemm",
        source: "kb-plugin-demo",
        description: "A demonstration GEMM timing model.",
        params: [
          {
            name: "lanes",
            type: "integer >= 1",
            required: true,
            description: "How many lanes.",
            schema: expect.objectContaining({ type: "integer", minimum: 1 }),
          },
          {
            name: "mode",
            type: '"fast" | "exact"',
            required: false,
            default: "exact",
            description: "Which formula.",
            schema: expect.objectContaining({ enum: ["fast", "exact"] }),
          },
        ],
        // It states no energy table: it is charged with the built-in PE_GEMM's.
        energy: expect.objectContaining({ ofKind: true, node: { process_nm: 45, vdd_v: 0.9 } }),
      },
    ]);
    const human = await kb("components", "list", "--topology", topology);
    expect(human.stdout).toMatch(/^17 built-in impl\(s\); plug-ins: kb-plugin-demo\. /);
    expect(human.stdout).toContain(
      [
        "  kb-plugin-demo:demo_gemm (kb-plugin-demo)",
        "    A demonstration GEMM timing model.",
        "    lanes  integer >= 1, required",
        "           How many lanes.",
        '    mode   "fast" | "exact", default "exact"',
        "           Which formula.",
      ].join("\n"),
    );
  });

  it("shows each impl's energy table with its units, values, measures and sources", async () => {
    const run = await kb("components", "list");
    expect(run.stdout).toMatch(
      /hbm_ctrl_v2 \(built-in\)[\s\S]*?energy \(defaults for the default params; not scaled; override under\s+energy\.costs\.hbm_ctrl or \.hbm_ctrl_v2; docs\/energy\.md\):\n\s+act_pj = 711\.6 pJ per act: One ACT: VDD \(IDD0 - IDD3N\) tRAS\./,
    );
    expect(run.stdout).toMatch(/background_mw = 528 mW over time_ns: Standby of every pseudo-channel/);
    expect(run.stdout).toMatch(/stated at 45 nm, 0\.9 V, scaled to\s+the topology/);
    expect(run.stdout).toMatch(/mac_f16_pj = 1\.5 pJ per macs\.f16: One f16 MAC\. \(Horowitz/);
    expect(run.stdout).toMatch(/hop_pj_per_bit = 0\.3 pJ\/bit of bytes/);
    const json = JSON.parse((await kb("components", "list", "--json")).stdout) as ImplInfo[];
    const v2 = json.find((impl) => impl.impl === "hbm_ctrl_v2");
    expect(v2?.energy?.costs.map((cost) => `${cost.name} ${cost.unit} ${cost.per}`)).toEqual([
      "act_pj pJ act",
      "pre_pj pJ pre",
      "rd_pj pJ rd",
      "wr_pj pJ wr",
      "ref_pj pJ ref",
      "background_mw mW time_ns",
      "active_pj pJ active_ns",
      "io_pj_per_bit pJ/bit bytes",
    ]);
    // Every built-in impl has a table, each cost with a source.
    for (const impl of json) {
      expect(impl.energy?.costs.length, impl.impl).toBeGreaterThan(0);
      for (const cost of impl.energy?.costs ?? []) expect(cost.source).not.toBe("");
    }
  });

  it("a plug-in that is not installed is a user error saying what to install", async () => {
    const run = await kb("components", "list", "--plugin", "kb-plugin-nowhere");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(
      /^\[COMPONENT_PLUGIN_NOT_FOUND\] plug-in package "kb-plugin-nowhere" is not installed/,
    );
    expect(run.stderr).toContain("npm install kb-plugin-nowhere");
  });

  it("a topology's plug-in that is not installed is reported at its plugins: entry", async () => {
    const run = await kb("components", "list", "--topology", missing);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `^\\[COMPONENT_PLUGIN_NOT_FOUND\\] ${missing.replace(/[.]/g, "\\.")}:2:27: plug-in package "kb-plugin-nowhere"`,
      ),
    );
  });
});
