import { formatFixed } from "@kb/errors";

/** `0x1000` for a device address; anything that is not an integer >= 0 as `String` shows it. */
export function formatAddress(address: number): string {
  return typeof address === "number" && Number.isSafeInteger(address) && address >= 0
    ? `0x${address.toString(16)}`
    : String(address);
}

/** `[0x1000, 0x1040)`: the range of `bytes` bytes from `start`, in hex (`?` for a non-number length). */
export function formatRange(start: number, bytes: number): string {
  return `[${formatAddress(start)}, ${typeof bytes === "number" ? formatAddress(start + bytes) : "?"})`;
}

/** `3145728 bytes (3 MiB)`: exact bytes, plus KiB, MiB or GiB from 1 KiB on (`4096 GiB`, not TiB). */
export function formatBytes(bytes: number): string {
  const units = ["KiB", "MiB", "GiB"];
  let unit = "";
  let value = bytes;
  for (const name of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = name;
  }
  if (unit === "") return `${bytes} bytes`;
  const shown = Number.isInteger(value) ? String(value) : formatFixed(value, 2);
  return `${bytes} bytes (${shown} ${unit})`;
}

/** `formatBytes` of a positive integer; anything else as `<value> bytes`. */
export function describeBytes(bytes: number): string {
  return typeof bytes === "number" && Number.isSafeInteger(bytes) && bytes > 0
    ? formatBytes(bytes)
    : `${String(bytes)} bytes`;
}
