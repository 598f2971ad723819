import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type RunResults, RunResultsSchema } from "@kb/runtime";
import { loadTopologyGraphFile } from "@kb/topology/node";
import { describe, expect, it } from "vitest";
import type { WebTopology } from "./api.js";
import { buildDiagram } from "./diagram-model.js";
import { webTopologyOf } from "./topology-data.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** A topology as `kb web` serves it (apps/cli/src/web-command.ts). */
function webTopology(file: string): WebTopology {
  const { topology, graph } = loadTopologyGraphFile(repo(file));
  return webTopologyOf(file, topology.name, graph);
}

const results = (name: string): RunResults =>
  RunResultsSchema.parse(JSON.parse(readFileSync(new URL(`__fixtures__/${name}`, import.meta.url), "utf8")));

describe("buildDiagram", () => {
  const topology = webTopology("topologies/default.yaml");

  it("draws one node per PE (16 on default.yaml), the PE components and pseudo-channels folded in", () => {
    const diagram = buildDiagram(topology, null);
    expect(diagram.peCount).toBe(16);
    const ids = new Set(diagram.nodes.map((node) => node.id));
    expect(ids.has("sip0.cube1.pe7")).toBe(true);
    expect(ids.has("sip0.cube1.pe7.pe_gemm")).toBe(false);
    expect(ids.has("sip0.cube0.hbm.ch3")).toBe(true);
    expect(ids.has("sip0.cube0.hbm.ch3.pc1")).toBe(false);
    expect(diagram.nodes.filter((node) => node.kind === "hbm_channel")).toHaveLength(16);
  });

  it("nests SIP > cube > parts as compounds, leaves placed, compounds not", () => {
    const diagram = buildDiagram(topology, null);
    const byId = new Map(diagram.nodes.map((node) => [node.id, node]));
    expect(byId.get("sip0.cube0.pe3")?.parent).toBe("sip0.cube0");
    expect(byId.get("sip0.cube0")?.parent).toBe("sip0");
    expect(byId.get("sip0.cube0.hbm.ch0")?.parent).toBe("sip0.cube0.hbm");
    for (const id of ["sip0", "sip0.cube0", "sip0.cube0.hbm"]) {
      expect(byId.get(id)).toMatchObject({ compound: true, position: null });
    }
    const leaves = diagram.nodes.filter((node) => !node.compound);
    expect(leaves.every((node) => node.position !== null)).toBe(true);
    // No two leaves on the same spot.
    const spots = new Set(leaves.map((node) => `${node.position?.x},${node.position?.y}`));
    expect(spots.size).toBe(leaves.length);
  });

  it("places PEs on the NOC grid: same row same y, next column further right", () => {
    const diagram = buildDiagram(topology, null);
    const at = (id: string) => diagram.nodes.find((node) => node.id === id)?.position;
    expect(at("sip0.cube0.pe0")?.y).toBe(at("sip0.cube0.pe3")?.y);
    expect(at("sip0.cube0.pe1")?.x).toBeGreaterThan(at("sip0.cube0.pe0")?.x ?? 0);
    expect(at("sip0.cube0.pe4")?.y).toBeGreaterThan(at("sip0.cube0.pe0")?.y ?? 0);
    expect(at("sip0.cube1.pe0")?.x).toBeGreaterThan(at("sip0.cube0.pe3")?.x ?? 0);
  });

  it("merges the edges between folded parts into links with a count, none inside a PE", () => {
    const diagram = buildDiagram(topology, null);
    const link = (a: string, b: string) =>
      diagram.edges.find(
        (edge) => (edge.source === a && edge.target === b) || (edge.source === b && edge.target === a),
      );
    // pe_dma and pe_cpu both link the PE to its router.
    expect(link("sip0.cube0.pe5", "sip0.cube0.noc.r1c1")).toMatchObject({ links: 2 });
    expect(link("sip0.cube0.pe5", "sip0.cube0.noc.r1c1")?.label).toMatch(/^2 x \d+(\.\d+)? GB\/s$/);
    expect(link("sip0.cube0.ucie1", "sip0.cube1.ucie0")).toMatchObject({
      links: 1,
      bw: 256,
      label: "256 GB/s",
    });
    expect(diagram.edges.every((edge) => edge.source !== edge.target)).toBe(true);
    const keys = diagram.edges.map((edge) => `${edge.source}|${edge.target}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("colours by utilisation: a PE its busiest component, a channel its controller, unused 0", () => {
    const run = results("gemm-256.results.json");
    const diagram = buildDiagram(topology, run);
    const byId = new Map(diagram.nodes.map((node) => [node.id, node]));
    const busiestOfPe0 = Math.max(
      ...run.components.filter((row) => row.id.startsWith("sip0.cube0.pe0.")).map((row) => row.utilisation),
    );
    expect(byId.get("sip0.cube0.pe0")?.utilisation).toBe(busiestOfPe0);
    expect(
      byId.get("sip0.cube0.pe0")?.details.some((line) => line.startsWith("pe_gemm (pe_gemm_v1): ")),
    ).toBe(true);
    const hbm = run.components.find((row) => row.id === "sip0.cube0.hbm")?.utilisation;
    expect(byId.get("sip0.cube0.hbm.ch5")?.utilisation).toBe(hbm);
    expect(byId.get("sip0.cube0.noc.r1c3")?.utilisation).toBeGreaterThanOrEqual(0);
    expect(byId.get("sip0")?.utilisation).toBeNull();
    expect(buildDiagram(topology, null).nodes.every((node) => node.utilisation === null)).toBe(true);
  });

  it("colours a channel by its busiest pseudo-channel from hbmPorts, the spread in its hover box", () => {
    // Crafted: sip0.cube0.hbm port 0 (ch0.pc0) 97%, port 3 (ch1.pc1) 50%, the rest 6%; no row
    // for sip0.cube1.hbm (it moved nothing).
    const diagram = buildDiagram(topology, results("gemm-256-hotspot.results.json"));
    const byId = new Map(diagram.nodes.map((node) => [node.id, node]));
    expect(byId.get("sip0.cube0.hbm.ch0")?.utilisation).toBe(0.97);
    expect(byId.get("sip0.cube0.hbm.ch0")?.details).toEqual([
      "hbm_channel",
      "pc0 (port 0): 97.0%, 970 kB",
      "pc1 (port 1): 6.0%, 60 kB",
      "pseudo-channels: max 97.0%, min 6.0%",
    ]);
    // Port 3 is channel floor(3 / 2) = 1, pseudo-channel 3 mod 2 = 1.
    expect(byId.get("sip0.cube0.hbm.ch1")?.utilisation).toBe(0.5);
    expect(byId.get("sip0.cube0.hbm.ch1")?.details[2]).toBe("pc1 (port 3): 50.0%, 500 kB");
    expect(byId.get("sip0.cube0.hbm.ch7")?.utilisation).toBe(0.06);
    expect(byId.get("sip0.cube1.hbm.ch0")?.utilisation).toBe(0);
  });

  it("colours a link by its busiest direction from links; null without link results", () => {
    const link = (diagram: ReturnType<typeof buildDiagram>, a: string, b: string) =>
      diagram.edges.find(
        (edge) => (edge.source === a && edge.target === b) || (edge.source === b && edge.target === a),
      );
    const diagram = buildDiagram(topology, results("gemm-256-hotspot.results.json"));
    expect(link(diagram, "sip0.cube0.xbar0", "sip0.cube0.hbm.ch0")).toMatchObject({
      utilisation: 0.8,
      label: "64 GB/s: busiest direction 80.0% busy, 1 MB carried",
    });
    expect(link(diagram, "sip0.cube0.xbar0", "sip0.cube0.hbm.ch1")?.utilisation).toBe(0);
    const older = buildDiagram(topology, results("gemm-256.results.json"));
    expect(older.edges.every((edge) => edge.utilisation === null)).toBe(true);
    expect(older.nodes.find((node) => node.id === "sip0.cube0.hbm.ch0")?.details).toEqual([
      "hbm_channel",
      "HBM controller: 27.8% (these results do not split it by pseudo-channel)",
    ]);
  });

  it("draws every SIP of a larger design point (ref-4sip: 256 PEs)", () => {
    const diagram = buildDiagram(webTopology("topologies/ref-4sip.yaml"), null);
    expect(diagram.peCount).toBe(256);
    expect(diagram.nodes.filter((node) => node.kind === "sip")).toHaveLength(4);
  });
});
