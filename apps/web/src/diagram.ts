/// <reference lib="dom" />
import cytoscape, { type Core, type ElementDefinition } from "cytoscape";
import { IDLE_LINK_COLOUR, needsLightText, utilisationColour } from "./colour.js";
import { labelAt, labelFont, labelZoom, MIN_LABEL_PX } from "./diagram-labels.js";
import type { Diagram, DiagramEdge } from "./diagram-model.js";
import { formatPercent } from "./format.js";

/**
 * Draws a diagram with Cytoscape.js: SIPs, cubes and HBM stacks as compound boxes around their
 * parts, leaves where the floorplan put them (preset layout), links with their bandwidth on
 * hover. `info` shows what the pointer is over. Pan with a drag, zoom with the wheel.
 */
export function renderDiagram(container: HTMLElement, diagram: Diagram, info: HTMLElement): Core {
  const elements: ElementDefinition[] = [
    ...diagram.nodes.map(
      (node): ElementDefinition => ({
        group: "nodes",
        data: {
          id: node.id,
          label: node.label,
          fontSize: labelFont(node.kind, node.compound).size,
          kind: node.kind,
          ...(node.parent !== null ? { parent: node.parent } : {}),
          ...nodeColours(node.utilisation, node.compound),
        },
        ...(node.position !== null ? { position: { ...node.position } } : {}),
        classes: node.compound ? `compound ${node.kind}` : node.kind,
      }),
    ),
    ...diagram.edges.map(
      (edge): ElementDefinition => ({
        group: "edges",
        data: {
          id: edge.id,
          source: edge.source,
          target: edge.target,
          label: edge.label,
          ...edgeStyle(edge),
        },
      }),
    ),
  ];
  const cy = cytoscape({
    container,
    elements,
    layout: { name: "preset", fit: true, padding: 24 },
    minZoom: 0.05,
    maxZoom: 4,
    autoungrabify: true,
    boxSelectionEnabled: false,
    style: [
      {
        selector: "node",
        style: {
          label: "data(label)",
          "background-color": "data(fill)",
          color: "data(text)",
          "font-size": "data(fontSize)",
          "text-valign": "center",
          "text-halign": "center",
          shape: "round-rectangle",
          width: 46,
          height: 24,
          "border-width": 1,
          "border-color": "#5b6877",
        },
      },
      { selector: "node.pe", style: { width: 58, height: 36, "font-weight": "bold" } },
      { selector: "node.noc_router", style: { shape: "ellipse", width: 34, height: 34 } },
      { selector: "node.hbm_channel", style: { shape: "rectangle", width: 44, height: 30 } },
      { selector: "node.ucie_port", style: { shape: "hexagon", width: 46, height: 28 } },
      { selector: "node.host", style: { width: 90, height: 32 } },
      {
        selector: "node.compound",
        style: {
          "text-valign": "top",
          "text-halign": "center",
          "font-weight": "bold",
          color: "#1d2733",
          "background-opacity": 0.35,
          "border-color": "#8899aa",
          "border-width": 1.5,
          padding: "18px",
        },
      },
      {
        selector: "node.sip",
        style: { "background-color": "#f3f6fa", "background-opacity": 1 },
      },
      { selector: "node.cube", style: { "background-color": "#ffffff", "background-opacity": 1 } },
      {
        selector: "edge",
        style: {
          width: "data(width)",
          "line-color": "data(colour)",
          "curve-style": "straight",
          opacity: 0.75,
        },
      },
      {
        selector: "edge.hover",
        style: {
          label: "data(label)",
          "line-color": "#2f6db5",
          opacity: 1,
          // At least MIN_LABEL_PX on screen (evaluated as the class is added, at that zoom).
          "font-size": ((): number => Math.max(MIN_LABEL_PX, MIN_LABEL_PX / cy.zoom())) as unknown as number,
          "text-background-color": "#fff",
          "text-background-opacity": 0.9,
        },
      },
      { selector: "node.hover", style: { "border-width": 3, "border-color": "#2f6db5" } },
    ],
  });
  showLabels(cy, diagram);
  const details = new Map(diagram.nodes.map((node) => [node.id, node]));
  cy.on("mouseover", "node", (event) => {
    const node = details.get(event.target.id());
    event.target.addClass("hover");
    if (node === undefined) return;
    const utilisation = node.utilisation === null ? "" : `\nutilisation ${formatPercent(node.utilisation)}`;
    info.textContent = `${node.id}${node.compound ? "" : utilisation}\n${node.details.join("\n")}`;
  });
  cy.on("mouseover", "edge", (event) => {
    event.target.addClass("hover");
    info.textContent = `${event.target.data("source")} <-> ${event.target.data("target")}\n${event.target.data("label")}`;
  });
  cy.on("mouseout", "node, edge", (event) => {
    event.target.removeClass("hover");
  });
  return cy;
}

/**
 * Keeps the labels of `cy` readable (diagram-labels.ts): laid out now and again whenever the zoom
 * crosses a 10% step (a fit, the wheel), each at least MIN_LABEL_PX tall on screen or hidden.
 */
function showLabels(cy: Core, diagram: Diagram): void {
  let laidOut = 0;
  const layOut = () => {
    const zoom = labelZoom(cy.zoom());
    if (zoom === laidOut) return;
    laidOut = zoom;
    cy.batch(() => {
      for (const node of diagram.nodes) {
        const label = labelAt(node, zoom);
        cy.getElementById(node.id).data({
          label: label?.text ?? "",
          fontSize: label?.fontSize ?? labelFont(node.kind, node.compound).size,
        });
      }
    });
  };
  layOut();
  cy.on("zoom", layOut);
}

/** Re-colours a drawn diagram from another results file (same topology, same ids). */
export function recolourDiagram(cy: Core, diagram: Diagram): void {
  cy.batch(() => {
    for (const node of diagram.nodes) {
      cy.getElementById(node.id).data(nodeColours(node.utilisation, node.compound));
    }
    for (const edge of diagram.edges)
      cy.getElementById(edge.id).data({ label: edge.label, ...edgeStyle(edge) });
  });
}

/**
 * A link's stroke: without link results grey, as wide as its bandwidth suggests; with them its
 * busiest direction's utilisation on the utilisation scale, wider the busier (1 to 7 px).
 */
export function edgeStyle(edge: DiagramEdge): { colour: string; width: number } {
  if (edge.utilisation === null) {
    return { colour: IDLE_LINK_COLOUR, width: Math.max(1, Math.min(6, Math.log2(edge.bw * edge.links) / 2)) };
  }
  if (edge.utilisation <= 0) return { colour: IDLE_LINK_COLOUR, width: 1 };
  return { colour: utilisationColour(edge.utilisation), width: 1.5 + 5.5 * Math.min(1, edge.utilisation) };
}

function nodeColours(utilisation: number | null, compound: boolean): { fill: string; text: string } {
  const fill = utilisationColour(utilisation);
  return { fill, text: !compound && needsLightText(fill) ? "#ffffff" : "#1d2733" };
}
