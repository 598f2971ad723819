// The steps of the differential tester that make programs (PEs) meet at common addresses (issue
// 39, round 3): atomics of every op on elements several programs hit, scatters to rows of other
// blocks, and gathers, in a second launch, of rows other programs wrote in the first. Drawn by
// `buildProgram` for kinds 27 to 29. Only what ends the same in any order of the programs is
// drawn (packages/tl/README.md, "stores' order"), so the evaluator may run the blocks in order.

import { type BuildContext, COLS, type RawStep } from "./build-context.js";
import { binaryExact, exactOfScalar } from "./exact.js";
import { permutation, pick } from "./pick.js";
import type { Dtype, Exact, ValueType } from "./program.js";
import { ATOMIC_OPS, type AtomicOp } from "./reference/index.js";

/** The kinds of the steps drawn here (appended after the round-2 kinds, 20 to 26). */
export const ROUND3_KINDS = Object.freeze({ atomic: 27, rowScatter: 28, gatherBack: 29 } as const);

/** Triton's atomics take 16-bit and wider elements. */
const ATOMIC_DTYPES: readonly Dtype[] = ["f32", "f16", "bf16", "i32", "u32"];
/** Significand bits (the implicit one included) of the float dtypes: sums exact below 2^bits quanta. */
const SIGNIFICAND_BITS: Readonly<Partial<Record<Dtype, number>>> = { f32: 24, f16: 11, bf16: 8 };
/** Rows of a shared atomic target: few, so that many programs meet on each. */
const SHARED_ROWS = 3;
/** Loaded ids of shared atomics and second-launch gathers span this many times the rows (`% M` folds them). */
const ID_SPAN = 4;

/** Values a host fills a target with: the inputs' (exact) values, 0 and 1 for a cas's lock. */
function initValues(ctx: BuildContext, dtype: Dtype, size: number, lock: boolean): number[] {
  return Array.from({ length: size }, () => {
    const u = ctx.random();
    if (lock) return u < 0.5 ? 0 : 1;
    if (dtype === "f32" || dtype === "f16" || dtype === "bf16") return Math.round((u * 2 - 1) * 32) / 8;
    return dtype === "u32" ? Math.round(u * 8) : Math.round((u * 2 - 1) * 8);
  });
}

/** An output the host fills with `init` (the target of atomics or of scatters to other rows). */
function newTarget(ctx: BuildContext, shape: readonly [number, number], dtype: Dtype, lock: boolean): number {
  const init = initValues(ctx, dtype, shape[0] * shape[1], lock);
  ctx.outputs.push({ name: `O${ctx.outputs.length}`, shape, dtype, rowsPerBlock: "block", init });
  return ctx.outputs.length - 1;
}

/** A split i32 input `[R, 1]` of the given values (a block reads its rows: ids). */
function idsInput(ctx: BuildContext, values: number[]): number {
  ctx.inputs.push({
    name: `X${ctx.inputs.length}`,
    shape: [ctx.rows, 1],
    dtype: "i32",
    split: true,
    transposed: false,
    values,
  });
  return ctx.inputs.length - 1;
}

/**
 * True when every partial sum of `init` and `count` additions of `val` is exact in the float
 * `dtype` (a multiple of the finest grain below 2^bits of them): the sum is then the same in any
 * order. NaN and infinities among the values end the same in any order too.
 */
function sumsExact(dtype: Dtype, init: Exact, val: Exact | null, count: number): boolean {
  const bits = SIGNIFICAND_BITS[dtype];
  if (bits === undefined) return true; // integers wrap: any order
  if (val === null) return false;
  const grain = Math.min(init.grain, val.grain);
  return Math.log2(Math.max(1, init.bound + count * val.bound)) - grain < bits;
}

