import { fileURLToPath } from "node:url";
import { loadTopologyGraphFile } from "@kb/topology/node";
import { describe, expect, it } from "vitest";
import { labelAt, labelZoom, MIN_LABEL_PX } from "./diagram-labels.js";
import { buildDiagram, type Diagram } from "./diagram-model.js";
import { webTopologyOf } from "./topology-data.js";

// Which labels the diagram draws at which zoom: at least 11 px on screen, shortened or hidden
// when they no longer fit their node's room (diagram-labels.ts).

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

function diagramOf(file: string): Diagram {
  const { topology, graph } = loadTopologyGraphFile(repo(file));
  return buildDiagram(webTopologyOf(file, topology.name, graph), null);
}

/** The label drawn of node `id` at `zoom`: [text, on-screen px], or null when hidden. */
function drawn(diagram: Diagram, id: string, zoom: number): [string, number] | null {
  const node = diagram.nodes.find((each) => each.id === id);
  if (node === undefined) throw new Error(`no node ${id}`);
  const label = labelAt(node, zoom);
  return label === null ? null : [label.text, Math.round(label.fontSize * zoom * 100) / 100];
}

describe("the diagram's labels by level of detail", () => {
  const cube = diagramOf("topologies/ref-cube.yaml");
  const sips = diagramOf("topologies/ref-4sip.yaml");
  const small = diagramOf("topologies/default.yaml");

  it("on ref-cube at about its fit (zoom 0.6), draws every label 11 px tall: 18.33 diagram px", () => {
    // pe31 in bold: 4 characters x 18.33 x 0.66 = 48.4 px of the PE's 90; ch15: 4 x 18.33 x 0.6 =
    // 44 px of the 1040 / 16 - 8 = 57 px between channels.
    for (const id of [
      "sip0.cube0.pe31",
      "sip0.cube0.noc.r3c7",
      "sip0.cube0.hbm.ch15",
      "sip0.cube0",
      "sip0",
    ]) {
      expect(drawn(cube, id, 0.6)?.[1], id).toBe(MIN_LABEL_PX);
    }
    expect(drawn(cube, "sip0.cube0.pe31", 0.6)?.[0]).toBe("pe31");
    expect(drawn(cube, "sip0.cube0.hbm.ch15", 0.6)?.[0]).toBe("ch15");
    expect(drawn(cube, "sip0.cube0", 0.6)?.[0]).toBe("sip0.cube0");
    expect(cube.nodes.every((node) => labelAt(node, 0.6) !== null)).toBe(true);
  });

  it("on ref-4sip at about its fit (zoom 0.11), names SIPs and cubes and hides the parts' labels", () => {
    // 11 / 0.11 = 100 diagram px: pe15 would take 4 x 100 x 0.66 = 264 px of the PE's 90.
    expect(drawn(sips, "sip0.cube0.pe15", 0.11)).toBeNull();
    expect(drawn(sips, "sip0.cube0.noc.r0c0", 0.11)).toBeNull();
    expect(drawn(sips, "sip0.cube0.hbm.ch0", 0.11)).toBeNull();
    expect(drawn(sips, "sip3", 0.11)).toEqual(["sip3", 11]);
    // sip3.cube2: 10 x 100 x 0.66 = 660 px of the cube's 1200 (its leaves span -210 ... 930, + 60).
    expect(drawn(sips, "sip3.cube2", 0.11)).toEqual(["sip3.cube2", 11]);
    // A stack's label, 100 px tall, has 65 px between the XBARs and the stack: hidden.
    expect(drawn(sips, "sip0.cube0.hbm", 0.11)).toBeNull();
  });

  it("shortens a stack's name that is wider than the stack, hides it when taller than its room", () => {
    // default.yaml's stacks are 515 px wide (8 channels 65 px apart). At zoom 0.4, 27.5 diagram px:
    // sip0.cube0.hbm (HBM) takes 20 x 27.5 x 0.66 = 363 px; at zoom 0.2, 55 px: 726 px, too wide,
    // and hbm (HBM) 327; at zoom 0.16, 68.75 px: taller than the 65 px above the stack.
    expect(drawn(small, "sip0.cube0.hbm", 0.4)).toEqual(["sip0.cube0.hbm (HBM)", 11]);
    expect(drawn(small, "sip0.cube0.hbm", 0.2)).toEqual(["hbm (HBM)", 11]);
    expect(drawn(small, "sip0.cube0.hbm", 0.16)).toBeNull();
  });

  it("shortens a cube's name to cube2 when its SIP's name is all there is room for beside it", () => {
    // At zoom 0.06, 183 diagram px: sip3.cube2 takes 1210 px of 1200, cube2 605.
    expect(drawn(sips, "sip3.cube2", 0.06)).toEqual(["cube2", 11]);
  });

  it("zoomed in, draws each label at its own size (a PE's 12 px at zoom 1, 24 px at zoom 2)", () => {
    expect(drawn(sips, "sip0.cube0.pe15", 1)).toEqual(["pe15", 12]);
    expect(drawn(sips, "sip0.cube0.pe15", 2)).toEqual(["pe15", 24]);
    expect(sips.nodes.every((node) => labelAt(node, 1) !== null)).toBe(true);
  });

  it("never draws a label under 11 px on screen, at any zoom between 0.05 and 4", () => {
    let smallest = Number.POSITIVE_INFINITY;
    for (let zoom = 0.05; zoom <= 4; zoom *= 1.07) {
      for (const node of [...cube.nodes, ...sips.nodes]) {
        const label = labelAt(node, zoom);
        if (label !== null) smallest = Math.min(smallest, label.fontSize * zoom);
      }
    }
    expect(smallest).toBeCloseTo(MIN_LABEL_PX, 9);
  });

  it("lays labels out at zoom steps 10% apart, never above the zoom", () => {
    expect(labelZoom(1)).toBe(1);
    expect(labelZoom(1.1)).toBeCloseTo(1.1, 12);
    expect(labelZoom(1.09)).toBe(1);
    expect(labelZoom(0.6)).toBeCloseTo(1.1 ** -6, 12);
    expect(1.1 ** -6).toBeLessThanOrEqual(0.6);
  });
});
