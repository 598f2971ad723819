// The program a raw choice list builds, while it is being built: its tensors, steps and live
// values, and the helpers every step family draws with (new inputs and outputs, operands of a
// type, exact scalars). build.ts draws the round-1 steps with it, round2-steps.ts and
// round3-steps.ts the later ones.

import { pick } from "./pick.js";
import {
  blockCount,
  DTYPES,
  type Dtype,
  type Exact,
  type InputTensor,
  isFloat,
  type OutputTensor,
  type Step,
  type ValueType,
} from "./program.js";

/** The numbers a generator draws for one program; `buildProgram` makes them a valid program. */
export interface RawProgram {
  /** Seed of the input values. */
  readonly seed: number;
  readonly rows: number;
  readonly blockRows: number;
  readonly pes: number;
  readonly persistent: boolean;
  /** Inputs may hold NaN, infinities and -0. */
  readonly special: boolean;
  readonly steps: readonly RawStep[];
}

/** One step's choices: a kind and four numbers whose meaning depends on it. */
export interface RawStep {
  readonly kind: number;
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly d: number;
}

/** Column counts: ones, primes and numbers that are not multiples of a tile. */
export const COLS = [1, 2, 3, 5, 7, 8, 13, 16, 17, 33];
/** Scalars that keep values exact (multiples of 1/4). */
const SCALARS = [0.5, -1, 2, 0.25, -0.5, 1.5, 0, -2];
const INT_SCALARS = [1, -1, 2, 0, 3, -3];

/** A small deterministic generator for the input values (no Math.random: runs are reproducible). */
export function generator(seed: number): () => number {
  let state = (Math.trunc(seed) >>> 0) ^ 0x9e3779b9;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const NICE_FLOAT: Exact = { grain: -3, bound: 4 };
const NICE_INT: Exact = { grain: 0, bound: 8 };

/** The program under construction and the helpers that grow it (see {@link buildContext}). */
export type BuildContext = ReturnType<typeof buildContext>;

/** An empty program of the raw choices' rows, blocks and grid, and the helpers that grow it. */
export function buildContext(raw: RawProgram) {
  const rows = 1 + pick(raw.rows, 40);
  const blockRows = 1 + pick(raw.blockRows, rows);
  const blocks = blockCount({ rows, blockRows });
  const persistent = raw.persistent || blocks > 8;
  const pes = persistent ? 1 + pick(raw.pes, 4) : blocks;
  const random = generator(raw.seed);
  const inputs: InputTensor[] = [];
  const outputs: OutputTensor[] = [];
  const steps: Step[] = [];
  const types: (ValueType | null)[] = [];
  /** Values that may still be read (an in-place op's accumulator and its aliases are not). */
  const live = new Set<number>();
  /** The TCM bytes each value names: views share their tensor's, in-place results their target's. */
  const storage = new Map<number, number>();
  /** An in-place write into `target`'s bytes: every other value naming them is stale now. */
  const overwrite = (target: number) => {
    const bytes = storage.get(target);
    for (const value of [...live]) if (storage.get(value) === bytes) live.delete(value);
  };

  const newInput = (
    shape: readonly [number, number],
    dtype: Dtype,
    split: boolean,
    transposed: boolean,
  ): number => {
    const values: number[] = [];
    const size = shape[0] * shape[1];
    for (let i = 0; i < size; i++) {
      const u = random();
      let value = isFloat(dtype) ? Math.round((u * 2 - 1) * 32) / 8 : Math.round((u * 2 - 1) * 8);
      if (raw.special && isFloat(dtype) && random() < 0.08) {
        value = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0][
          pick(random() * 4, 4)
        ] as number;
      }
      values.push(value);
    }
    inputs.push({ name: `X${inputs.length}`, shape, dtype, split, transposed, values });
    return inputs.length - 1;
  };
  const newOutput = (cols: number, dtype: Dtype, rowsPerBlock: "block" | 1): number => {
    outputs.push({
      name: `O${outputs.length}`,
      shape: [rowsPerBlock === "block" ? rows : blocks, cols],
      dtype,
      rowsPerBlock,
    });
    return outputs.length - 1;
  };
  const push = (step: Step, type: ValueType | null, aliases: number | null = null): number => {
    steps.push(step);
    types.push(type);
    const index = steps.length - 1;
    if (type !== null) {
      live.add(index);
      storage.set(index, aliases === null ? index : (storage.get(aliases) as number));
    }
    return index;
  };
  const values = (filter: (type: ValueType) => boolean = () => true): number[] =>
    [...live].filter((i) => filter(types[i] as ValueType));
  const sameType = (x: ValueType) => (type: ValueType) =>
    type.rows === x.rows && type.cols === x.cols && type.dtype === x.dtype;
  const scalarFor = (dtype: Dtype, n: number) =>
    isFloat(dtype)
      ? (SCALARS[pick(n, SCALARS.length)] as number)
      : (INT_SCALARS[pick(n, INT_SCALARS.length)] as number);
  const exactType = (dtype: Dtype) => (isFloat(dtype) ? NICE_FLOAT : NICE_INT);

  /** Values a kernel may read in phase 1 (`.data`): loads of host data, not yet overwritten. */
  const known = new Set<number>();
  /** A block-split input loaded whole: the first value of most programs. */
  const loadNew = (cols: number, dtype: Dtype): number => {
    const input = newInput([rows, cols], dtype, true, false);
    const value = push(
      { kind: "load", input, col0: 0, cols },
      { rows: "block", cols, dtype, exact: exactType(dtype) },
    );
    known.add(value);
    return value;
  };

  /** A block-split input drawn by `choice.b`, or null after loading a new one (there is none yet). */
  const splitInputOrLoad = (choice: RawStep): number | null => {
    const splitInputs = inputs.map((input, i) => (input.split ? i : -1)).filter((i) => i >= 0);
    if (splitInputs.length > 0) return splitInputs[pick(choice.b, splitInputs.length)] as number;
    loadNew(COLS[pick(choice.b, COLS.length)] as number, DTYPES[pick(choice.c, DTYPES.length)] as Dtype);
    return null;
  };

  /** An i32 host input [1, k] read whole (a gather's or scatter's column indices). */
  const indexInput = (idx: number[]): number => {
    inputs.push({
      name: `X${inputs.length}`,
      shape: [1, idx.length],
      dtype: "i32",
      split: false,
      transposed: false,
      values: idx,
    });
    return inputs.length - 1;
  };

  return {
    rows,
    blockRows,
    blocks,
    persistent,
    pes,
    random,
    inputs,
    outputs,
    steps,
    types,
    live,
    overwrite,
    newInput,
    newOutput,
    push,
    values,
    sameType,
    scalarFor,
    exactType,
    known,
    loadNew,
    splitInputOrLoad,
    indexInput,
  };
}
