import { fileURLToPath } from "node:url";
import { parseTopology } from "@kb/topology";
import { loadTopologyFile } from "@kb/topology/node";
import { describe, expect, it } from "vitest";
import { runCli } from "./index.js";
import { kb } from "./test-support.js";

const topologies = (name: string) => fileURLToPath(new URL(`../../../topologies/${name}`, import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`__fixtures__/${name}`, import.meta.url));
const defaultYaml = topologies("default.yaml");

describe("help and version", () => {
  for (const path of [
    [],
    ["topology"],
    ["topology", "validate"],
    ["topology", "show"],
    ["topology", "graph"],
  ]) {
    it(`kb ${[...path, "--help"].join(" ")} prints usage and exits 0`, async () => {
      const run = await kb(...path, "--help");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: ${["kb", ...path].join(" ")} `));
      expect(run.stderr).toBe("");
    });
  }

  it("lists the subcommands of topology", async () => {
    const { stdout } = await kb("topology", "--help");
    for (const command of [
      "validate [options] <topology...>",
      "show [options] <topology>",
      "graph [options] <topology>",
    ]) {
      expect(stdout).toContain(command);
    }
  });

  it("--version prints the package version", async () => {
    expect(await kb("--version")).toEqual({ code: 0, stdout: "0.0.0\n", stderr: "" });
  });

  it("a bare `kb` prints the help on stderr and exits 1", async () => {
    const run = await kb();
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^Usage: kb /);
  });
});

describe("usage errors exit 1 with a pointer to the help", () => {
  it("unknown command, with a suggestion", async () => {
    expect(await kb("topology", "valdate", defaultYaml)).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: unknown command 'valdate'\n(Did you mean validate?)\n(see kb topology --help)\n",
    });
  });

  it("unknown option", async () => {
    expect(await kb("topology", "show", "--bogus", defaultYaml)).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: unknown option '--bogus'\n(see kb topology show --help)\n",
    });
  });

  it("missing argument", async () => {
    const run = await kb("topology", "validate");
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "error: missing required argument 'topology'\n(see kb topology validate --help)\n",
    );
  });

  it("bad option value", async () => {
    const run = await kb("topology", "graph", defaultYaml, "--format", "svg");
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "error: option '--format <format>' argument 'svg' is invalid. Allowed choices are dot, mermaid.\n" +
        "(see kb topology graph --help)\n",
    );
  });
});

describe("kb topology validate", () => {
  // Links are node pairs joined by at least one edge. default.yaml has 532 edges (graph.test.ts),
  // of which 16 PEs x 6 are one-way (5 control, fetch_store -> tcm): (532 - 96) / 2 + 96 = 314.
  // ref-cube.yaml (1 cube of 4 x 8, HBM 16 x 2, no UCIe port) has 2 (host) + 6 (CPUs) + 64
  // (ch<->pc) + 4 (bridge) + 32 (xbar<->ch) + 2 (m_cpu_dma<->xbar0) + 104 (mesh: 4 x 7 + 3 x 8
  // = 52 links) + 2 (m_cpu) + 2 (sram) + 2 (noc_to_xbar: r0c0<->xbar0 only) + 32 PEs x 22 = 704,
  // in all 924 edges, 32 PEs x 6 = 192 one-way: (924 - 192) / 2 + 192 = 558. ref-4sip.yaml has
  // 8340 edges (benches/perf/topology/cases.ts), 256 PEs x 6 = 1536 one-way:
  // (8340 - 1536) / 2 + 1536 = 4938.
  it("prints the OK line with spec and graph counts", async () => {
    expect(await kb("topology", "validate", defaultYaml)).toEqual({
      code: 0,
      stdout: `OK ${defaultYaml}: default: 1 SIP(s), 2 cube(s), 16 PE(s), 229 nodes, 314 links\n`,
      stderr: "",
    });
  });

  it("validates every file given; one bad file makes the exit code 1", async () => {
    const bad = fixture("bad-topology.yaml");
    const run = await kb("topology", "validate", defaultYaml, bad, topologies("ref-cube.yaml"));
    expect(run.code).toBe(1);
    expect(run.stdout.split("\n")).toEqual([
      `OK ${defaultYaml}: default: 1 SIP(s), 2 cube(s), 16 PE(s), 229 nodes, 314 links`,
      `OK ${topologies("ref-cube.yaml")}: ref-cube: 1 SIP(s), 1 cube(s), 32 PE(s), 379 nodes, 558 links`,
      "",
    ]);
    expect(run.stderr.split("\n")).toEqual([
      `${bad}:5:20: sip.ucie.pattern: the string "rnig" is not allowed; expected one of "none", "ring", "mesh", "all_to_all"; did you mean "ring"?`,
      `${bad}:7:19: cube.noc.colums: unknown key "colums"; did you mean "cols"? Allowed keys here: cols, first_flit_ns, impl, kind, link, params, routing, rows.`,
      "",
    ]);
  });

  it("the reference topologies validate", async () => {
    const run = await kb("topology", "validate", topologies("ref-4sip.yaml"));
    expect(run).toEqual({
      code: 0,
      stdout: `OK ${topologies("ref-4sip.yaml")}: ref-4sip: 4 SIP(s), 16 cube(s), 256 PE(s), 3497 nodes, 4938 links\n`,
      stderr: "",
    });
  });

  it("a missing file is a clear user error", async () => {
    const run = await kb("topology", "validate", "no-such-topology.yaml");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(
      /^\[TOPOLOGY_NOT_FOUND\] no topology named "no-such-topology": looked for no-such-topology\.yaml in .*, then for topologies\/no-such-topology\.yaml in /,
    );
  });

  it("an override that matches no node is reported at its place in the file", async () => {
    const file = fixture("override-no-match.yaml");
    const run = await kb("topology", "validate", file);
    expect(run.code).toBe(1);
    // The `match:` value of the first override starts on line 4, column 12 ("  - match: " is 11 characters).
    expect(run.stderr).toBe(
      `${file}:4:12: overrides[0].match: "sip0.cube0.pe0.pe_gem" matches no node; did you mean "sip0.cube0.pe0.pe_gemm"?\n`,
    );
  });
});

describe("kb topology show", () => {
  it("prints the tree SIP -> cube -> PE grid", async () => {
    const run = await kb("topology", "show", defaultYaml);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      [
        "host (host link 64 GB/s, 0 mm to each SIP)",
        "└─ sip0: io_cpu io_cpu_v1, forwards in 50 ns",
        "   ├─ cube0: 8 PEs (2 x 4), HBM 16 GiB at 409.6 GB/s",
        "   │     r0: pe0 pe1 pe2 pe3",
        "   │     r1: pe4 pe5 pe6 pe7",
        "   └─ cube1: 8 PEs (2 x 4), HBM 16 GiB at 409.6 GB/s",
        "         r0: pe0 pe1 pe2 pe3",
        "         r1: pe4 pe5 pe6 pe7",
      ].join("\n"),
    );
    expect(run.stdout).toContain(
      "hbm         hbm_ctrl_v1: 8 channels x 2 PCs x 25.6 GB/s = 409.6 GB/s, 16 GiB, access 40 ns",
    );
    // forward_ns defaults: sip.io_cpu 50 ns (on the sip line above), cube.m_cpu_dma 20 ns.
    expect(run.stdout).toContain("m_cpu_dma   m_cpu_dma_v1, forwards in 20 ns\n");
  });

  it("prints hand-computed peak bandwidths (default: 8 x 2 x 25.6 = 409.6 GB/s per stack, 2 stacks)", async () => {
    const { stdout } = await kb("topology", "show", defaultYaml);
    expect(stdout).toContain("HBM             409.6 per stack (8 x 2 x 25.6), 819.2 total (2 stack(s))");
    expect(stdout).toContain("PE_DMA -> XBAR  1024 per cube (8 x 128)");
    expect(stdout).toContain("XBAR -> HBM     512 per cube (8 channels x 64)");
    expect(stdout).toContain("UCIe            256 per link, 256 total over 1 link(s)");
    expect(stdout).toContain("graph nodes          229");
  });

  it("ref-4sip: 16 stacks of 819.2 GB/s, a UCIe ring of 4 links per SIP, 6 SIP links", async () => {
    const { stdout, code } = await kb("topology", "show", topologies("ref-4sip.yaml"));
    expect(code).toBe(0);
    const peaks = stdout.slice(stdout.indexOf("peak bandwidth (GB/s)")).split("\n");
    expect(peaks).toEqual([
      "peak bandwidth (GB/s)",
      "  HBM             819.2 per stack (16 x 2 x 25.6), 13107.2 total (16 stack(s))",
      "  PE_DMA -> XBAR  2048 per cube (16 x 128)",
      "  XBAR -> HBM     1024 per cube (16 channels x 64)",
      "  host            64 per SIP, 256 total",
      "  UCIe            256 per link, 4096 total over 16 link(s)",
      "  SIP links       128 per link, 768 total over 6 link(s)",
      "",
    ]);
    expect(stdout).toContain("PEs                  256 (16 per cube)");
  });

  it("--resolved prints YAML that parses back to the same topology", async () => {
    const run = await kb("topology", "show", "--resolved", defaultYaml);
    expect(run.code).toBe(0);
    expect(parseTopology(run.stdout, "resolved.yaml")).toEqual(loadTopologyFile(defaultYaml));
  });

  it("--json prints the resolved topology", async () => {
    const run = await kb("topology", "show", "--json", topologies("ref-cube.yaml"));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(loadTopologyFile(topologies("ref-cube.yaml")));
  });

  it("an invalid file prints its located problems and exits 1", async () => {
    const bad = fixture("bad-topology.yaml");
    const run = await kb("topology", "show", bad);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.split("\n")).toHaveLength(3);
    expect(run.stderr).toContain(`${bad}:7:19: cube.noc.colums: unknown key "colums"`);
  });
});

describe("kb topology graph", () => {
  // default.yaml at level cube: host, io_cpu, and per cube m_cpu, m_cpu_dma, hbm, xbar0, xbar1,
  // bridge, 8 routers, sram, 1 UCIe port, 8 PEs (24) = 50 nodes. Linked pairs: host-io_cpu, the
  // UCIe link, and per cube 3 (io_cpu, m_cpu, m_cpu_dma) + 2 (bridge) + 2 (hbm-xbar halves) +
  // 1 (m_cpu_dma-xbar0) + 10 (2 x 4 mesh) + 2 (m_cpu, sram to r0c0) + 1 (noc_to_xbar: r0c0-xbar0
  // only) + 1 (UCIe port to corner r0c0) + 16 (each PE to its xbar half and router) = 38:
  // 1 + 1 + 2 x 38 = 78 edges.
  it("dot, level cube: clusters for the SIP and cubes, 50 nodes, 78 edges", async () => {
    const run = await kb("topology", "graph", defaultYaml, "--format", "dot");
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toBe('digraph "default" {');
    expect(lines.filter((line) => /^\s*"[^"]+" \[label=/.test(line))).toHaveLength(50);
    expect(lines.filter((line) => line.includes(" -> "))).toHaveLength(78);
    expect(lines.filter((line) => line.includes("subgraph "))).toHaveLength(3);
    expect(run.stdout).toContain('"host" -> "sip0.io_cpu" [dir=both, label="64 GB/s"];');
    expect(run.stdout).toContain('"sip0.cube0.hbm" -> "sip0.cube0.xbar0" [dir=both, label="4 x 64 GB/s"];');
    expect(run.stdout).toContain('"sip0.cube0.ucie1" -> "sip0.cube1.ucie0" [dir=both, label="256 GB/s"];');
    // The router <-> XBAR half pair (noc_to_xbar, 128 GB/s), drawn from the node laid out first
    // (XBAR halves, then routers, then the UCIe port): xbar0 - r0c0 only, one per cube; xbar1
    // pairs with no router. The port pairs only with its corner r0c0 (ucie_to_noc, 256 GB/s) and
    // its peer port: no UCIe port <-> XBAR pair any more.
    expect(run.stdout).toContain('"sip0.cube0.xbar0" -> "sip0.cube0.noc.r0c0" [dir=both, label="128 GB/s"];');
    expect(run.stdout).toContain('"sip0.cube1.xbar0" -> "sip0.cube1.noc.r0c0" [dir=both, label="128 GB/s"];');
    expect(lines.filter((line) => line.includes("xbar") && line.includes(".noc."))).toHaveLength(2);
    expect(lines.filter((line) => line.includes("xbar1") && line.includes(".noc."))).toEqual([]);
    expect(run.stdout).toContain('"sip0.cube0.noc.r0c0" -> "sip0.cube0.ucie1" [dir=both, label="256 GB/s"];');
    expect(lines.filter((line) => line.includes("xbar") && line.includes("ucie"))).toEqual([]);
  });

  it("mermaid, level cube: the same nodes and edges", async () => {
    const run = await kb("topology", "graph", defaultYaml, "--format", "mermaid", "--level", "cube");
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toBe("flowchart LR");
    expect(lines.filter((line) => /^\s*\w+\["/.test(line))).toHaveLength(50);
    expect(lines.filter((line) => line.includes(" <-->|") || line.includes(" -->|"))).toHaveLength(78);
    expect(lines.filter((line) => line.trimStart().startsWith("subgraph "))).toHaveLength(3);
    expect(lines.filter((line) => line.trim() === "end")).toHaveLength(3);
    expect(run.stdout).toContain('  host <-->|"64 GB/s"| sip0__io_cpu');
  });

  // Level all draws every node that has an implementation or an edge: 229 nodes less sip0, 2
  // cubes, 2 HBM stacks and 16 PE containers (drawn as clusters) = 208; one edge per linked pair,
  // 314 as `validate` counts them, 6 per PE one-way (5 control edges and fetch_store -> tcm).
  it("dot, level all: every component, one edge per linked pair", async () => {
    const run = await kb("topology", "graph", defaultYaml, "--format", "dot", "--level", "all");
    const lines = run.stdout.split("\n");
    expect(lines.filter((line) => /^\s*"[^"]+" \[label=/.test(line))).toHaveLength(208);
    expect(lines.filter((line) => line.includes(" -> "))).toHaveLength(314);
    expect(lines.filter((line) => line.includes(" -> ") && !line.includes("dir=both"))).toHaveLength(16 * 6);
    expect(lines.filter((line) => line.includes("subgraph "))).toHaveLength(21);
    expect(run.stdout).toContain(
      '"sip0.cube0.pe0.pe_cpu" -> "sip0.cube0.pe0.pe_scheduler" [label="64 GB/s"];',
    );
  });

  it("level pe: PE components and HBM channels, pseudo-channels folded into their channel", async () => {
    const run = await kb("topology", "graph", defaultYaml, "--format", "mermaid", "--level", "pe");
    expect(run.stdout).toContain("sip0__cube0__hbm__ch7[");
    expect(run.stdout).not.toContain("__pc0");
    expect(run.stdout).toContain("sip0__cube0__pe3__pe_gemm[");
  });

  it("is deterministic", async () => {
    const first = await kb(
      "topology",
      "graph",
      topologies("ref-4sip.yaml"),
      "--format",
      "dot",
      "--level",
      "pe",
    );
    const second = await kb(
      "topology",
      "graph",
      topologies("ref-4sip.yaml"),
      "--format",
      "dot",
      "--level",
      "pe",
    );
    expect(first.stdout).toBe(second.stdout);
  });
});

describe("internal errors", () => {
  it("an unexpected exception prints `internal error:` with its stack, asks for a report, exits 2", async () => {
    let stderr = "";
    const code = await runCli(["topology", "validate", defaultYaml], {
      stdout: {
        write: () => {
          throw new TypeError("stdout exploded");
        },
      },
      stderr: { write: (text: string) => (stderr += text) },
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^internal error: TypeError: stdout exploded\n\s+at /);
    expect(stderr).toContain("Please report it");
  });
});
