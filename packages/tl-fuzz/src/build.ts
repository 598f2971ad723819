import { buildContext, COLS, type RawProgram } from "./build-context.js";
import { binaryExact, exactOfScalar } from "./exact.js";
import { pick } from "./pick.js";
import {
  BINARY_OPS,
  CAST_DTYPES,
  DTYPES,
  type Dtype,
  type EpilogueStep,
  type Exact,
  FLOAT_DTYPES,
  type InputTensor,
  isFloat,
  type Program,
  UNARY_OPS,
  type ValueType,
} from "./program.js";
import { LIBDEVICE_OPS, type LibdeviceOp, SCAN_OPS, type ScanOp } from "./reference/index.js";
import { isNarrow } from "./reference/narrow-float.js";
import { drawRound2 } from "./round2-steps.js";
import { drawRound3 } from "./round3-steps.js";
import { drawDotScaled, SCALED_KIND } from "./scaled-steps.js";

export type { RawProgram, RawStep } from "./build-context.js";

/** K (the GEMM's inner dimension) of dots and composites. */
const KS = [1, 2, 3, 5, 8, 16, 17, 32];
/** Epilogue steps that keep an accumulator exact (allowed at `k_tile` scope). */
const EXACT_EPILOGUE: readonly EpilogueStep[] = [
  { op: "relu", scope: "k_tile" },
  { op: "abs", scope: "k_tile" },
  { op: "mul", scope: "k_tile", scalar: 0.5 },
  { op: "add", scope: "k_tile", scalar: -1 },
  { op: "maximum", scope: "k_tile", scalar: 0.25 },
  { op: "minimum", scope: "k_tile", scalar: 2 },
];

/** The kind of a `tl.cumsum` / `tl.cumprod` step (after dotScaled's 30). */
export const SCAN_KIND = 31;
/** Step kinds a raw step picks from (`RawStep.kind` modulo this). */
export const STEP_KINDS = 32;
/** The kind of a use of an accumulator an earlier dot consumed (the run must refuse it; kinds 20-26: round2-steps.ts, 27-29: round3-steps.ts, 30: scaled-steps.ts, 31: a scan, below). */
const USE_CONSUMED = 19;
/** Kinds that need no earlier value: a load and the composites. */
const STANDALONE = new Set([0, 14, 15, 17, SCALED_KIND]);
const COMPOSITE_MATH_OPS = [...UNARY_OPS, ...BINARY_OPS, "sum", "max", "min", "softmax"] as const;

