/** A contiguous range of items: `[start, start + count)`. */
export interface Span {
  readonly start: number;
  readonly count: number;
}

/**
 * Splits `total` items into `parts` contiguous spans, in whole units of `granule` items: each
 * part gets `floor(units / parts)` or one more unit (the first parts get the extra ones), where
 * `units = ceil(total / granule)`; the part holding the last unit may be short, and parts past
 * the last unit get `count` 0 (a grid bigger than the work leaves PEs idle).
 *
 * **When to use**: dividing the rows of a matrix (or the elements of a vector) over the cubes of
 * a grid and over the PEs of a cube; `granule` keeps whole tiles together.
 *
 * Throws a `RangeError` for a negative or fractional `total`, or `parts` / `granule` below 1.
 */
export function splitEven(total: number, parts: number, granule = 1): Span[] {
  if (!Number.isInteger(total) || total < 0) throw new RangeError(`splitEven: total ${total} is not >= 0.`);
  if (!Number.isInteger(parts) || parts < 1) throw new RangeError(`splitEven: parts ${parts} is not >= 1.`);
  if (!Number.isInteger(granule) || granule < 1) {
    throw new RangeError(`splitEven: granule ${granule} is not >= 1.`);
  }
  const units = Math.ceil(total / granule);
  const base = Math.floor(units / parts);
  const extra = units % parts;
  const spans: Span[] = [];
  let unit = 0;
  for (let part = 0; part < parts; part++) {
    const take = base + (part < extra ? 1 : 0);
    const start = Math.min(total, unit * granule);
    const end = Math.min(total, (unit + take) * granule);
    spans.push({ start, count: end - start });
    unit += take;
  }
  return spans;
}

/** Part `index` of {@link splitEven}`(total, parts, granule)`, without building the others' spans. */
export function spanOf(total: number, parts: number, index: number, granule = 1): Span {
  const units = Math.ceil(total / granule);
  const base = Math.floor(units / parts);
  const extra = units % parts;
  const first = index * base + Math.min(index, extra);
  const take = base + (index < extra ? 1 : 0);
  const start = Math.min(total, first * granule);
  return { start, count: Math.min(total, (first + take) * granule) - start };
}
