import { trackKind } from "./colour.js";

// The timeline's rows apart from drawing: tracks grouped by SIP, cube or component kind under a
// header row each (collapsible), the tracks a filter keeps, and the busy figures rows state.

/** How the timeline groups its tracks. */
export type GroupBy = "cube" | "sip" | "kind" | "none";

/** The choices of the "Group by" control, in its order. */
export const GROUP_BY_CHOICES: readonly { readonly value: GroupBy; readonly label: string }[] = [
  { value: "cube", label: "cube" },
  { value: "sip", label: "SIP" },
  { value: "kind", label: "component kind" },
  { value: "none", label: "none" },
];

/** A track as the timeline knows it (see `WebTimeline.tracks`). */
export interface TrackName {
  readonly name: string;
  /** Its trace process: the cube (`sip0.cube1`), the SIP above cube level (`sip0`), or `host`. */
  readonly group: string;
}

/** One row of the timeline: a group's header, or a track. */
export type TimelineRow =
  | {
      readonly kind: "group";
      readonly key: string;
      /** The tracks of the group (shown or not). */
      readonly tracks: readonly number[];
      readonly collapsed: boolean;
    }
  | { readonly kind: "track"; readonly track: number };

/**
 * The group of a track: its cube (the trace's process), its SIP (`sip0` of `sip0.cube1.pe0...`;
 * the process for tracks outside any SIP, such as `host`), its component kind, or "" for none.
 */
export function groupOf(track: TrackName, by: GroupBy): string {
  switch (by) {
    case "cube":
      return track.group;
    case "sip":
      return /^sip\d+/.exec(track.name)?.[0] ?? track.group;
    case "kind":
      return trackKind(track.name);
    default:
      return "";
  }
}

/**
 * The rows of `tracks` grouped `by` (groups in order of their first track; tracks in their order
 * within a group): a header per group, then its tracks unless `collapsed` holds its key. With
 * `keep`, only those tracks (and the groups holding one) are rows. Without grouping, the tracks.
 */
export function timelineRows(
  tracks: readonly TrackName[],
  by: GroupBy,
  collapsed: ReadonlySet<string>,
  keep: ReadonlySet<number> | null = null,
): TimelineRow[] {
  const kept = tracks.map((_, index) => index).filter((index) => keep === null || keep.has(index));
  if (by === "none") return kept.map((track) => ({ kind: "track", track }));
  const groups = new Map<string, number[]>();
  for (const index of kept) {
    const key = groupOf(tracks[index] as TrackName, by);
    const members = groups.get(key);
    if (members === undefined) groups.set(key, [index]);
    else members.push(index);
  }
  const rows: TimelineRow[] = [];
  for (const [key, members] of groups) {
    const isCollapsed = collapsed.has(key);
    rows.push({ kind: "group", key, tracks: members, collapsed: isCollapsed });
    if (!isCollapsed) for (const track of members) rows.push({ kind: "track", track });
  }
  return rows;
}

/**
 * A group's busy bytes per column (0..255, as a window's `busy`): the mean over its `tracks` of
 * their busy bytes (`busy`: tracks x `width`, track-major); a column any track touched is at least 1.
 */
export function groupBusy(busy: Uint8Array, width: number, tracks: readonly number[]): Uint8Array {
  const out = new Uint8Array(width);
  if (tracks.length === 0) return out;
  for (let column = 0; column < width; column++) {
    let sum = 0;
    for (const track of tracks) sum += busy[track * width + column] ?? 0;
    out[column] = sum === 0 ? 0 : Math.max(1, Math.round(sum / tracks.length));
  }
  return out;
}

/** The busy fraction over a whole window of a row of busy bytes: the mean of its columns. */
export function windowShare(row: ArrayLike<number>): number {
  if (row.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += row[i] as number;
  return sum / (255 * row.length);
}

/** A track's row of busy bytes in a window's `busy` (tracks x `width`, track-major). */
export function trackBusy(busy: Uint8Array, width: number, track: number): Uint8Array {
  return busy.subarray(track * width, (track + 1) * width);
}
