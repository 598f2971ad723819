// How kernbench-ts prints numbers: one definition for error messages (@kb/errors), `kb run`'s
// summary and verdicts (@kb/runtime, the CLI) and the `kb web` page. No float noise
// (`2048.9049999999997` never prints), no exponents for the magnitudes a run has, the same on every
// machine, and never a throw: a value of any magnitude (a 1e300 ns latency, a rate of 1e-290 B/s),
// NaN and Infinity print (`toFixed` throws past 100 decimals; these never ask for more than 20).

/** Decimals {@link formatFixed} prints at most; past these a number is printed with an exponent. */
const MAX_DECIMALS = 20;

/** `1234567` as `1,234,567` (the same on every machine, unlike toLocaleString). */
export function groupDigits(value: number): string {
  const [whole = "", fraction] = String(value).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/**
 * An instant of simulated time in ns, exactly, as messages print it (`at t=2048.905 ns`):
 * rounded to 3 decimals (picoseconds), without the float noise of sums, `-0` as `0`. For a
 * duration in a report use {@link formatNs}.
 */
export function formatSimTime(ns: number): string {
  if (!Number.isFinite(ns)) return String(ns);
  const rounded = Math.round(ns * 1000) / 1000;
  return String(rounded === 0 ? 0 : rounded);
}

/** A simulated duration in the unit that fits, 4 significant digits: `850 ns`, `12.35 µs`, `3.2 ms`. */
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

/**
 * A physical quantity with the SI prefix that fits, below 1 as well: `500 µJ`, `2.5 mW`, `20 W`,
 * `4.1 kJ` (4 significant digits; prefixes from f to E, 0 as `0 J`). Energy and power reports use it.
 */
export function formatQuantity(value: number, unit: string): string {
  const size = Math.abs(value);
  if (size === 0 || size >= 1 || !Number.isFinite(size)) return formatSi(value, unit);
  const prefixes = ["m", "µ", "n", "p", "f"];
  let scaled = value;
  let index = -1;
  while (Math.abs(scaled) < 1 && index < prefixes.length - 1) {
    scaled *= 1000;
    index++;
  }
  return `${formatNumber(scaled, 4)} ${prefixes[index]}${unit}`;
}

/** A fraction as a percentage with one decimal: `27.8%`. */
export function formatPercent(fraction: number): string {
  return `${formatFixed(fraction * 100, 1)}%`;
}

/** A ratio such as `1.234 x`; `-` when there is none. */
export function formatRatio(ratio: number | null): string {
  return ratio === null ? "-" : `${formatNumber(ratio, 4)} x`;
}

/**
 * `digits` significant digits, no float noise, no exponent from 1e-17 to 1e21 (outside, an
 * exponent: `1.235e-300`). NaN and Infinity print as such. Never throws.
 */
export function formatNumber(value: number, digits: number): string {
  if (value === 0 || !Number.isFinite(value)) return String(value);
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const decimals = Math.max(0, digits - 1 - magnitude);
  if (decimals > MAX_DECIMALS || magnitude >= 21) return String(Number(value.toPrecision(digits)));
  return String(Number(value.toFixed(decimals)));
}

/**
 * `value` without the float noise of sums: the nearest number of 12 significant digits
 * (`94045.54999999997` is `94045.55`, `0.1 * 3` is `0.3`), far below any figure's own precision.
 * Integers, 0, NaN and Infinity are returned as they are. For numbers a file keeps (a sweep's
 * metrics, a drawn axis value), where {@link formatNumber} is for text.
 */
export function withoutFloatNoise(value: number): number {
  if (!Number.isFinite(value) || Number.isInteger(value)) return value;
  return Number(value.toPrecision(12));
}

/**
 * `value.toFixed(decimals)` that takes any value: decimals are clamped to 0..20, NaN and
 * Infinity print as such, and from 1e21 up JavaScript's exponent form (`2.5e+300`). The one
 * fixed-decimals format of a computed value in a report (probe tables, percentages).
 */
export function formatFixed(value: number, decimals: number): string {
  if (!Number.isFinite(value)) return String(value);
  const clamped = Math.min(MAX_DECIMALS, Math.max(0, Math.trunc(decimals) || 0));
  return value.toFixed(clamped);
}

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

/** Bytes in the largest binary unit that divides them: `16 GiB`, `8 MiB`, `1000 B` (sizes a user wrote). */
export function formatExactBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (unit < units.length - 1 && value >= 1024 && value % 1024 === 0) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}
