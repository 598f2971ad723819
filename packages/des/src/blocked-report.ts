import type { BlockedProcess } from "./environment.js";

/** `  - process "consumer" waits on get from Store "inbox" (...)`, one line per process. */
export function formatBlocked(blocked: readonly BlockedProcess[]): string {
  return blocked.map(formatOne).join("\n");
}

/**
 * The blocked processes (`Environment.blocked()`) for a deadlock report of thousands of processes: grouped by kind (the name with
 * every number as `*`: `sip*.cube*.pe*.pe_dma#*`), and within a kind the processes that wait alike
 * (the same description once its numbers are `*`: idle workers on their own inboxes) counted on
 * one line with an example, rather than listed. The odd ones out come first: a kind's smaller
 * groups before its larger, and kinds whose processes do not all wait alike before the others.
 * With no two processes alike it is {@link formatBlocked}'s list.
 */
export function formatBlockedByKind(blocked: readonly BlockedProcess[]): string {
  const kinds = new Map<string, Map<string, BlockedProcess[]>>();
  for (const entry of blocked) {
    const kind = pattern(entry.name);
    let alike = kinds.get(kind);
    if (alike === undefined) {
      alike = new Map();
      kinds.set(kind, alike);
    }
    const key = pattern(entry.description);
    const group = alike.get(key);
    if (group === undefined) alike.set(key, [entry]);
    else group.push(entry);
  }
  const ordered = [...kinds].map(([kind, alike]) => ({
    kind,
    groups: [...alike.values()].sort((a, b) => a.length - b.length),
  }));
  ordered.sort((a, b) => Number(b.groups.length > 1) - Number(a.groups.length > 1));
  const lines: string[] = [];
  for (const { kind, groups } of ordered) {
    for (const group of groups) {
      const first = group[0] as BlockedProcess;
      lines.push(
        group.length === 1
          ? formatOne(first)
          : `  - ${group.length} processes "${kind}" wait alike, e.g. "${first.name}" on ${first.description}`,
      );
    }
  }
  return lines.join("\n");
}

function formatOne(entry: BlockedProcess): string {
  return `  - process "${entry.name}" waits on ${entry.description}`;
}

/** The text with every run of digits as `*`. */
function pattern(text: string): string {
  return text.replace(/\d+/g, "*");
}
