import { KbError } from "@kb/errors";
import { SeededRandom } from "./random.js";
import type { SweepAxis, SweepDesign } from "./spec.js";

/** A point of a design: one value per axis, by axis name, in the spec's axis order. */
export type AxisValues = Readonly<Record<string, unknown>>;

/** The grid of a range axis: min, min + step, ... up to max (within a millionth of a step). */
function rangeValues(name: string, axis: SweepAxis): readonly unknown[] {
  if (axis.values !== undefined) return axis.values;
  const range = axis.range as NonNullable<SweepAxis["range"]>;
  if (range.step === undefined) {
    throw new KbError("SWEEP_INVALID", `axes.${name}: a grid needs range.step (or values: [...]).`);
  }
  const count = Math.floor((range.max - range.min) / range.step + 1e-6) + 1;
  if (count > 100_000) {
    throw new KbError("SWEEP_INVALID", `axes.${name}: ${count} values in its range; raise range.step.`);
  }
  return Array.from({ length: count }, (_, index) => roundTo(range.min + index * range.step!, range));
}

/** A drawn number on its axis's lattice: a multiple of step from min, whole when integer. */
function roundTo(value: number, range: NonNullable<SweepAxis["range"]>): number {
  let rounded = value;
  if (range.step !== undefined) {
    const steps = Math.floor((range.max - range.min) / range.step + 1e-6);
    const k = Math.min(steps, Math.max(0, Math.round((value - range.min) / range.step)));
    // Rounded to 12 significant digits: 0.1 * 3 prints as 0.3, not 0.30000000000000004.
    rounded = Number((range.min + k * range.step).toPrecision(12));
  }
  return range.integer ? Math.round(rounded) : rounded;
}

/**
 * Every combination of the axes' values: the first axis changes slowest, the last fastest (as
 * nested loops in the spec's order). A range axis needs a step.
 */
export function gridPoints(axes: Readonly<Record<string, SweepAxis>>): AxisValues[] {
  let points: Record<string, unknown>[] = [{}];
  for (const [name, axis] of Object.entries(axes)) {
    const values = rangeValues(name, axis);
    points = points.flatMap((point) => values.map((value) => ({ ...point, [name]: value })));
  }
  return points;
}

/**
 * `count` points drawn independently: a value list uniformly, a range uniformly in [min, max]
 * (then put on its step and rounded when integer). Axes are drawn in the spec's order for each
 * point in turn, so a seed always names the same points.
 */
export function randomPoints(
  axes: Readonly<Record<string, SweepAxis>>,
  count: number,
  seed: number,
): AxisValues[] {
  const random = new SeededRandom(seed);
  return Array.from({ length: count }, () => {
    const point: Record<string, unknown> = {};
    for (const [name, axis] of Object.entries(axes)) {
      if (axis.values !== undefined) {
        point[name] = axis.values[random.below(axis.values.length)];
      } else {
        const range = axis.range as NonNullable<SweepAxis["range"]>;
        point[name] = roundTo(range.min + random.next() * (range.max - range.min), range);
      }
    }
    return point;
  });
}

/**
 * A Latin hypercube of `count` points: each axis is cut into `count` equal strata and every
 * stratum holds exactly one point. A range axis draws a value inside its point's stratum
 * (uniformly, then put on its step); a value list of k values gives stratum s the value
 * floor(s k / count), so each value is used count/k times (rounded) and the values are permuted
 * over the points independently of the other axes. Each axis gets its own permutation, drawn in
 * the spec's axis order.
 */
export function latinHypercubePoints(
  axes: Readonly<Record<string, SweepAxis>>,
  count: number,
  seed: number,
): AxisValues[] {
  const random = new SeededRandom(seed);
  const points: Record<string, unknown>[] = Array.from({ length: count }, () => ({}));
  for (const [name, axis] of Object.entries(axes)) {
    const strata = random.permutation(count);
    for (const [index, point] of points.entries()) {
      const stratum = strata[index] as number;
      if (axis.values !== undefined) {
        point[name] = axis.values[Math.floor((stratum * axis.values.length) / count)];
      } else {
        const range = axis.range as NonNullable<SweepAxis["range"]>;
        const fraction = (stratum + random.next()) / count;
        point[name] = roundTo(range.min + fraction * (range.max - range.min), range);
      }
    }
  }
  return points;
}

/** The points of a spec's design, before constraints and before duplicates are dropped. */
export function designPoints(axes: Readonly<Record<string, SweepAxis>>, design: SweepDesign): AxisValues[] {
  switch (design.kind) {
    case "grid":
      return gridPoints(axes);
    case "random":
      return randomPoints(axes, design.points, design.seed);
    case "lhs":
      return latinHypercubePoints(axes, design.points, design.seed);
  }
}
