import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import * as expand from "./expand.js";
import {
  expandedNodeBound,
  expandTopology,
  formatIssue,
  resolveTopology,
  TOPOLOGY_LIMITS,
  type TopologyInput,
  topologyLimitIssues,
  YamlValidationError,
} from "./index.js";
import { loadTopologyFile, loadTopologyGraphFile } from "./node.js";

// Spied on so a test can tell whether a file's graph was expanded at all.
vi.mock("./expand.js", { spy: true });

const topologiesDir = new URL("../../../topologies/", import.meta.url);

function limitsOf(input: Partial<TopologyInput>): string[] {
  // Limits are checked on the resolved topology; resolveTopology itself would report them.
  const topology = resolveTopology({ name: "t" });
  const merged = {
    ...topology,
    system: { ...topology.system, ...(input.system as object) },
    sip: { ...topology.sip, ...(input.sip as object) },
    cube: { ...topology.cube, ...(input.cube as object) },
  } as typeof topology;
  return topologyLimitIssues(merged).map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

function topologyFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "kb-limits-")), "t.yaml");
  writeFileSync(path, text);
  return path;
}

describe("topologyLimitIssues", () => {
  it("accepts each address field at its largest value: 32 SIPs, 64 cubes, 64 x 64 PEs, 1 TiB of HBM", () => {
    expect(limitsOf({ system: { sips: 32 } })).toEqual([]);
    expect(limitsOf({ sip: { cubes: 64 } })).toEqual([]);
    expect(limitsOf({ cube: { noc: { rows: 64, cols: 64 } } } as Partial<TopologyInput>)).toEqual([]);
    expect(
      limitsOf({ cube: { hbm: { ...resolveTopology({ name: "t" }).cube.hbm, capacity_bytes: 2 ** 40 } } }),
    ).toEqual([]);
  });

  it("rejects one more than each, at the key to change, saying the limit and why", () => {
    expect(limitsOf({ system: { sips: 33 } })).toEqual([
      "system.sips: 33 SIPs do not fit the device address: its SIP field is 5 bits, so a device has at most 32 SIPs. Set system.sips to 32 or fewer.",
    ]);
    expect(limitsOf({ sip: { cubes: 65 } })[0]).toMatch(/^sip\.cubes: 65 cubes per SIP .* at most 64 cubes/);
    expect(limitsOf({ cube: { noc: { rows: 128, cols: 128 } } } as Partial<TopologyInput>)[0]).toMatch(
      /^cube\.noc: rows x cols = 128 x 128 = 16384 PEs per cube .* at most 4096 PEs/,
    );
  });

  it("rejects a graph beyond maxNodes even when every field fits, naming the knobs", () => {
    const issues = limitsOf({
      system: { sips: 32 },
      sip: { cubes: 64 },
      cube: { noc: { rows: 64, cols: 64 } },
    } as Partial<TopologyInput>);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(
      /^cube\.noc: this design expands to about \d+ nodes \(32 SIP\(s\) x 64 cube\(s\)/,
    );
    expect(issues[0]).toContain(`builds at most ${TOPOLOGY_LIMITS.maxNodes}`);
  });

  it("expandedNodeBound is the exact node count of the reference topologies", () => {
    vi.mocked(expand.expandTopology).mockClear();
    for (const name of ["default.yaml", "ref-cube.yaml", "ref-4sip.yaml"]) {
      const { topology, graph } = loadTopologyGraphFile(new URL(name, topologiesDir).pathname);
      expect(expandedNodeBound(topology), name).toBe(graph.nodes.length);
    }
    // The spy sees the loader's expansions (so "not called" below means something).
    expect(expand.expandTopology).toHaveBeenCalledTimes(3);
  });

  it("is part of the schema: resolveTopology reports it, and expandTopology refuses an unchecked topology", () => {
    expect(() => resolveTopology({ name: "t", sip: { cubes: 1e6 } })).toThrow(
      /sip\.cubes: 1000000 cubes per SIP do not fit the device address/,
    );
    const unchecked = { ...resolveTopology({ name: "t" }), system: { sips: 1e9 } } as never;
    expect(() => expandTopology(unchecked)).toThrow(
      expect.objectContaining({
        code: "TOPOLOGY_INVALID",
        detail: expect.stringMatching(/^system\.sips: 1000000000 SIPs do not fit/),
      }),
    );
  });
});

describe("a topology file beyond the limits", () => {
  it.each([
    ["sip: { cubes: 1e6 }", "t.yaml:2:15: sip.cubes: 1000000 cubes per SIP"],
    ["cube:\n  noc: { rows: 1000, cols: 1000 }", "t.yaml:3:8: cube.noc: rows x cols = 1000 x 1000"],
    ["cube:\n  hbm: { channels: 1000000 }", "t.yaml:3:20: cube.hbm.channels: this design expands to about"],
  ])("%j fails with a located error, without expanding the graph", (body, start) => {
    const path = topologyFile(`name: big\n${body}\n`);
    vi.mocked(expand.expandTopology).mockClear();
    let error: unknown;
    try {
      loadTopologyGraphFile(path);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(YamlValidationError);
    const issues = (error as YamlValidationError).issues.map(formatIssue);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.replace(path, "t.yaml")).toMatch(new RegExp(`^${start.replace(/[.()]/g, "\\$&")}`));
    expect(expand.expandTopology).not.toHaveBeenCalled();
    // Plain loading (no graph) reports the same.
    expect(() => loadTopologyFile(path)).toThrow(YamlValidationError);
  });
});
