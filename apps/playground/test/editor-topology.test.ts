import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultRegistry } from "@kb/builtins";
import { checkTopologyComponents } from "@kb/components/node";
import { formatIssue, type LocatedIssue } from "@kb/topology";
import { afterAll, describe, expect, it } from "vitest";
import { topologyDiagnostics } from "../src/editor/topology-check.js";

// The topology editor's markers: at the line:col `kb topology validate` reports, with its words.

const dir = mkdtempSync(join(tmpdir(), "kb-playground-topology-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The lines `kb topology validate FILE` prints for `text` (what it runs: checkTopologyComponents). */
async function cliLines(text: string, name: string): Promise<string[]> {
  const file = join(dir, name);
  writeFileSync(file, text);
  try {
    const { warnings } = await checkTopologyComponents(file, { registryFor: defaultRegistry });
    return warnings.map((warning) => `warning: ${formatIssue(warning)}`);
  } catch (error) {
    return ((error as { issues: LocatedIssue[] }).issues ?? []).map(formatIssue);
  }
}

/** The editor's markers as the CLI's lines, with the marked text. */
function editorLines(text: string, name: string): { line: string; marked: string }[] {
  return topologyDiagnostics(text, name).map((found) => ({
    line: `${found.severity === "warning" ? "warning: " : ""}${formatIssue({ ...found.issue, file: join(dir, name) })}`,
    marked: text.slice(found.from, found.to),
  }));
}

const MISSPELT = `name: small
sip:
  cubes: 2
cube:
  hbm:
    chanels: 8
`;

const NO_SUCH_PE = `name: small
sip:
  cubes: 1
cube:
  noc: { rows: 2, cols: 2 }
overrides:
  - match: sip0.cube0.pe4.pe_gemm
    params: { macs_per_cycle: 512 }
`;

describe("topologyDiagnostics", () => {
  it("marks an unknown key at its line:col with the CLI's message and suggestion", async () => {
    const found = topologyDiagnostics(MISSPELT, "small.yaml");
    expect(found).toHaveLength(1);
    expect(found[0]?.issue).toMatchObject({ file: "small.yaml", line: 6, col: 5, path: "cube.hbm.chanels" });
    expect(found[0]?.severity).toBe("error");
    expect(found[0]?.message).toMatch(
      /^cube\.hbm\.chanels: unknown key "chanels"; did you mean "channels"\?/,
    );
    // 6:5 is offset 45: five lines of 12, 5, 11, 6 and 7 characters (newlines included), then 4 spaces.
    expect(found[0]?.from).toBe(45);
    expect(MISSPELT.slice(found[0]?.from, found[0]?.to)).toBe("chanels");
    expect(editorLines(MISSPELT, "misspelt.yaml").map((e) => e.line)).toEqual(
      await cliLines(MISSPELT, "misspelt.yaml"),
    );
  });

  it("marks an override that matches no node at its match:, as the CLI does", async () => {
    const found = editorLines(NO_SUCH_PE, "no-such-pe.yaml");
    expect(found).toEqual([
      {
        line: expect.stringMatching(
          /:7:12: overrides\[0\]\.match: "sip0\.cube0\.pe4\.pe_gemm" matches no node; did you mean "sip0\.cube0\.pe\d\.pe_gemm"\?$/,
        ),
        marked: "sip0.cube0.pe4.pe_gemm",
      },
    ]);
    expect(found.map((e) => e.line)).toEqual(await cliLines(NO_SUCH_PE, "no-such-pe.yaml"));
  });

  it("marks an override that changes the HBM organisation at its param, as the CLI does", async () => {
    const text = "name: g\noverrides:\n  - match: sip0.cube0.hbm\n    params: { channels: 16 }\n";
    const found = editorLines(text, "geometry.yaml");
    expect(found).toEqual([
      {
        line: expect.stringMatching(
          /:4:25: overrides\[0\]\.params\.channels: 16 would change the HBM organisation of node sip0\.cube0\.hbm for its model only: .* Set cube\.hbm\.channels instead/,
        ),
        marked: "16",
      },
    ]);
    expect(found.map((e) => e.line)).toEqual(await cliLines(text, "geometry.yaml"));
  });

  it("marks a YAML syntax error (a duplicate key) as the CLI does", async () => {
    const text = "name: a\nname: b\n";
    const found = topologyDiagnostics(text, "dup.yaml");
    expect(found.map((d) => [d.issue.line, d.issue.col, d.severity])).toEqual([[2, 1, "error"]]);
    expect(editorLines(text, "dup.yaml").map((e) => e.line)).toEqual(await cliLines(text, "dup.yaml"));
  });

  it("gives the CLI's warnings as warning markers (a SIP link with one SIP)", async () => {
    const text = "name: w\nsystem:\n  sips: 1\n  sip_link: { pattern: ring, bw_gbs: 100 }\n";
    const found = topologyDiagnostics(text, "w.yaml");
    expect(found.map((d) => d.severity)).toEqual(["warning"]);
    expect(found[0]?.message).toMatch(
      /^system\.sip_link\.pattern: pattern ring links SIPs, but system\.sips is 1/,
    );
    expect(editorLines(text, "w.yaml").map((e) => e.line)).toEqual(await cliLines(text, "w.yaml"));
  });

  it("finds nothing in the reference topologies", () => {
    for (const name of ["default.yaml", "ref-cube.yaml", "ref-4sip.yaml"]) {
      const text = readFileSync(new URL(`../../../topologies/${name}`, import.meta.url), "utf8");
      expect(topologyDiagnostics(text, name)).toEqual([]);
    }
  });
});