/** Builds the program the raw choices describe. Deterministic; never throws for any raw input. */
export function buildProgram(raw: RawProgram): Program {
  const ctx = buildContext(raw);
  const {
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
  } = ctx;
  /** Dots with an accumulator (`tl.zeros` or an earlier value): each consumed it. */
  const accumulated: number[] = [];
  /** A step the run must refuse was added: the kernel stops there. */
  let refused = false;
  for (const choice of raw.steps) {
    if (refused) break;
    const kind = pick(choice.kind, STEP_KINDS);
    const existing = values();
    if (existing.length === 0 && !STANDALONE.has(kind)) {
      loadNew(COLS[pick(choice.b, COLS.length)] as number, DTYPES[pick(choice.c, DTYPES.length)] as Dtype);
      continue;
    }
    const x = existing[pick(choice.a, Math.max(1, existing.length))] as number;
    const tx = types[x] as ValueType;
    // A use of a consumed accumulator before any dot consumed one: a dot with one first.
    const dotFirst = kind === USE_CONSUMED && accumulated.length === 0;
    switch (dotFirst ? 12 : kind) {
      case 0: {
        const splitInputs = inputs.map((input, i) => (input.split ? i : -1)).filter((i) => i >= 0);
        if (splitInputs.length === 0 || pick(choice.a, 3) === 0) {
          loadNew(
            COLS[pick(choice.b, COLS.length)] as number,
            DTYPES[pick(choice.c, DTYPES.length)] as Dtype,
          );
        } else {
          // A column slice of an input already loaded: a strided load.
          const input = splitInputs[pick(choice.b, splitInputs.length)] as number;
          const { shape, dtype } = inputs[input] as InputTensor;
          const col0 = pick(choice.c, shape[1]);
          const cols = 1 + pick(choice.d, shape[1] - col0);
          known.add(
            push(
              { kind: "load", input, col0, cols },
              { rows: "block", cols, dtype, exact: exactType(dtype) },
            ),
          );
        }
        break;
      }
      case 1: {
        // An elementwise op with a constant tensor (tl.full) of the same type.
        const value = scalarFor(tx.dtype, choice.c);
        const full = push({ kind: "full", like: x, value }, { ...tx, exact: exactOfScalar(tx.dtype, value) });
        const op = BINARY_OPS[pick(choice.b, BINARY_OPS.length)] as (typeof BINARY_OPS)[number];
        push(
          { kind: "binary", op, a: x, b: full },
          { ...tx, exact: binaryExact(op, tx.exact, exactOfScalar(tx.dtype, value)) },
        );
        break;
      }
      case 2: {
        // The unary ops, then the libdevice calls (tl.asin, ...).
        const which = pick(choice.b, UNARY_OPS.length + LIBDEVICE_OPS.length);
        const op = UNARY_OPS[which];
        if (op === undefined) {
          const call = LIBDEVICE_OPS[which - UNARY_OPS.length] as LibdeviceOp;
          push({ kind: "libdevice", op: call, x }, { ...tx, exact: null });
          break;
        }
        push({ kind: "unary", op, x }, { ...tx, exact: op === "abs" || op === "relu" ? tx.exact : null });
        break;
      }
      case 3: {
        const op = BINARY_OPS[pick(choice.b, BINARY_OPS.length)] as (typeof BINARY_OPS)[number];
        const partners = values(sameType(tx));
        if (pick(choice.c, 3) === 0 || partners.length === 0) {
          const scalar = scalarFor(tx.dtype, choice.d);
          push(
            { kind: "binary", op, a: x, b: { scalar } },
            { ...tx, exact: binaryExact(op, tx.exact, exactOfScalar(tx.dtype, scalar)) },
          );
        } else {
          const y = partners[pick(choice.d, partners.length)] as number;
          push(
            { kind: "binary", op, a: x, b: y },
            { ...tx, exact: binaryExact(op, tx.exact, (types[y] as ValueType).exact) },
          );
        }
        break;
      }
      case 4: {
        // An in-place op ({ out: acc }): the accumulator is not read again.
        const partners = values(sameType(tx)).filter((y) => y !== x);
        if (partners.length === 0) break;
        const y = partners[pick(choice.c, partners.length)] as number;
        const op = BINARY_OPS[pick(choice.b, BINARY_OPS.length)] as (typeof BINARY_OPS)[number];
        overwrite(x);
        push(
          { kind: "inplace", op, acc: x, x: y },
          { ...tx, exact: binaryExact(op, tx.exact, (types[y] as ValueType).exact) },
          x,
        );
        break;
      }
      case 5: {
        const partners = values(sameType(tx));
        const b = partners[pick(choice.b, partners.length)] as number;
        const c = partners[pick(choice.c, partners.length)] as number;
        const product = binaryExact("mul", tx.exact, (types[b] as ValueType).exact);
        push(
          { kind: "fma", a: x, b, c },
          { ...tx, exact: binaryExact("add", product, (types[c] as ValueType).exact) },
        );
        break;
      }
      case 6: {
        const partners = values(sameType(tx));
        const a = partners[pick(choice.b, partners.length)] as number;
        const b = partners[pick(choice.c, partners.length)] as number;
        push(
          { kind: "where", cond: x, a, b },
          {
            ...tx,
            exact: binaryExact("maximum", (types[a] as ValueType).exact, (types[b] as ValueType).exact),
          },
        );
        break;
      }
      case 7: {
        const lo = scalarFor(tx.dtype, choice.b);
        const hi = lo + Math.abs(scalarFor(tx.dtype, choice.c));
        push({ kind: "clamp", x, lo, hi }, { ...tx, exact: tx.exact });
        break;
      }
      case 8: {
        const op = (["sum", "max", "min"] as const)[pick(choice.b, 3)] as "sum" | "max" | "min";
        const axis = pick(choice.c, 2) as 0 | 1;
        const length = axis === 0 ? (tx.rows === "block" ? blockRows : tx.rows) : tx.cols;
        const exact =
          tx.exact === null
            ? null
            : op === "sum"
              ? { grain: tx.exact.grain, bound: tx.exact.bound * length }
              : tx.exact;
        push(
          { kind: "reduce", op, x, axis },
          { rows: axis === 0 ? 1 : tx.rows, cols: axis === 1 ? 1 : tx.cols, dtype: tx.dtype, exact },
        );
        break;
      }
      case 9:
        push({ kind: "softmax", x, axis: pick(choice.b, 2) as 0 | 1 }, { ...tx, exact: null });
        break;
      case SCAN_KIND: {
        // tl.cumsum / tl.cumprod along either axis: a cumsum stays exact as a sum of the line
        // does; a product's grain and bound are not tracked (integers wrap, exactly).
        const op = SCAN_OPS[pick(choice.b, SCAN_OPS.length)] as ScanOp;
        const axis = pick(choice.c, 2) as 0 | 1;
        const length = axis === 0 ? (tx.rows === "block" ? blockRows : tx.rows) : tx.cols;
        const exact =
          op === "cumsum" && tx.exact !== null
            ? { grain: tx.exact.grain, bound: tx.exact.bound * length }
            : null;
        push({ kind: "scan", op, x, axis }, { ...tx, exact });
        break;
      }
      case 10: {
        const dtype = CAST_DTYPES[pick(choice.b, CAST_DTYPES.length)] as Dtype;
        // To an integer: rounded to whole numbers (exact with grain 0, if it was bounded). To fp8
        // or fp4: rounded to a multiple of a coarser power of two (the grain holds), at most twice
        // the magnitude.
        const exact =
          tx.exact === null
            ? null
            : isNarrow(dtype)
              ? { grain: tx.exact.grain, bound: 2 * tx.exact.bound }
              : isFloat(dtype)
                ? tx.exact
                : { grain: 0, bound: Math.ceil(tx.exact.bound) };
        push({ kind: "cast", x, dtype }, { ...tx, dtype, exact });
        break;
      }
      case 11:
        push({ kind: "row", x, which: pick(choice.b, 2) === 0 ? "first" : "last" }, { ...tx, rows: 1 }, x);
        break;
      case 12: {
        // x @ W (W a whole weight, maybe stored transposed), optionally accumulating.
        // PE_GEMM takes the float dtypes and i8 (not i32, u32 or i1).
        if (!(isFloat(tx.dtype) || tx.dtype === "i8") || tx.exact === null) break;
        const n = COLS[pick(choice.b, COLS.length)] as number;
        const k = tx.cols;
        const transposed = pick(choice.c, 2) === 1;
        const weight = newInput(transposed ? [n, k] : [k, n], tx.dtype, false, transposed);
        const w = push(
          { kind: "load", input: weight, col0: 0, cols: transposed ? k : n },
          { rows: transposed ? n : k, cols: transposed ? k : n, dtype: tx.dtype, exact: exactType(tx.dtype) },
        );
        live.delete(w); // a weight is read only by its dot
        const accDtype: Dtype = isFloat(tx.dtype) ? "f32" : "i32";
        const products: Exact = {
          grain: tx.exact.grain + exactType(tx.dtype).grain,
          bound: tx.exact.bound * exactType(tx.dtype).bound * k,
        };
        if (Math.log2(Math.max(1, products.bound)) - products.grain > 22) break;
        const accs = values(
          (type) =>
            type.rows === tx.rows && type.cols === n && type.dtype === accDtype && type.exact !== null,
        );
        const accChoice = dotFirst ? 1 + pick(choice.d, 2) : pick(choice.d, 3);
        const acc =
          accChoice === 0
            ? null
            : accChoice === 1 || accs.length === 0
              ? "zeros"
              : (accs[pick(choice.d, accs.length)] as number);
        const accExact = typeof acc === "number" ? (types[acc] as ValueType).exact : null;
        const exact = binaryExact("add", products, accExact ?? { grain: products.grain, bound: 0 });
        const outDtype: Dtype | null =
          acc === null && isFloat(tx.dtype) && pick(choice.d, 2) === 1
            ? (FLOAT_DTYPES[pick(choice.c, FLOAT_DTYPES.length)] as Dtype)
            : null;
        if (exact === null || Math.log2(Math.max(1, exact.bound)) - exact.grain > 22) break;
        // A dot with an accumulator writes its result over the accumulator's bytes.
        if (typeof acc === "number") overwrite(acc);
        if (acc !== null) accumulated.push(steps.length);
        push(
          { kind: "dot", a: x, b: w, acc, outDtype },
          { rows: tx.rows, cols: n, dtype: outDtype ?? accDtype, exact },
          typeof acc === "number" ? acc : null,
        );
        break;
      }
      case 13: {
        if (tx.rows !== "block" && tx.rows !== 1) break;
        const output = newOutput(tx.cols, tx.dtype, tx.rows === "block" ? "block" : 1);
        push({ kind: "store", x, output }, null);
        break;
      }
      case 14: {
        // C = A @ B as one composite per block: A's rows of the block, B whole (maybe transposed).
        const dtype = DTYPES[pick(choice.a, 4)] as Dtype; // not i32 (no i32 GEMM unit rate)
        const k = KS[pick(choice.b, KS.length)] as number;
        const n = COLS[pick(choice.c, COLS.length)] as number;
        const transposeA = blocks === 1 && pick(choice.d, 3) === 2;
        const a = transposeA
          ? newInput([k, rows], dtype, false, true)
          : newInput([rows, k], dtype, true, false);
        const transposeB = pick(choice.d, 2) === 1;
        const b = newInput(transposeB ? [n, k] : [k, n], dtype, false, transposeB);
        const tile: [number, number, number] | null =
          pick(choice.kind, 2) === 0
            ? null
            : [1 + pick(choice.a, 8), 1 + pick(choice.b, 8), 1 + pick(choice.c, 8)];
        const epilogue: EpilogueStep[] = [];
        if (isFloat(dtype)) {
          const count = pick(choice.d, 3);
          for (let i = 0; i < count; i++) {
            const which = pick(choice.a + 7 * i, EXACT_EPILOGUE.length + UNARY_OPS.length);
            if (which < EXACT_EPILOGUE.length) epilogue.push(EXACT_EPILOGUE[which] as EpilogueStep);
            else
              epilogue.push({
                op: UNARY_OPS[which - EXACT_EPILOGUE.length] as EpilogueStep["op"],
                scope: "output_tile",
              });
          }
        }
        const outDtype =
          isFloat(dtype) && pick(choice.c, 3) === 0 ? (FLOAT_DTYPES[pick(choice.b, 3)] as Dtype) : null;
        const output = newOutput(n, outDtype ?? dtype, "block");
        push({ kind: "compositeGemm", a, b, output, tile, epilogue, outDtype }, null);
        break;
      }
      case 16: {
        // Branch on the first element of a loaded tile (it holds host data: phase 1 knows it).
        const conditions = values().filter((value) => known.has(value));
        if (conditions.length === 0) break;
        const cond = conditions[pick(choice.d, conditions.length)] as number;
        const then = UNARY_OPS[pick(choice.b, UNARY_OPS.length)] as (typeof UNARY_OPS)[number];
        const otherwise = UNARY_OPS[pick(choice.c, UNARY_OPS.length)] as (typeof UNARY_OPS)[number];
        const keeps = (op: string) => op === "abs" || op === "relu";
        push(
          { kind: "branch", x: cond, y: x, then, otherwise },
          { ...tx, exact: keeps(then) && keeps(otherwise) ? tx.exact : null },
        );
        break;
      }
      case 17: {
        // A load into a tl.empty buffer ({ out }).
        const input = splitInputOrLoad(choice);
        if (input === null) break;
        const { shape, dtype } = inputs[input] as InputTensor;
        known.add(
          push(
            { kind: "loadInto", input },
            { rows: "block", cols: shape[1], dtype, exact: exactType(dtype) },
          ),
        );
        break;
      }
      case 18: {
        // A gather of columns idx (drawn, repeats and any order) of an input's block rows through
        // offsets computed from the loaded i32 index input: (b * BR + r) * C + idx[j].
        const input = splitInputOrLoad(choice);
        if (input === null) break;
        const { shape, dtype } = inputs[input] as InputTensor;
        const k = COLS[pick(choice.c, COLS.length)] as number;
        const idx = Array.from({ length: k }, () => pick(random() * shape[1], shape[1]));
        known.add(
          push(
            { kind: "gather", input, index: indexInput(idx) },
            { rows: "block", cols: k, dtype, exact: exactType(dtype) },
          ),
        );
        break;
      }
      case 20:
      case 21:
      case 22:
      case 23:
      case 24:
      case 25:
      case 26:
        drawRound2(kind, choice, x, {
          blockRows,
          types,
          values,
          push,
          inputs,
          indexInput,
          splitInputOrLoad,
          newOutput: (cols, dtype) => newOutput(cols, dtype, "block"),
          scalarFor,
          exactType,
          random,
        });
        break;
      case 27:
      case 28:
      case 29:
        drawRound3(kind, choice, ctx);
        break;
      case SCALED_KIND:
        drawDotScaled(choice, ctx);
        break;
      case 15: {
        // out = op(inputs) as one composite per block over the block's rows.
        const op = COMPOSITE_MATH_OPS[
          pick(choice.a, COMPOSITE_MATH_OPS.length)
        ] as (typeof COMPOSITE_MATH_OPS)[number];
        const dtype = DTYPES[pick(choice.b, DTYPES.length)] as Dtype;
        const cols = COLS[pick(choice.c, COLS.length)] as number;
        const binary = (BINARY_OPS as readonly string[]).includes(op);
        const withScalar = binary && pick(choice.d, 2) === 0;
        const count = binary && !withScalar ? 2 : 1;
        const sources = Array.from({ length: count }, () => newInput([rows, cols], dtype, true, false));
        const reduces = op === "sum" || op === "max" || op === "min";
        const output = newOutput(reduces ? 1 : cols, dtype, "block");
        push(
          {
            kind: "compositeMath",
            op,
            inputs: sources,
            scalar: withScalar ? scalarFor(dtype, choice.d) : null,
            output,
          },
          null,
        );
        break;
      }
    }
    if (kind === USE_CONSUMED && accumulated.length > 0) {
      // A use of an accumulator a dot consumed (not its result): the run must refuse it.
      const dot = accumulated[pick(choice.b, accumulated.length)] as number;
      const op = UNARY_OPS[pick(choice.c, UNARY_OPS.length)] as (typeof UNARY_OPS)[number];
      push({ kind: "useConsumed", dot, op }, null);
      refused = true;
    }
  }
  // The last values computed are stored too (up to three not stored yet), so most steps reach
  // an output the check compares.
  const stored = new Set(steps.flatMap((step) => (step.kind === "store" ? [step.x] : [])));
  if (refused) live.clear(); // never reached
  const last = [...live].filter((value) => !stored.has(value) && steps[value]?.kind !== "load").slice(-3);
  for (const value of last) {
    const type = types[value] as ValueType;
    if (type.rows !== "block" && type.rows !== 1) continue;
    push(
      {
        kind: "store",
        x: value,
        output: newOutput(type.cols, type.dtype, type.rows === "block" ? "block" : 1),
      },
      null,
    );
  }
  return { rows, blockRows, pes, persistent, inputs, outputs, steps, types };
}
