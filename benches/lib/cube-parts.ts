import type { BenchCheck, DeviceTensor, Grid, ReferenceContext, Simulator } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { type Span, splitEven } from "./split.js";

/**
 * The rows of a tensor one cube of the grid works on. Benches keep each cube's rows (and a copy
 * of shared operands) in that cube's HBM, so PE_DMA traffic stays on the cube's XBAR.
 */
export interface CubePart {
  readonly sip: number;
  readonly cube: number;
  /** Rows of the whole tensor this cube owns (count 0: the cube has no work). */
  readonly rows: Span;
}

/**
 * Splits `rows` over the grid's cubes, in grid order (SIPs outer, cubes inner: the order of
 * {@link cubeIndex}), in whole units of `granule` rows.
 */
export function cubeParts(grid: Grid, rows: number, granule = 1): CubePart[] {
  const spans = splitEven(rows, grid.sips.length * grid.cubes.length, granule);
  const parts: CubePart[] = [];
  for (const sip of grid.sips) {
    for (const cube of grid.cubes) {
      parts.push({ sip, cube, rows: spans[parts.length] as Span });
    }
  }
  return parts;
}

/** Inside a kernel: the index of the instance's cube in {@link cubeParts}' order. */
export function cubeIndex(tl: TL): number {
  return tl.programId(2) * tl.numPrograms(1) + tl.programId(1);
}

/** A copy of rows `span` of `tensor` (split along its first dimension). */
export function sliceRows(tensor: Tensor, span: Span): Tensor {
  const rows = tensor.shape[0] as number;
  const rowBytes = rows === 0 ? 0 : tensor.nbytes / rows;
  const shape = [span.count, ...tensor.shape.slice(1)];
  const bytes = tensor.bytes.slice(span.start * rowBytes, (span.start + span.count) * rowBytes);
  return new Tensor(shape, tensor.dtype, bytes);
}

/** Copies each cube's rows of `host` to that cube's HBM (timed); null for a cube without rows. */
export async function uploadRows(
  sim: Simulator,
  host: Tensor,
  parts: readonly CubePart[],
  name: string,
): Promise<(DeviceTensor | null)[]> {
  const out: (DeviceTensor | null)[] = [];
  for (const part of parts) {
    out.push(
      part.rows.count === 0
        ? null
        : await sim.toDevice(sliceRows(host, part.rows), {
            sip: part.sip,
            cube: part.cube,
            name: partName(name, part),
          }),
    );
  }
  return out;
}

/** Copies all of `host` to the HBM of every cube that has rows (timed); null for the others. */
export async function uploadCopies(
  sim: Simulator,
  host: Tensor,
  parts: readonly CubePart[],
  name: string,
): Promise<(DeviceTensor | null)[]> {
  const out: (DeviceTensor | null)[] = [];
  for (const part of parts) {
    out.push(
      part.rows.count === 0
        ? null
        : await sim.toDevice(host, { sip: part.sip, cube: part.cube, name: partName(name, part) }),
    );
  }
  return out;
}

/**
 * Allocates each cube's rows of an output of `shape` (the whole tensor's; rows first) in that
 * cube's HBM; null for a cube without rows.
 */
export function emptyRows(
  sim: Simulator,
  shape: readonly number[],
  dtype: Dtype,
  parts: readonly CubePart[],
  name: string,
): (DeviceTensor | null)[] {
  return parts.map((part) =>
    part.rows.count === 0
      ? null
      : sim.empty([part.rows.count, ...shape.slice(1)], dtype, {
          sip: part.sip,
          cube: part.cube,
          name: partName(name, part),
        }),
  );
}

/**
 * The checks of an output split over cubes: one per cube with rows, named `NAME.sipS.cubeC`, each
 * comparing that cube's tensor with its rows of `reference` (computed once, on first use, with
 * that check's context: its progress is the first check's). Together they cover every element of
 * the output.
 */
export function rowChecks(
  name: string,
  parts: readonly CubePart[],
  actuals: readonly (DeviceTensor | null)[],
  reference: (context?: ReferenceContext) => Tensor,
): Record<string, BenchCheck> {
  const whole = once(reference);
  const checks: Record<string, BenchCheck> = {};
  parts.forEach((part, i) => {
    const actual = actuals[i];
    if (actual === null || actual === undefined) return;
    checks[partName(name, part)] = { actual, reference: (context) => sliceRows(whole(context), part.rows) };
  });
  return checks;
}

/** `f` evaluated on the first call only (with that call's arguments). */
export function once<A extends unknown[], T>(f: (...args: A) => T): (...args: A) => T {
  let done = false;
  let value: T;
  return (...args: A) => {
    if (!done) {
      value = f(...args);
      done = true;
    }
    return value;
  };
}

/** `A.sip0.cube1`. */
function partName(name: string, part: CubePart): string {
  return `${name}.sip${part.sip}.cube${part.cube}`;
}
