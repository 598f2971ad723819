import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BUILTIN_COMPONENTS } from "@kb/builtins";
import { type ComponentDefinition, defineComponent, definePlugin } from "@kb/components";
import { runProbe } from "@kb/probe";
import { loadTopologyGraphFile } from "@kb/topology/node";
import { afterAll, describe, expect, it } from "vitest";
import { formatProbe } from "./probe-command.js";
import { kb } from "./test-support.js";

const topologies = (name: string) => fileURLToPath(new URL(`../../../topologies/${name}`, import.meta.url));
const defaultYaml = topologies("default.yaml");

// default.yaml with each PE_DMA's XBAR port starved to 2 GB/s: a read of the local channel then
// takes 32768 / 2 ns, while the other cube is reached over the NOC and UCIe at full speed.
const scratch = mkdtempSync(join(tmpdir(), "kb-cli-probe-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const starvedYaml = join(scratch, "starved.yaml");
writeFileSync(
  starvedYaml,
  `${readFileSync(defaultYaml, "utf8").replace("name: default", "name: starved")}  links:\n    pe_dma_to_xbar: { bw_gbs: 2, length_mm: 2 }\n`,
);

describe("kb probe", () => {
  it("kb probe --help prints usage and exits 0", async () => {
    const run = await kb("probe", "--help");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: kb probe \[options\]/);
    for (const option of ["--topology <file|name>", "--json", "--plugin <package...>"]) {
      expect(run.stdout).toContain(option);
    }
  });

  it("prints the cases as an aligned table with hand-checked numbers, then every invariant, exit 0", async () => {
    const run = await kb("probe", "--topology", defaultYaml);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    const header = lines.find((line) => line.startsWith("  case "));
    expect(header).toMatch(/^ {2}case +route \(data direction\) +bytes +formula ns +measured ns +ratio$/);
    // docs/latency-model.md §7: 1.03 + 40 + 1281.03 = 1322.06 ns for 32 KiB from one PC.
    expect(run.stdout).toMatch(
      /\n {2}dma-read-local +ch0\.pc0 -> pe0, 3 hops +32768 +1322\.06 +1322\.06 +1\.0000\n/,
    );
    expect(run.stdout).toMatch(/\n {2}h2d +host -> ch0\.pc0, 5 hops +32768 +1391\.08 +1391\.08 +1\.0000\n/);
    expect(run.stdout).toMatch(/\n {2}d2h +ch0\.pc0 -> host, 5 hops +32768 +1462\.16 +1462\.16 +1\.0000\n/);
    // Aligned: every row of the case table ends its ratio in the header's last column.
    const rows = lines.filter((line) => /^ {2}(h2d|d2h|dma-)\S* +\S.* 32768 /.test(line));
    expect(rows).toHaveLength(11);
    for (const row of rows) expect(row.length).toBe((header as string).length);
    expect(run.stdout).toContain(
      "  dma-read-ucie     cube1.ch0.pc0 > cube1.ch0 > cube1.xbar0 > cube1.noc.r0c0 > cube1.ucie0 > ucie1 > noc.r0c0 > pe0.pe_dma\n",
    );
    expect(run.stdout).toMatch(/\n {4}1 +1322\.06 +1322\.06 +1322\.06 +1\.0000 +24\.79\n/);
    // pe_gemm_v1 (default.yaml): 4 x 4 x 128 + 8 = 2056 cycles at 1 GHz; 128^3 / (2056 x 32 x 32).
    expect(run.stdout).toMatch(/\n {2}gemm-tile +128x128x128 +2056 +2056\.00 +2056\.00 +1\.0000 +99\.6%\n/);
    const verdicts = lines.filter((line) => /^ {2}(PASS|FAIL|SKIP) /.test(line));
    expect(verdicts.map((line) => line.slice(2, 6))).toEqual([
      "PASS",
      "PASS",
      "PASS",
      "PASS",
      "PASS",
      "PASS",
    ]);
    expect(run.stdout).toContain(
      "  PASS  best-case placement (local) faster than worst-case (far): read: local 1322.06 ns < far 1334.17 ns; write: local 1321.03 ns < far 1327.09 ns\n",
    );
    expect(run.stdout).toContain(
      "  PASS  D2H >= H2D where the formulas say so: D2H measured 1462.16 ns >= H2D measured 1391.08 ns;",
    );
    expect(run.stdout.endsWith("PASS: 6 of 6 invariant(s) hold\n")).toBe(true);
  });

  // The reference topologies run hbm_ctrl_v2 (not analytic): the two invariants that compare
  // measured with the analytic formula are skipped, with the reason and the measured ratio.
  for (const name of ["ref-cube.yaml", "ref-4sip.yaml"]) {
    it(`exits 0 on topologies/${name}`, async () => {
      const run = await kb("probe", "--topology", topologies(name));
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        / {2}SKIP {2}uncontended measured within 1% of formula: not checked: \d+ of \d+ transfers: hbm_ctrl_v2 .* is not analytic/,
      );
      expect(run.stdout).toContain("PASS: 4 of 4 invariant(s) hold (2 skipped)\n");
    });
  }

  it("--json prints the report, byte for byte the same on every run", async () => {
    const first = await kb("probe", "--topology", defaultYaml, "--json");
    const second = await kb("probe", "--topology", defaultYaml, "--json");
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const report = JSON.parse(first.stdout);
    expect(Object.keys(report)).toEqual([
      "topology",
      "bytes",
      "requester",
      "cases",
      "sweep",
      "gemm",
      "invariants",
      "pass",
      "hbmPeak",
    ]);
    // default.yaml: 8 channels x 2 pseudo-channels x 25.6 GB/s, hbm_ctrl_v1's peak().
    expect(report.hbmPeak).toEqual({
      id: "sip0.cube0.hbm",
      impl: "hbm_ctrl_v1",
      ports: 16,
      bytesPerNs: 409.6,
    });
    expect(report.topology).toBe("default");
    expect(report.pass).toBe(true);
    const local = report.cases.find((entry: { name: string }) => entry.name === "dma-read-local");
    expect(local).toMatchObject({
      kind: "dma_read",
      placement: "local",
      requester: "sip0.cube0.pe0",
      memory: "sip0.cube0.hbm.ch0.pc0",
      route: ["sip0.cube0.hbm.ch0.pc0", "sip0.cube0.hbm.ch0", "sip0.cube0.xbar0", "sip0.cube0.pe0.pe_dma"],
      bytes: 32768,
      pcs: 1,
      // dispatch 1 + a TLB miss 50 + DMA setup 1, and the fill's PE_TCM write: 1 + 32768 / 512 = 65.
      fixedNs: 52 + 65,
      uncontended: true,
    });
    expect(local.formulaNs).toBeCloseTo(1322.06, 9);
    expect(report.sweep.map((point: { pes: number }) => point.pes)).toEqual([1, 2, 3, 5, 8]);
    expect(report.invariants.map((invariant: { id: string; status: string }) => invariant.status)).toEqual([
      "pass",
      "pass",
      "pass",
      "pass",
      "pass",
      "pass",
    ]);
  });

  it("without --topology, probes topologies/default.yaml", async () => {
    const run = await kb("probe", "--json");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).topology).toBe("default");
  });

  it("a topology where the local channel is slower than the far cube fails an invariant: exit 1", async () => {
    const run = await kb("probe", "--topology", starvedYaml);
    expect(run.code).toBe(1);
    // Read: 1.03 + 40 + 1.03 + 32768 / 2; write: 1.03 + 32768 / 2 + 40.
    expect(run.stdout).toMatch(
      /\n {2}dma-read-local +ch0\.pc0 -> pe0, 3 hops +32768 +16426\.06 +16426\.06 +1\.0000\n/,
    );
    expect(run.stdout).toContain(
      "  FAIL  best-case placement (local) faster than worst-case (far): read: local 16426.06 ns >= far 1334.17 ns; write: local 16425.03 ns >= far 1327.09 ns\n",
    );
    expect(run.stdout.endsWith("FAIL: 1 of 6 invariant(s) failed\n")).toBe(true);
    const json = await kb("probe", "--topology", starvedYaml, "--json");
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).pass).toBe(false);
  });

  it("a bad topology is exit 1 with the located problem", async () => {
    const bad = join(scratch, "bad.yaml");
    writeFileSync(bad, "name: bad\nsip:\n  cubes: zero\n");
    const run = await kb("probe", "--topology", bad);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/bad\.yaml:3:\d+: sip\.cubes: /);
  });

  it("a plug-in that is not installed is exit 1", async () => {
    const run = await kb("probe", "--topology", defaultYaml, "--plugin", "kb-plugin-nowhere");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('plug-in package "kb-plugin-nowhere" is not installed');
  });
});

