import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

const root = mkdtempSync(join(tmpdir(), "kb-topology-command-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let files = 0;
function topologyFile(text: string): string {
  const path = join(root, `t${files++}.yaml`);
  writeFileSync(path, text);
  return path;
}

describe("kb topology validate: the checks kb run makes", () => {
  it("a design beyond the device address fails at its place, before the graph is built", async () => {
    const file = topologyFile("name: big\nsip: { cubes: 1e6 }\n");
    expect(await kb("topology", "validate", file)).toEqual({
      code: 1,
      stdout: "",
      stderr: `${file}:2:15: sip.cubes: 1000000 cubes per SIP do not fit the device address: its cube field is 6 bits, so a SIP has at most 64 cubes. Set sip.cubes to 64 or fewer.\n`,
    });
  });

  it("a TCM too small for the scheduler's reserved TCM fails in validate as in run, with the same located message", async () => {
    const file = topologyFile(
      "name: small-tcm\npe_template:\n  components:\n    pe_tcm: { params: { capacity_bytes: 1048576 } }\n",
    );
    const validate = await kb("topology", "validate", file);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(
      new RegExp(
        `^${file.replace(/[.]/g, "\\.")}:4:41: pe_template\\.components\\.pe_tcm\\.params\\.capacity_bytes: the PE's TCM .* less than the scheduler's reserved TCM`,
      ),
    );
    const run = await kb("run", "vector-add", "--topology", file);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(validate.stderr.trim());
  });

  it("prints warnings as located `warning:` lines on stderr and still exits 0", async () => {
    const file = topologyFile(
      "name: odd\nsip:\n  cubes: 1\n  ucie: { pattern: ring, bw_gbs: 256 }\ncube:\n  hbm: { interleave_bytes: 96 }\n",
    );
    const run = await kb("topology", "validate", file);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^OK .*: odd: 1 SIP\(s\), 1 cube\(s\)/);
    expect(run.stderr.split("\n")).toEqual([
      `warning: ${file}:4:20: sip.ucie.pattern: pattern ring links cubes, but sip.cubes is 1, so no sip.ucie link is built. Remove sip.ucie, or raise sip.cubes.`,
      `warning: ${file}:6:28: cube.hbm.interleave_bytes: interleave_bytes 96 is not a multiple of flit_bytes 64, so some flits straddle two channels while the model commits whole flits on one pseudo-channel. Use a multiple of 64, such as 128.`,
      "",
    ]);
  });

  it("YAML mistakes are told in the file's terms: an unclosed quote where it opens, a second document by its line", async () => {
    const quote = topologyFile('name: "unclosed\nsip: { cubes: 2 }\n');
    expect((await kb("topology", "validate", quote)).stderr).toBe(
      `${quote}:1:7: <yaml>: unclosed " quote: the string that opens here runs to the end of the file. Close it with " (write \\" for a quote inside it).\n`,
    );
    const twoDocuments = topologyFile("name: a\n---\nname: b\n");
    expect((await kb("topology", "validate", twoDocuments)).stderr).toBe(
      `${twoDocuments}:2:1: <yaml>: topology files hold one YAML document; found a second at line 2. Remove this "---" and what follows it, or move the second topology to a file of its own.\n`,
    );
  });
});

describe("kb topology finds topologies by name, as kb run --topology does", () => {
  it("show, graph and validate take a shipped topology's name", async () => {
    const show = await kb("topology", "show", "ref-cube");
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("ref-cube");
    const graph = await kb("topology", "graph", "ref-cube", "--format", "mermaid");
    expect(graph.code).toBe(0);
    expect(graph.stdout).toMatch(/^flowchart/);
    const validate = await kb("topology", "validate", "default", "ref-cube");
    expect(validate).toMatchObject({ code: 0, stderr: "" });
    expect(validate.stdout).toMatch(/^OK default: .*\nOK ref-cube: ref-cube: /);
  });

  it("an unknown name says where it looked and the nearest name", async () => {
    const show = await kb("topology", "show", "ref-cub");
    expect(show.code).toBe(1);
    expect(show.stderr).toMatch(
      /^\[TOPOLOGY_NOT_FOUND\] no topology named "ref-cub" \(did you mean "ref-cube"\?\): /,
    );
  });
});