/** Draws the step of `kind` (one of ROUND3_KINDS). */
export function drawRound3(kind: number, choice: RawStep, ctx: BuildContext): void {
  switch (kind) {
    case ROUND3_KINDS.atomic:
      drawAtomic(choice, ctx);
      return;
    case ROUND3_KINDS.rowScatter: {
      // Block b's rows go to rows of S_b (block b's share of a permutation of all rows; a
      // row of S_b may take several of b's rows: the later wins), columns through idx.
      const xs = ctx.values((type) => type.rows === "block");
      if (xs.length === 0) return;
      const x = xs[pick(choice.a, xs.length)] as number;
      const tx = ctx.types[x] as ValueType;
      const perm = permutation(ctx.random, ctx.rows);
      const ids = perm.map((row, g) => {
        if (pick(choice.b, 2) === 0) return row;
        const first = Math.floor(g / ctx.blockRows) * ctx.blockRows;
        const size = Math.min(ctx.blockRows, ctx.rows - first);
        return perm[first + pick(ctx.random() * size, size)] as number;
      });
      const columns =
        pick(choice.c, 2) === 0
          ? permutation(ctx.random, tx.cols)
          : Array.from({ length: tx.cols }, () => pick(ctx.random() * tx.cols, tx.cols));
      const on = pick(choice.d, 3) === 0 ? pick(Math.floor(choice.d / 3), tx.cols + 1) : null;
      const target = newTarget(ctx, [ctx.rows, tx.cols], tx.dtype, false);
      const index = idsInput(ctx, ids);
      ctx.push({ kind: "rowScatter", x, target, index, columns: ctx.indexInput(columns), on }, null);
      return;
    }
    case ROUND3_KINDS.gatherBack: {
      // Sources: the outputs the first launch writes (not those of other second-launch gathers).
      const results = new Set(ctx.steps.flatMap((step) => (step.kind === "gatherBack" ? [step.result] : [])));
      const sources = ctx.outputs.map((_, o) => o).filter((o) => !results.has(o));
      if (sources.length === 0) return;
      const source = sources[pick(choice.a, sources.length)] as number;
      const { shape, dtype } = ctx.outputs[source] as (typeof ctx.outputs)[number];
      const ids = Array.from({ length: ctx.rows }, () =>
        pick(ctx.random() * ID_SPAN * shape[0], ID_SPAN * shape[0]),
      );
      const index = idsInput(ctx, ids);
      const on = pick(choice.c, 2) === 1 ? pick(choice.d, shape[1] + 1) : null;
      const result = ctx.newOutput(shape[1], dtype, "block");
      const other = ctx.scalarFor(dtype, choice.b);
      ctx.push({ kind: "gatherBack", source, index, result, on, other }, null);
      return;
    }
  }
}

/**
 * An atomic: `shared` (rows `ids % M` of a small target, every program on them: add, max, min of
 * any operand; xchg, cas of one number, whose final value is the same in any order) or `private`
 * (the block's own rows, columns through idx with repeats: any op; the old values are a value).
 */
function drawAtomic(choice: RawStep, ctx: BuildContext): void {
  let op = ATOMIC_OPS[pick(choice.b, ATOMIC_OPS.length)] as AtomicOp;
  const shared = pick(choice.c, 2) === 0;
  const operands = ctx.values((type) => type.rows === "block" && ATOMIC_DTYPES.includes(type.dtype));
  // Shared xchg and cas write one number (the lock pattern); else a value, or a number at times.
  const scalar =
    operands.length === 0 || pick(choice.d, 3) === 0 || (shared && (op === "xchg" || op === "cas"));
  const x = scalar ? null : (operands[pick(choice.a, operands.length)] as number);
  const tx = x === null ? null : (ctx.types[x] as ValueType);
  const dtype = tx?.dtype ?? (ATOMIC_DTYPES[pick(choice.a, ATOMIC_DTYPES.length)] as Dtype);
  const cols = tx?.cols ?? (COLS[pick(Math.floor(choice.a / 5), COLS.length)] as number);
  const number = op === "cas" ? pick(choice.a, 2) : Math.abs(ctx.scalarFor(dtype, choice.a));
  const valExact = tx === null ? exactOfScalar(dtype, number) : tx.exact;
  const lock = op === "cas";
  const initExact: Exact = lock ? { grain: 0, bound: 1 } : ctx.exactType(dtype);
  // A float sum on shared elements only where every order gives the same bits (else max).
  if (shared && op === "add" && !sumsExact(dtype, initExact, valExact, ctx.rows)) op = "max";
  const m = 1 + pick(Math.floor(choice.c / 2), SHARED_ROWS);
  const target = newTarget(ctx, [shared ? m : ctx.rows, cols], dtype, lock);
  const masked = pick(Math.floor(choice.c / 6), 4) === 3;
  const on = masked ? pick(Math.floor(choice.d / 3), cols + 1) : null;
  const index = shared
    ? pick(Math.floor(choice.c / 24), 2) === 0
      ? null
      : idsInput(
          ctx,
          Array.from({ length: ctx.rows }, () => pick(ctx.random() * ID_SPAN * m, ID_SPAN * m)),
        )
    : ctx.indexInput(Array.from({ length: cols }, () => pick(ctx.random() * cols, cols)));
  const cmp = op === "cas" ? pick(Math.floor(choice.d / 7), 2) : null;
  const step = {
    kind: "atomic" as const,
    op,
    target,
    val: x ?? { scalar: number },
    cmp,
    rows: shared ? ("shared" as const) : ("private" as const),
    index,
    on,
  };
  if (shared) {
    ctx.push(step, null);
    return;
  }
  // The old values: the target's or earlier values of the call (0 where masked off); sums of them
  // (add with repeated columns) are not tracked.
  const exact = op === "add" ? null : binaryExact("maximum", initExact, valExact);
  ctx.push(step, { rows: "block", cols, dtype, exact });
}