describe("kb probe with impls that are not analytic", () => {
  // Plug-in copies of built-ins (no `analytic: true`): hbm_ctrl_v1 with twice its access latency,
  // and pe_gemm_v1 as it is.
  const builtin = (impl: string): ComponentDefinition => {
    const found = BUILTIN_COMPONENTS.find((definition) => definition.impl === impl);
    if (found === undefined) throw new Error(`no built-in ${impl}`);
    return found;
  };
  const hbm = builtin("hbm_ctrl_v1");
  const gemm = builtin("pe_gemm_v1");
  const plugin = definePlugin({
    meta: { name: "kb-plugin-cli-probe", version: "1.0.0" },
    components: [
      defineComponent({
        kind: hbm.kind,
        impl: "slow_hbm",
        description: "hbm_ctrl_v1 with twice its access latency.",
        params: hbm.params,
        create: (context, params) => {
          const values = params as { access_latency_ns: number };
          return hbm.create(context, { ...values, access_latency_ns: 2 * values.access_latency_ns });
        },
      }),
      defineComponent({
        kind: gemm.kind,
        impl: "plain_gemm",
        description: "pe_gemm_v1 as a plug-in.",
        params: gemm.params,
        create: gemm.create,
      }),
    ],
  });
  const pluginYaml = join(scratch, "plugin-impls.yaml");
  writeFileSync(
    pluginYaml,
    `${readFileSync(defaultYaml, "utf8")}overrides:\n  - { match: "sip*.cube*.hbm", impl: "kb-plugin-cli-probe:slow_hbm" }\n  - { match: "sip*.cube*.pe*.pe_gemm", impl: "kb-plugin-cli-probe:plain_gemm" }\n`,
  );

  it("prints what was not checked and why, and passes", () => {
    const report = runProbe(loadTopologyGraphFile(pluginYaml).graph, { plugins: [plugin] });
    expect(report.pass).toBe(true);
    const text = formatProbe(report, pluginYaml);
    // 80 ns of access instead of the formula's 40.
    expect(text).toMatch(
      /\n {2}dma-read-local +ch0\.pc0 -> pe0, 3 hops +32768 +1322\.06 +1362\.06 +1\.0303\n/,
    );
    expect(text).toContain(
      "\n  not analytic (their cases are held to measured >= formula, not to within 1%): kb-plugin-cli-probe:slow_hbm (sip0.cube0.hbm, sip0.cube1.hbm)\n",
    );
    expect(text).toContain(
      "\n  SKIP  uncontended measured within 1% of formula: not checked: 11 of 11 transfers: kb-plugin-cli-probe:slow_hbm (sip0.cube0.hbm, sip0.cube1.hbm) is not analytic; measured is 1.03x the formula\n",
    );
    expect(text).toMatch(
      /\n {2}PASS {2}a lone GEMM takes its PE_GEMM impl's own formula \(never less, within 1%\): 3 GEMMs on kb-plugin-cli-probe:plain_gemm: [^\n]*\n {8}not checked: within 1%: kb-plugin-cli-probe:plain_gemm \(sip0\.cube0\.pe0\.pe_gemm\) is not analytic; measured is 1\.00x the formula\n/,
    );
    expect(text.endsWith("PASS: 5 of 5 invariant(s) hold (1 skipped, 1 checked in part)\n")).toBe(true);
  });
});
