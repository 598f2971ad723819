/** Stops of the utilisation scale, 0 to 1 (ColorBrewer's YlOrRd, readable on white). */
export const UTILISATION_STOPS: readonly string[] = ["#ffffcc", "#fed976", "#fd8d3c", "#e31a1c", "#800026"];

/** Stroke of a link that carried nothing, or of every link without link results. */
export const IDLE_LINK_COLOUR = "#b8c2cc";

/** Fill of a node without results. */
export const NO_DATA_COLOUR = "#e8edf3";

/**
 * The colour of a utilisation (0..1, clamped) on {@link UTILISATION_STOPS}, linearly between
 * stops, as `#rrggbb`; {@link NO_DATA_COLOUR} for null.
 */
export function utilisationColour(utilisation: number | null): string {
  if (utilisation === null || Number.isNaN(utilisation)) return NO_DATA_COLOUR;
  const position = Math.min(1, Math.max(0, utilisation)) * (UTILISATION_STOPS.length - 1);
  const index = Math.min(UTILISATION_STOPS.length - 2, Math.floor(position));
  const low = rgb(UTILISATION_STOPS[index] as string);
  const high = rgb(UTILISATION_STOPS[index + 1] as string);
  const t = position - index;
  return `#${low
    .map((channel, i) => Math.round(channel + ((high[i] as number) - channel) * t))
    .map((channel) => channel.toString(16).padStart(2, "0"))
    .join("")}`;
}

/** Whether text on `background` (`#rrggbb`) reads better in white than in black. */
export function needsLightText(background: string): boolean {
  const [r, g, b] = rgb(background) as [number, number, number];
  return 0.299 * r + 0.587 * g + 0.114 * b < 120;
}

function rgb(hex: string): number[] {
  return [1, 3, 5].map((start) => Number.parseInt(hex.slice(start, start + 2), 16));
}

/** Ten colours told apart at a glance (Tableau 10), for categories: kinds, an axis's values. */
export const CATEGORY_PALETTE: readonly string[] = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#bab0ac",
];

/**
 * The component kind a timeline track shows, from its id: `sip0.cube0.pe3.pe_gemm` -> `pe_gemm`,
 * `sip0.cube0.hbm#4` -> `hbm`, `sip0.cube0.noc.r0c1` -> `noc`, `sip0.cube0.ucie1` -> `ucie`.
 */
export function trackKind(track: string): string {
  const parts = track.replace(/#\d+$/, "").split(".");
  const last = parts[parts.length - 1] ?? track;
  if (/^r\d+c\d+$/.test(last) && parts.length >= 2) return parts[parts.length - 2] as string;
  return last.replace(/\d+$/, "");
}
