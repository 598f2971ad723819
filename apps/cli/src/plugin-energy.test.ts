import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunResults } from "@kb/runtime";
import { afterAll, describe, expect, it } from "vitest";
import type { ImplInfo } from "./format-components.js";
import { kb } from "./test-support.js";

// The example plug-in kb-plugin-systolic-gemm states its own energy table (examples/, its README):
// kb components list shows it with units, and kb run charges its PE_GEMMs with it.

const example = fileURLToPath(new URL("../../../examples/kb-plugin-systolic-gemm", import.meta.url));
const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "kb-cli-plugin-energy-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// default.yaml's node: 7 nm, 0.75 V; the table is stated at 45 nm, 0.9 V.
const SCALE = (7 / 45) * (0.75 / 0.9) ** 2;

describe("a plug-in with its own energy table (kb-plugin-systolic-gemm)", () => {
  it("kb components list --plugin shows its costs with units, values and sources, not the kind's table", async () => {
    const run = await kb("components", "list", "--plugin", example, "--json");
    expect(run.stderr).toBe("");
    const impl = (JSON.parse(run.stdout) as ImplInfo[]).find(
      (entry) => entry.impl === "kb-plugin-systolic-gemm:systolic_gemm",
    );
    expect(impl?.energy?.ofKind).toBeUndefined();
    expect(impl?.energy?.node).toEqual({ process_nm: 45, vdd_v: 0.9 });
    expect(impl?.energy?.costs.map((cost) => [cost.name, cost.unit, cost.per, cost.value])).toEqual([
      ["mac_pj", "pJ", "macs", 1.5],
      ["array_busy_mw", "mW", "busy_ns", 1.024],
      ["static_mw", "mW", "time_ns", 0.512],
    ]);
    const human = await kb("components", "list", "--plugin", example);
    expect(human.stdout).toMatch(/mac_pj = 1\.5 pJ per macs: One MAC, any dtype/);
  });

  it("kb run charges the plug-in's PE_GEMMs with its table: MACs x 1.5 pJ, scaled to the topology's node", async () => {
    const topology = join(scratch, "systolic.yaml");
    writeFileSync(
      topology,
      [
        readFileSync(defaultYaml, "utf8"),
        `plugins: [${JSON.stringify(example)}]`,
        "overrides:",
        '  - match: "sip*.cube*.pe*.pe_gemm"',
        "    impl: kb-plugin-systolic-gemm:systolic_gemm",
        "    params: { rows: 16, cols: 16 }",
        "",
      ].join("\n"),
    );
    const run = await kb(
      "run",
      "gemm",
      "--topology",
      topology,
      "--param",
      "M=64",
      "--param",
      "N=64",
      "--param",
      "K=64",
      "--json",
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const results = JSON.parse(run.stdout) as RunResults;
    const gemms = results.components.filter((component) => component.kind === "pe_gemm");
    const sum = (name: string) =>
      gemms.reduce((total, component) => total + (component.energy?.byCost[name] ?? 0), 0);
    // 64^3 = 262,144 MACs x 1.5 pJ x 0.10802 = 42,477 pJ.
    expect(sum("mac_pj")).toBeCloseTo(64 ** 3 * 1.5 * SCALE * 1e-12, 15);
    expect(sum("mac_f16_pj")).toBe(0);
    // Leakage of a 16 x 16 array: 0.0005 mW x 256 = 0.128 mW (x the scale) per PE_GEMM over the run.
    const staticJ = gemms.length * 0.128 * SCALE * results.simTimeNs * 1e-12;
    expect(sum("static_mw")).toBeCloseTo(staticJ, 15);
    expect(results.energy?.byKind.pe_gemm?.totalJ).toBeCloseTo(
      sum("mac_pj") + sum("array_busy_mw") + sum("static_mw"),
      18,
    );
  });
});
