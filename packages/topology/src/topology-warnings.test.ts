import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatIssue } from "./index.js";
import { loadTopologyGraphFile } from "./node.js";

const topologiesDir = new URL("../../../topologies/", import.meta.url);

/** The located warnings of a topology text, with the temporary path shown as `t.yaml`. */
function warningsOf(text: string): string[] {
  const path = join(mkdtempSync(join(tmpdir(), "kb-warnings-")), "t.yaml");
  writeFileSync(path, text);
  return loadTopologyGraphFile(path).warnings.map((warning) => formatIssue(warning).replace(path, "t.yaml"));
}

describe("topology warnings", () => {
  it("the reference topologies have none", () => {
    for (const name of ["default.yaml", "ref-cube.yaml", "ref-4sip.yaml"]) {
      expect(loadTopologyGraphFile(new URL(name, topologiesDir).pathname).warnings, name).toEqual([]);
    }
  });

  it("a UCIe pattern written for a SIP of one cube: no link is built", () => {
    expect(warningsOf("name: t\nsip:\n  cubes: 1\n  ucie: { pattern: ring, bw_gbs: 256 }\n")).toEqual([
      "t.yaml:4:20: sip.ucie.pattern: pattern ring links cubes, but sip.cubes is 1, so no sip.ucie link is built. Remove sip.ucie, or raise sip.cubes.",
    ]);
    // The default pattern is no choice of the user's: one cube without sip.ucie is fine.
    expect(warningsOf("name: t\nsip: { cubes: 1 }\n")).toEqual([]);
  });

  it("an HBM interleave that is not a multiple of the flit", () => {
    expect(warningsOf("name: t\ncube:\n  hbm: { interleave_bytes: 100, flit_bytes: 64 }\n")).toEqual([
      "t.yaml:3:28: cube.hbm.interleave_bytes: interleave_bytes 100 is not a multiple of flit_bytes 64, so some flits straddle two channels while the model commits whole flits on one pseudo-channel. Use a multiple of 64, such as 128.",
    ]);
  });

  it("mesh columns beyond the cubes (a line, not a grid), and mesh_cols with another pattern", () => {
    expect(
      warningsOf("name: t\nsip:\n  cubes: 4\n  ucie: { pattern: mesh, mesh_cols: 8, bw_gbs: 256 }\n"),
    ).toEqual([
      "t.yaml:4:37: sip.ucie.mesh_cols: mesh_cols 8 is more than the 4 cube(s) (sip.cubes), so the mesh is a single row of 4: a line, not a grid. Use mesh_cols 2 (the default, a square) or at most 4.",
    ]);
    expect(
      warningsOf("name: t\nsystem:\n  sips: 4\n  sip_link: { pattern: ring, mesh_cols: 2, bw_gbs: 100 }\n"),
    ).toEqual([
      "t.yaml:4:41: system.sip_link.mesh_cols: mesh_cols is only used by the mesh pattern; with pattern ring it is ignored. Remove it, or set pattern: mesh.",
    ]);
  });
});
