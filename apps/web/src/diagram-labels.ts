// The diagram's labels by level of detail (browser-safe, no DOM): a label is drawn at least
// MIN_LABEL_PX tall on screen, so at a small zoom its font grows in the diagram's own units; a
// label that then needs more room than its node has is shortened (`sip0.cube1` to `cube1`) or
// hidden. Zoomed out on a large topology the SIPs and cubes keep their names and the PEs, routers
// and channels lose theirs; zoomed in, every label shows. Full names stay in the hover box.

/** The smallest font size of a drawn label on screen, px. */
export const MIN_LABEL_PX = 11;

/** Average advance of a character in ems (the page's sans-serif; bold is wider), an upper estimate. */
const CHAR_EM = 0.6;
const BOLD_CHAR_EM = 0.66;

/** A kind's label font at zoom 1 (diagram px). */
export interface LabelFont {
  readonly size: number;
  readonly bold: boolean;
}

const FONTS: Readonly<Record<string, LabelFont>> = {
  pe: { size: 12, bold: true },
  noc_router: { size: 9, bold: false },
  ucie_port: { size: 9, bold: false },
  host: { size: 13, bold: false },
  sip: { size: 18, bold: true },
};
const LEAF_FONT: LabelFont = { size: 10, bold: false };
const COMPOUND_FONT: LabelFont = { size: 14, bold: true };

/** The label font of a node of `kind` at zoom 1. */
export function labelFont(kind: string, compound: boolean): LabelFont {
  return FONTS[kind] ?? (compound ? COMPOUND_FONT : LEAF_FONT);
}

/**
 * The width a leaf's label may take (diagram px, centred on the node): its node and a margin
 * short of its neighbours on the floorplan (diagram-model.ts): PEs and routers 130 px apart,
 * HBM channels a stack's width over its channels (`channelStep`), the other parts further apart.
 */
export function leafLabelRoom(kind: string, channelStep: number): number {
  switch (kind) {
    case "pe":
      return 90;
    case "noc_router":
    case "ucie_port":
      return 70;
    case "hbm_channel":
      return channelStep - 8;
    default:
      // The cube manager, SRAM and DMA in their column left of the grid, the XBAR halves and the
      // bridge under it, the host above: far from other labels.
      return 150;
  }
}

/** What a node's label needs: its forms (full name first, then shorter ones), font and room. */
export interface LabelSource {
  readonly labels: readonly string[];
  readonly kind: string;
  readonly compound: boolean;
  /** Diagram px the label may take across, and up and down. */
  readonly labelRoom: number;
  readonly labelRoomY: number;
}

/** A label as drawn at a zoom: its text and font size in diagram px. */
export interface DrawnLabel {
  readonly text: string;
  readonly fontSize: number;
}

/** The estimated width of `text` at `fontSize` (diagram px). */
export function labelWidth(text: string, fontSize: number, bold: boolean): number {
  return text.length * fontSize * (bold ? BOLD_CHAR_EM : CHAR_EM);
}

/**
 * The label of `node` at `zoom` (screen px per diagram px): the longest of its forms that fits its
 * room at a font of at least {@link MIN_LABEL_PX} on screen (its own size when that is larger),
 * or null when none fits (the label is hidden), nor when the font is taller than its room.
 */
export function labelAt(node: LabelSource, zoom: number): DrawnLabel | null {
  const font = labelFont(node.kind, node.compound);
  const fontSize = Math.max(font.size, MIN_LABEL_PX / zoom);
  if (fontSize > node.labelRoomY) return null;
  const text = node.labels.find((form) => labelWidth(form, fontSize, font.bold) <= node.labelRoom);
  return text === undefined ? null : { text, fontSize };
}

/** Step of the zoom levels labels are laid out at (10% apart). */
const ZOOM_STEP = 1.1;

/**
 * `zoom` rounded down to a step of 10%: labels are laid out again only when the zoom crosses a
 * step, and a font sized for the step is at least as large on screen at `zoom`.
 */
export function labelZoom(zoom: number): number {
  return ZOOM_STEP ** Math.floor(Math.log(zoom) / Math.log(ZOOM_STEP) + 1e-9);
}
