import { blockOffsets, columnMask } from "./offsets.js";
import { blockCount, type Program, rowsIn, type ValueType } from "./program.js";
import * as ref from "./reference/index.js";
import { evaluateRound3, evaluateSecondLaunch } from "./round3-evaluate.js";
import { evaluateDotScaled } from "./scaled-steps.js";

/** The scheduler's default composite tile (pe_scheduler `tile_m/n/k` of the schema's defaults). */
export const DEFAULT_TILE: readonly [number, number, number] = [128, 128, 128];

/**
 * What `program` leaves in its outputs, computed by the independent evaluator (the semantics of
 * packages/tl/README.md, in f64): the kernel body run on every block of rows, in block order.
 */
export function evaluate(program: Program): ref.RefTensor[] {
  let wide = false;
  const inputs = program.inputs.map((input) => ref.tensor(input.values, input.shape, input.dtype));
  const outputs = program.outputs.map((output) => ({
    dtype: output.dtype,
    shape: output.shape,
    data:
      output.init === undefined
        ? new Float64Array(output.shape[0] * output.shape[1]).fill(Number.NaN)
        : Float64Array.from(ref.tensor(output.init, output.shape, output.dtype).data),
  }));
  const write = (index: number, row: number, value: ref.RefTensor) => {
    const output = outputs[index] as (typeof outputs)[number];
    const cols = output.shape[1];
    value.data.forEach((x, i) => {
      output.data[(row + Math.floor(i / cols)) * cols + (i % cols)] = x;
    });
  };
  for (let b = 0; b < blockCount(program); b++) {
    const rows = rowsIn(program, "block", b);
    const row0 = b * program.blockRows;
    const values: ref.RefTensor[] = [];
    const value = (index: number) => values[index] as ref.RefTensor;
    const input = (index: number) => inputs[index] as ref.RefTensor;
    program.steps.forEach((step, i) => {
      const type = program.types[i] as ValueType | null;
      switch (step.kind) {
        case "load": {
          const stored = program.inputs[step.input];
          values[i] =
            stored?.split === true
              ? ref.block(input(step.input), row0, step.col0, rows, step.cols)
              : input(step.input);
          return;
        }
        case "full":
          values[i] = ref.full(
            [rowsIn(program, (type as ValueType).rows, b), (type as ValueType).cols],
            step.value,
            (type as ValueType).dtype,
          );
          return;
        case "unary":
          values[i] = ref.unary(step.op, value(step.x));
          return;
        case "libdevice":
          values[i] = ref.libdevice(step.op, value(step.x));
          return;
        case "binary":
          values[i] = ref.binary(
            step.op,
            value(step.a),
            typeof step.b === "number" ? value(step.b) : step.b.scalar,
          );
          return;
        case "inplace":
          values[i] = ref.binary(step.op, value(step.acc), value(step.x));
          return;
        case "fma":
          values[i] = ref.fma(value(step.a), value(step.b), value(step.c));
          return;
        case "where":
          values[i] = ref.where(value(step.cond), value(step.a), value(step.b));
          return;
        case "clamp":
          values[i] = ref.clamp(value(step.x), step.lo, step.hi);
          return;
        case "reduce":
          values[i] = ref.reduce(step.op, value(step.x), step.axis);
          return;
        case "softmax":
          values[i] = ref.softmax(value(step.x), step.axis);
          return;
        case "scan":
          values[i] = ref.scan(step.op, value(step.x), step.axis);
          return;
        case "cast":
          values[i] = ref.cast(value(step.x), step.dtype);
          return;
        case "row": {
          const x = value(step.x);
          const [r, c] = x.shape as [number, number];
          values[i] = ref.view(x, step.which === "first" ? 0 : (r - 1) * c, [1, c]);
          return;
        }
        case "dot": {
          const weight = program.steps[step.b];
          const stored = weight?.kind === "load" ? program.inputs[weight.input] : undefined;
          const w = stored?.transposed === true ? ref.transpose(value(step.b)) : value(step.b);
          const t = type as ValueType;
          const acc =
            step.acc === "zeros"
              ? ref.zeros([rowsIn(program, t.rows, b), t.cols], t.dtype)
              : typeof step.acc === "number"
                ? value(step.acc)
                : undefined;
          values[i] = ref.dot(value(step.a), w, {
            ...(acc !== undefined ? { acc } : {}),
            ...(step.outDtype !== null ? { outDtype: step.outDtype } : {}),
          });
          return;
        }
        case "branch":
          values[i] = ref.unary(
            (value(step.x).data[0] as number) > 0 ? step.then : step.otherwise,
            value(step.y),
          );
          return;
        case "gather": {
          // README: element i of the tile is at base + offsets[i]; offsets (b * BR + r) * C + idx[j].
          const source = input(step.input);
          const idx = input(step.index).data;
          values[i] = ref.gather(source, blockOffsets(row0, rows, source.shape[1] as number, idx));
          return;
        }
        case "shape": {
          const a = value(step.a);
          const [r, c] = a.shape as [number, number];
          if (step.op === "join" || step.op === "cat") {
            const pair = step.op === "join" ? ref.join(a, value(step.b)) : ref.cat(a, value(step.b));
            values[i] = ref.reshape(pair, [r, 2 * c]);
            return;
          }
          const halves = ref.reshape(a, [r, c / 2, 2]);
          values[i] =
            step.op === "split"
              ? ref.split(halves)[step.half]
              : ref.reshape(ref.permute(halves, [0, 2, 1]), [r, c]);
          return;
        }
        case "maskedGather": {
          const source = input(step.input);
          const idx = input(step.index).data;
          const offsets = blockOffsets(row0, rows, source.shape[1] as number, idx);
          values[i] = ref.gather(source, offsets, columnMask(rows, idx.length, step.on), step.other);
          return;
        }
        case "scatter": {
          const idx = input(step.index).data;
          const target = outputs[step.output] as (typeof outputs)[number];
          const offsets = blockOffsets(row0, rows, idx.length, idx);
          if (step.on === null) {
            ref.scatter(target.data, value(step.x), offsets);
            return;
          }
          write(step.output, row0, value(step.x)); // the plain store first
          ref.scatter(target.data, value(step.x), offsets, columnMask(rows, idx.length, step.on));
          return;
        }
        case "wideLoad": {
          // README: element (r, c) at (row0 + r) * C + c where the mask (c < C) is on, else other.
          const source = input(step.input);
          const cols = source.shape[1] as number;
          const columns = Array.from({ length: step.block }, (_, j) => (j < cols ? j : 0));
          const mask = columnMask(rows, step.block, cols);
          values[i] = ref.gather(source, blockOffsets(row0, rows, cols, columns), mask, step.other);
          return;
        }
        case "bits":
          values[i] = ref.bits(
            step.op,
            value(step.a),
            step.b === null ? undefined : typeof step.b === "number" ? value(step.b) : step.b.scalar,
          );
          return;
        case "reduceAll": {
          // README: x flattened to [size] in row-major order, reduced along its one axis, [1, 1].
          const x = value(step.x);
          values[i] = ref.reduce(step.op, ref.view(x, 0, [1, x.data.length]), 1);
          return;
        }
        case "random": {
          const columns = Array.from({ length: step.cols }, (_, j) => j);
          values[i] = ref.random(step.op, step.seed, blockOffsets(row0, rows, step.cols, columns));
          return;
        }
        case "atomic":
        case "rowScatter": {
          const old = evaluateRound3(step, { rows, row0, inputs, outputs, value });
          if (old !== null) values[i] = old;
          return;
        }
        case "gatherBack":
          return; // in the second launch, below
        case "loadInto":
          values[i] = ref.block(input(step.input), row0, 0, rows, input(step.input).shape[1] as number);
          return;
        case "dotScaled":
          values[i] = evaluateDotScaled(program, step, value, rows);
          return;
        case "store": {
          const output = program.outputs[step.output];
          write(step.output, output?.rowsPerBlock === "block" ? row0 : b, value(step.x));
          return;
        }
        case "compositeGemm": {
          const stored = program.inputs[step.a];
          const a =
            stored?.transposed === true
              ? ref.transpose(input(step.a))
              : ref.block(input(step.a), row0, 0, rows, input(step.a).shape[1] as number);
          const storedB = program.inputs[step.b];
          const bMatrix = storedB?.transposed === true ? ref.transpose(input(step.b)) : input(step.b);
          const result = ref.compositeGemm(a, bMatrix, {
            tile: step.tile ?? DEFAULT_TILE,
            epilogue: step.epilogue,
            ...(step.outDtype !== null ? { outDtype: step.outDtype } : {}),
          });
          write(step.output, row0, result);
          return;
        }
        case "useConsumed":
          return; // refused by the run: check() expects the error instead of outputs
        case "compositeMath": {
          const sources = step.inputs.map((index) =>
            ref.block(input(index), row0, 0, rows, input(index).shape[1] as number),
          );
          write(
            step.output,
            row0,
            ref.compositeMath(step.op, sources, step.scalar === null ? [] : [step.scalar]),
          );
          return;
        }
      }
    });
    wide ||= values.some(pastExactRange);
  }
  evaluateSecondLaunch(program, inputs, outputs, write);
  if (wide || outputs.some(pastExactRange)) PAST_EXACT_RANGE.add(outputs);
  return outputs;
}

/** The outputs of programs whose 64-bit integer values left the evaluator's exact range. */
const PAST_EXACT_RANGE = new WeakSet<readonly ref.RefTensor[]>();

/** A 64-bit integer tensor holding a value f64 cannot hold exactly (|v| >= 2^53). */
function pastExactRange(tensor: ref.RefTensor | undefined): boolean {
  if (tensor === undefined || (tensor.dtype !== "i64" && tensor.dtype !== "u64")) return false;
  return tensor.data.some((x) => Math.abs(x) >= 2 ** 53);
}

/**
 * True when {@link evaluate} computed `outputs` through an i64 / u64 value of magnitude 2^53 or
 * more: the evaluator holds values in f64, so past that it is not exact where phase 2 is (its
 * BigInt path); the tester does not count a mismatch of such a program (see check.ts).
 */
export function pastEvaluatorRange(outputs: readonly ref.RefTensor[]): boolean {
  return PAST_EXACT_RANGE.has(outputs);
}
