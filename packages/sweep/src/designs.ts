import { groupDigits, KbError, withoutFloatNoise } from "@kb/errors";
import { SWEEP_LIMITS } from "./limits.js";
import { SeededRandom } from "./random.js";
import type { SweepAxis, SweepDesign } from "./spec.js";

/** A point of a design: one value per axis, by axis name, in the spec's axis order. */
export type AxisValues = Readonly<Record<string, unknown>>;

/** Values of an axis on a grid: its list, or its range's lattice min, min + step, ... up to max. */
function axisLength(axis: SweepAxis): number {
  if (axis.values !== undefined) return axis.values.length;
  const range = axis.range as NonNullable<SweepAxis["range"]>;
  if (range.step === undefined) return Number.POSITIVE_INFINITY;
  return Math.floor((range.max - range.min) / range.step + 1e-6) + 1;
}

/** The grid of a range axis: min, min + step, ... up to max (within a millionth of a step). */
function rangeValues(axis: SweepAxis): readonly unknown[] {
  if (axis.values !== undefined) return axis.values;
  const range = axis.range as NonNullable<SweepAxis["range"]>;
  return Array.from({ length: axisLength(axis) }, (_, index) =>
    roundTo(range.min + index * range.step!, range),
  );
}

/**
 * The points a design gives before constraints and duplicates, counted without making them: a
 * grid's product of its axes' lengths (infinite for a range without a step), a random or
 * Latin-hypercube design's `points`.
 */
export function designSize(axes: Readonly<Record<string, SweepAxis>>, design: SweepDesign): number {
  if (design.kind !== "grid") return design.points;
  return Object.values(axes).reduce((product, axis) => product * axisLength(axis), 1);
}

/** A grid's axes and their lengths, as messages print them: `hbm 3 x pes 1,000`. */
export function gridShape(axes: Readonly<Record<string, SweepAxis>>): string {
  return Object.entries(axes)
    .map(([name, axis]) => `${name} ${groupDigits(axisLength(axis))}`)
    .join(" x ");
}

/**
 * What is wrong with a design's size, or `undefined` when it is within
 * {@link SWEEP_LIMITS}.maxDesignPoints: how many points, the limit and how to narrow it (or, for
 * a grid, the range axis without a step, which has no count).
 */
export function designSizeProblem(
  axes: Readonly<Record<string, SweepAxis>>,
  design: SweepDesign,
): string | undefined {
  if (design.kind === "grid") {
    const stepless = Object.entries(axes).find(([, axis]) => axisLength(axis) === Number.POSITIVE_INFINITY);
    if (stepless !== undefined) return `axes.${stepless[0]}: a grid needs range.step (or values: [...]).`;
  }
  const size = designSize(axes, design);
  const limit = SWEEP_LIMITS.maxDesignPoints;
  if (size <= limit) return undefined;
  if (design.kind !== "grid") {
    return `design: ${groupDigits(size)} points, more than the ${groupDigits(limit)} a sweep plans and runs; lower design.points.`;
  }
  return `design: the grid has ${groupDigits(size)} points (${gridShape(axes)}), more than the ${groupDigits(limit)} a sweep plans and runs; give the axes fewer values (a larger range.step), or sample the space with design: { kind: lhs, points: N }.`;
}

/** A drawn number on its axis's lattice: a multiple of step from min, whole when integer. */
function roundTo(value: number, range: NonNullable<SweepAxis["range"]>): number {
  let rounded = value;
  if (range.step !== undefined) {
    const steps = Math.floor((range.max - range.min) / range.step + 1e-6);
    const k = Math.min(steps, Math.max(0, Math.round((value - range.min) / range.step)));
    // 0.1 * 3 is 0.3 on the lattice, not 0.30000000000000004.
    rounded = withoutFloatNoise(range.min + k * range.step);
  }
  return range.integer ? Math.round(rounded) : rounded;
}

/**
 * Every combination of the axes' values: the first axis changes slowest, the last fastest (as
 * nested loops in the spec's order). A range axis needs a step; a grid of more than
 * {@link SWEEP_LIMITS}.maxDesignPoints is a `SWEEP_INVALID` error before any point is made.
 */
export function gridPoints(axes: Readonly<Record<string, SweepAxis>>): AxisValues[] {
  const problem = designSizeProblem(axes, { kind: "grid" });
  if (problem !== undefined) throw new KbError("SWEEP_INVALID", problem);
  let points: Record<string, unknown>[] = [{}];
  for (const [name, axis] of Object.entries(axes)) {
    const values = rangeValues(axis);
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

/**
 * The points of a spec's design, before constraints and before duplicates are dropped. A design
 * larger than {@link SWEEP_LIMITS}.maxDesignPoints is a `SWEEP_INVALID` error, found by counting
 * before any point is made.
 */
export function designPoints(axes: Readonly<Record<string, SweepAxis>>, design: SweepDesign): AxisValues[] {
  const problem = designSizeProblem(axes, design);
  if (problem !== undefined) throw new KbError("SWEEP_INVALID", problem);
  switch (design.kind) {
    case "grid":
      return gridPoints(axes);
    case "random":
      return randomPoints(axes, design.points, design.seed);
    case "lhs":
      return latinHypercubePoints(axes, design.points, design.seed);
  }
}
