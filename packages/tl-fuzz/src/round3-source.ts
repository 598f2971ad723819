import type { Program, Step } from "./program.js";
import { blockRowsIndex, literal, q } from "./source-text.js";

// The source lines of the round-3 steps (round3-steps.ts): atomics, scatters to other blocks'
// rows, and gathers in a second launch of what the first one wrote.

type Round3Step = Extract<Step, { kind: "atomic" | "rowScatter" | "gatherBack" }>;

/** The kernel of the second launch (the `gatherBack` steps), after the first's. */
export const SECOND_KERNEL_NAME = "fuzzGatherBack";

/** `tl.atomicAdd` ... by op. */
const ATOMIC_CALLS = {
  add: "atomicAdd",
  max: "atomicMax",
  min: "atomicMin",
  xchg: "atomicXchg",
  cas: "atomicCas",
} as const;

/** The column mask `arange(0, cols) < on` as an option, or nothing. */
function maskOption(cols: number, on: number | null): string {
  return on === null ? "" : `, mask: await tl.lt(tl.arange(0, ${cols}), ${on})`;
}

/** A split i32 input's rows of the block, `[rows, 1]`. */
function blockIds(name: string): string {
  return `await tl.load(${name}.at(b * BR, 0), [rows, 1], "i32")`;
}

/** `rows * cols + columns`: element offsets of a `[rows, cols]` tile. */
function offsetsOf(rows: string, cols: number, columns: string): string {
  return `await tl.add(await tl.mul(${rows}, ${cols}), ${columns})`;
}

/** The source line of round-3 step `i`. */
export function round3Source(program: Program, step: Round3Step, i: number): string {
  const input = (index: number) => {
    const tensor = program.inputs[index];
    if (tensor === undefined) throw new Error(`step ${i}: no input ${index}`);
    return tensor;
  };
  const output = (index: number) => {
    const tensor = program.outputs[index];
    if (tensor === undefined) throw new Error(`step ${i}: no output ${index}`);
    return tensor;
  };
  const arangeRow = (cols: number) => `tl.expandDims(tl.arange(0, ${cols}), 0)`;
  switch (step.kind) {
    case "atomic": {
      const target = output(step.target);
      const [m, cols] = target.shape;
      const offsets =
        step.rows === "shared"
          ? offsetsOf(
              `await tl.mod(${step.index === null ? blockRowsIndex : blockIds(input(step.index).name)}, ${m})`,
              cols,
              arangeRow(cols),
            )
          : offsetsOf(
              blockRowsIndex,
              cols,
              `await tl.load(${input(step.index as number).name}, [1, ${cols}], "i32")`,
            );
      const val = typeof step.val === "number" ? `v${step.val}` : literal(step.val.scalar);
      const operands = step.cmp === null ? val : `${literal(step.cmp)}, ${val}`;
      const call = `tl.${ATOMIC_CALLS[step.op]}(${target.name}, ${operands}, { offsets: ${offsets}${maskOption(cols, step.on)} })`;
      return step.rows === "shared"
        ? `await ${call}; // shared: the old values depend on the order`
        : `const v${i} = await ${call};`;
    }
    case "rowScatter": {
      const target = output(step.target);
      const cols = target.shape[1];
      const columns = `await tl.load(${input(step.columns).name}, [1, ${cols}], "i32")`;
      const offsets = offsetsOf(blockIds(input(step.index).name), cols, columns);
      return `await tl.store(${target.name}, v${step.x}, { offsets: ${offsets}${maskOption(cols, step.on)} });`;
    }
    case "gatherBack": {
      const source = output(step.source);
      const result = output(step.result);
      const [s, cols] = source.shape;
      const offsets = offsetsOf(
        `await tl.mod(${blockIds(input(step.index).name)}, ${s})`,
        cols,
        arangeRow(cols),
      );
      const mask = step.on === null ? "" : `${maskOption(cols, step.on)}, other: ${literal(step.other)}`;
      return `await tl.store(${result.name}.at(b * BR, 0), await tl.load(${source.name}, [rows, ${cols}], ${q(source.dtype)}, { offsets: ${offsets}${mask} }));`;
    }
  }
}
