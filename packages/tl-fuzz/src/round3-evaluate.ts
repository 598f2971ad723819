import { columnMask, rowOffsets } from "./offsets.js";
import { blockCount, type Program, rowsIn, type Step } from "./program.js";
import * as ref from "./reference/index.js";

// The evaluator of the round-3 steps (round3-steps.ts), from packages/tl/README.md's Semantics:
// atomics ("atomicAdd ...", "atomics' order"), scatters ("store ... offsets") and what a later
// launch reads ("stores' order"). Blocks are evaluated in block order: the steps draw only what
// ends the same in any order of the programs.

/** An output as the evaluator holds it: its elements, row-major, written in place. */
export interface HeldOutput {
  readonly dtype: ref.Dtype;
  readonly shape: readonly [number, number];
  readonly data: Float64Array;
}

/** What a step of block `row0` sees. */
export interface BlockState {
  readonly rows: number;
  readonly row0: number;
  readonly inputs: readonly ref.RefTensor[];
  readonly outputs: readonly HeldOutput[];
  value(index: number): ref.RefTensor;
}

/** Elements `row0 .. row0 + rows` of a split `[R, 1]` input (a block's ids). */
function blockIds(input: ref.RefTensor, row0: number, rows: number): Float64Array {
  return input.data.subarray(row0, row0 + rows);
}

/**
 * Applies an `atomic` or `rowScatter` step of one block to its target; returns the atomic's old
 * values when they are the step's value (private rows), else null.
 */
export function evaluateRound3(
  step: Extract<Step, { kind: "atomic" | "rowScatter" }>,
  block: BlockState,
): ref.RefTensor | null {
  const { rows, row0, inputs, outputs } = block;
  const target = outputs[step.target] as HeldOutput;
  const [m, cols] = target.shape;
  const mask = step.on === null ? null : columnMask(rows, cols, step.on);
  const input = (index: number) => inputs[index] as ref.RefTensor;
  if (step.kind === "rowScatter") {
    const offsets = rowOffsets(blockIds(input(step.index), row0, rows), cols, input(step.columns).data);
    ref.scatter(target.data, block.value(step.x), offsets, mask);
    return null;
  }
  const globalRows = Array.from({ length: rows }, (_, r) => row0 + r);
  // Shared: row ids % M (ids >= 0: `mod` is the plain remainder), every column. Private: the
  // block's own rows, columns idx[j].
  const offsets =
    step.rows === "shared"
      ? rowOffsets(
          Array.from(
            step.index === null ? globalRows : blockIds(input(step.index), row0, rows),
            (id) => id % m,
          ),
          cols,
          Array.from({ length: cols }, (_, j) => j),
        )
      : rowOffsets(globalRows, cols, input(step.index as number).data);
  const val =
    typeof step.val === "number"
      ? block.value(step.val)
      : ref.full([rows, cols], step.val.scalar, target.dtype);
  const cmp = step.cmp === null ? null : ref.full([rows, cols], step.cmp, target.dtype);
  const old = ref.atomic(step.op, target.data, target.dtype, val, offsets, mask, cmp);
  return step.rows === "private" ? old : null;
}

/**
 * The second launch (the `gatherBack` steps), after every block of the first: block by block,
 * rows `ids[g] % S` of a first-launch output gathered into the block's rows of `result`.
 */
export function evaluateSecondLaunch(
  program: Program,
  inputs: readonly ref.RefTensor[],
  outputs: readonly HeldOutput[],
  write: (output: number, row: number, value: ref.RefTensor) => void,
): void {
  const steps = program.steps.flatMap((step) => (step.kind === "gatherBack" ? [step] : []));
  if (steps.length === 0) return;
  for (let b = 0; b < blockCount(program); b++) {
    const rows = rowsIn(program, "block", b);
    const row0 = b * program.blockRows;
    for (const step of steps) {
      const source = outputs[step.source] as HeldOutput;
      const [s, cols] = source.shape;
      const ids = blockIds(inputs[step.index] as ref.RefTensor, row0, rows);
      const offsets = rowOffsets(
        Array.from(ids, (id) => id % s),
        cols,
        Array.from({ length: cols }, (_, j) => j),
      );
      const mask = step.on === null ? null : columnMask(rows, cols, step.on);
      write(step.result, row0, ref.gather(source, offsets, mask, step.other));
    }
  }
}
