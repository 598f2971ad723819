// Number formats of the page and of `kb run`'s summary (apps/cli/src/format-run.ts imports them
// as `@kb/web-ui/format`): one definition of how times and rates print.

/** Simulated time in the unit that fits: `850 ns`, `12.35 µs`, `3.2 ms`, `1.5 s`. */
export function formatNs(ns: number): string {
  const size = Math.abs(ns);
  if (size < 1e3) return `${formatNumber(ns, 4)} ns`;
  if (size < 1e6) return `${formatNumber(ns / 1e3, 4)} µs`;
  if (size < 1e9) return `${formatNumber(ns / 1e6, 4)} ms`;
  return `${formatNumber(ns / 1e9, 4)} s`;
}

/** A value with an SI prefix: `819.2 GB/s`, `4.096 TFLOP/s` (4 significant digits). */
export function formatSi(value: number, unit: string): string {
  const prefixes = ["", "k", "M", "G", "T", "P", "E"];
  let scaled = value;
  let index = 0;
  while (Math.abs(scaled) >= 1000 && index < prefixes.length - 1) {
    scaled /= 1000;
    index++;
  }
  return `${formatNumber(scaled, 4)} ${prefixes[index]}${unit}`;
}

/** A fraction as a percentage with one decimal: `27.8%`. */
export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

/** A ratio such as `1.234 x`; `-` when there is none. */
export function formatRatio(ratio: number | null): string {
  return ratio === null ? "-" : `${formatNumber(ratio, 4)} x`;
}

/** `digits` significant digits, no float noise, no exponent. */
export function formatNumber(value: number, digits: number): string {
  if (value === 0 || !Number.isFinite(value)) return String(value);
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const decimals = Math.max(0, digits - 1 - magnitude);
  return String(Number(value.toFixed(decimals)));
}

/** Text made safe for the HTML of chart tooltips. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
