import { formatNumber } from "@kb/errors";

// Byte counts as kb prints them: kb web's messages (a file larger than --max-input-size) and the
// CLI's summaries (`kb run`, `kb topology`), which import them from here through
// `@kb/web-ui/server`, so both print a size the same way.

/** Bytes: `512 B`, then binary units with 4 significant digits (`24 KiB`, `1.5 MiB`). */
export function formatByteCount(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? String(value) : formatNumber(value, 4)} ${units[unit]}`;
}

/** Bytes in the largest binary unit that divides them: `16 GiB`, `8 MiB`, `1000 B`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (unit < units.length - 1 && value >= 1024 && value % 1024 === 0) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}
