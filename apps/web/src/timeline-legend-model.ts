import { CATEGORY_PALETTE, trackKind } from "./colour.js";

// The timeline's colours apart from drawing: one per component kind of a trace, told apart (the
// kinds of a trace in name order take the palette's colours in turn), and the legend that says so.

/**
 * Colours for kinds, in turn: {@link CATEGORY_PALETTE}'s ten, then ten more of Tableau 20 (a trace
 * of the shipped topologies has 12 to 16 kinds); past twenty they repeat.
 */
export const KIND_PALETTE: readonly string[] = [
  ...CATEGORY_PALETTE,
  "#a0cbe8",
  "#ffbe7d",
  "#8cd17d",
  "#b6992d",
  "#499894",
  "#ff9d9a",
  "#79706e",
  "#d37295",
  "#d4a6c8",
  "#d7b5a6",
];

/** One kind in the timeline's legend. */
export interface KindEntry {
  readonly kind: string;
  readonly colour: string;
  /** The trace's tracks of this kind. */
  readonly tracks: number;
}

/** The kinds of a trace's tracks (see `trackKind`) in name order, each with its colour and track count. */
export function kindLegend(tracks: readonly { readonly name: string }[]): KindEntry[] {
  const counts = new Map<string, number>();
  for (const track of tracks) {
    const kind = trackKind(track.name);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts.keys()].sort().map((kind, index) => ({
    kind,
    colour: KIND_PALETTE[index % KIND_PALETTE.length] as string,
    tracks: counts.get(kind) as number,
  }));
}

/** Each track's colour: its kind's in {@link kindLegend}. */
export function trackColours(tracks: readonly { readonly name: string }[]): string[] {
  const colours = new Map(kindLegend(tracks).map((entry) => [entry.kind, entry.colour]));
  return tracks.map((track) => colours.get(trackKind(track.name)) as string);
}
