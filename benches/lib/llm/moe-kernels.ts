import type { DeviceTensor } from "@kb/runtime";
import type { TensorHandle, TL } from "@kb/tl";
import { cubeIndex } from "../cube-parts.js";
import { accumulate, type LinearTiles } from "./linear.js";
import type { Segment } from "./moe-plan.js";
import { toDtype, toF32 } from "./norm.js";

// The kernels of a Mixtral-style MoE block, one rank per cube (parts[cubeIndex]): the router
// (gating GEMM, softmax, top-k by argmax), the dispatch gather into the send buffer, the grouped
// expert GEMMs over the received rows' expert runs, and the combine (gather of each token's
// returned rows, weighted sum, residual add). Row-block kernels take blocks of `blockRows` rows
// round-robin over the PEs of the cube; the GEMMs take output tiles round-robin.

/** One rank's operands of {@link routerKernel}: its tokens' rows of HN, the router weight, the outputs. */
export interface RouterPart {
  /** The normalised residual `[T, H]` (every token; the rank routes rows `row0 .. row0 + rows - 1`). */
  readonly HN: DeviceTensor;
  readonly row0: number;
  readonly rows: number;
  /** The router (gate) weight `[H, E]`. */
  readonly Wr: DeviceTensor;
  /** `[rows, topK]` i32: the chosen experts, most probable first. */
  readonly Top: DeviceTensor;
  /** `[rows, topK]` f32: their renormalised weights. */
  readonly Gate: DeviceTensor;
}

/**
 * The router: `logits = HN @ Wr` (f32 accumulation), `p = softmax(logits)` per row, then `topK`
 * times `argmax` (the first on ties) and its probability, masking the chosen expert to -1 before
 * the next; the weights divided by their sum (Mixtral's renormalised top-2).
 */
export async function routerKernel(
  tl: TL,
  parts: readonly (RouterPart | null)[],
  config: { readonly blockRows: number; readonly topK: number },
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined || part.rows === 0) return;
  const { HN, Wr, Top, Gate } = part;
  const hidden = HN.shape[1] as number;
  const experts = Wr.shape[1] as number;
  const k = config.topK;
  const step = config.blockRows * tl.numPrograms(0);
  if (tl.programId(0) * config.blockRows >= part.rows) return;
  const w = await tl.load(Wr, [hidden, experts], Wr.dtype);
  const ids = tl.arange(0, experts);
  for (let r0 = tl.programId(0) * config.blockRows; r0 < part.rows; r0 += step) {
    const mark = tl.scratchMark();
    const n = Math.min(config.blockRows, part.rows - r0);
    const x = await tl.load(HN.at(part.row0 + r0, 0), [n, hidden], HN.dtype);
    const logits = await tl.dot(x, w, tl.zeros([n, experts], "f32"));
    let p = await tl.softmax(logits, 1);
    const chosen: TensorHandle[] = [];
    for (let j = 0; j < k; j++) {
      const top = await tl.argmax(p, 1); // [n, 1] i32
      chosen.push(await tl.max(p, 1));
      await tl.store(Top.at(r0, j), top, { stride: k });
      if (j + 1 < k) p = await tl.where(await tl.ne(ids, top), p, -1);
    }
    let total = chosen[0] as TensorHandle;
    for (const c of chosen.slice(1)) total = await tl.add(total, c);
    for (const [j, c] of chosen.entries())
      await tl.store(Gate.at(r0, j), await tl.div(c, total), { stride: k });
    tl.scratchRelease(mark);
  }
}

/** One rank's operands of {@link dispatchKernel}: `Send[i] = X[Ids[i]]`, Ids `[rows, 1]` i32. */
export interface DispatchPart {
  readonly X: DeviceTensor;
  readonly Ids: DeviceTensor;
  readonly Send: DeviceTensor;
}

/** The dispatch: each block of send rows gathered from X through the loaded row ids (`ids x H + cols`). */
export async function dispatchKernel(
  tl: TL,
  parts: readonly (DispatchPart | null)[],
  config: { readonly blockRows: number },
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { X, Ids, Send } = part;
  const rows = Send.shape[0] as number;
  const hidden = Send.shape[1] as number;
  const cols = tl.arange(0, hidden);
  for (let r0 = tl.programId(0) * config.blockRows; r0 < rows; r0 += config.blockRows * tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const n = Math.min(config.blockRows, rows - r0);
    const ids = await tl.load(Ids.at(r0, 0), [n, 1], "i32");
    const offsets = await tl.add(await tl.mul(ids, hidden), cols);
    const x = await tl.load(X, [n, hidden], X.dtype, { offsets });
    await tl.store(Send.at(r0, 0), x);
    tl.scratchRelease(mark);
  }
}

/** The output tiles of a grouped GEMM: per segment, `tm x tn` tiles of its rows and `N` columns. */
function groupedTiles(segments: readonly Segment[], N: number, tiles: LinearTiles) {
  const out: { expert: number; i0: number; m: number; j0: number; n: number }[] = [];
  for (const { expert, start, count } of segments) {
    for (let i0 = start; i0 < start + count; i0 += tiles.tm) {
      for (let j0 = 0; j0 < N; j0 += tiles.tn) {
        out.push({
          expert,
          i0,
          m: Math.min(tiles.tm, start + count - i0),
          j0,
          n: Math.min(tiles.tn, N - j0),
        });
      }
    }
  }
  return out;
}

/**
 * One rank's operands of the grouped expert GEMMs: the received rows A, the rank's columns of
 * its local experts' gate and up weights stacked by expert (`[experts x H, F / tp]`), the down
 * weights' rows (`[experts x F / tp, H]`), the activation and the f32 output (a partial sum over
 * the expert's column blocks when tp > 1).
 */
export interface ExpertPart {
  readonly A: DeviceTensor;
  readonly Wg: DeviceTensor;
  readonly Wu: DeviceTensor;
  readonly Act: DeviceTensor;
  readonly Wd: DeviceTensor;
  readonly Out: DeviceTensor;
  readonly segments: readonly Segment[];
}

/** Grouped gate and up projections with SwiGLU fused: `Act = silu(A Wg_e) * (A Wu_e)` per segment's expert `e`. */
export async function expertSwigluKernel(
  tl: TL,
  parts: readonly (ExpertPart | null)[],
  tiles: LinearTiles,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { A, Wg, Wu, Act } = part;
  const hidden = A.shape[1] as number;
  const N = Wg.shape[1] as number;
  const list = groupedTiles(part.segments, N, tiles);
  for (let t = tl.programId(0); t < list.length; t += tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const { expert, i0, m, j0, n } = list[t] as (typeof list)[number];
    const gate = await accumulate(tl, A, Wg, i0, j0, tl.zeros([m, n], "f32"), tiles.tk, expert * hidden);
    const up = await accumulate(tl, A, Wu, i0, j0, tl.zeros([m, n], "f32"), tiles.tk, expert * hidden);
    const act = await tl.mul(await tl.silu(gate), up);
    await tl.store(Act.at(i0, j0), await toDtype(tl, act, Act.dtype), { stride: N });
    tl.scratchRelease(mark);
  }
}

/** Grouped down projection: `Out = Act Wd_e` per segment's expert `e`, f32. */
export async function expertDownKernel(
  tl: TL,
  parts: readonly (ExpertPart | null)[],
  tiles: LinearTiles,
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { Act, Wd, Out } = part;
  const width = Act.shape[1] as number;
  const N = Wd.shape[1] as number;
  const list = groupedTiles(part.segments, N, tiles);
  for (let t = tl.programId(0); t < list.length; t += tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const { expert, i0, m, j0, n } = list[t] as (typeof list)[number];
    const acc = await accumulate(tl, Act, Wd, i0, j0, tl.zeros([m, n], "f32"), tiles.tk, expert * width);
    await tl.store(Out.at(i0, j0), await toDtype(tl, acc, Out.dtype), { stride: N });
    tl.scratchRelease(mark);
  }
}

/**
 * One rank's operands of {@link combineKernel}: its tokens' rows of the f32 residual H, the
 * returned expert outputs Back (f32, the send buffer's layout), where each choice came back
 * (`Pos` `[rows, topK]` i32) and whether it was kept (`Keep` f32 0 / 1), the router's weights
 * (`Gate`), and the output Y `[rows, H]`.
 */
export interface CombinePart {
  readonly H: DeviceTensor;
  readonly row0: number;
  readonly Back: DeviceTensor | null;
  readonly Pos: DeviceTensor;
  readonly Keep: DeviceTensor;
  readonly Gate: DeviceTensor;
  readonly Y: DeviceTensor;
}

/**
 * The combine: `Y[t] = H[t] + sum_k Keep[t,k] Gate[t,k] Back[Pos[t,k]]` in f32, stored in Y's
 * dtype. A dropped choice's position is row 0 with Keep 0 (the gather's rows come from loaded
 * positions; Triton's masks may not depend on loaded data, so the weight does it).
 */
export async function combineKernel(
  tl: TL,
  parts: readonly (CombinePart | null)[],
  config: { readonly blockRows: number; readonly topK: number },
): Promise<void> {
  const part = parts[cubeIndex(tl)];
  if (part === null || part === undefined) return;
  const { H, Back, Pos, Keep, Gate, Y } = part;
  const [rows, hidden] = Y.shape as [number, number];
  const k = config.topK;
  const cols = tl.arange(0, hidden);
  for (let r0 = tl.programId(0) * config.blockRows; r0 < rows; r0 += config.blockRows * tl.numPrograms(0)) {
    const mark = tl.scratchMark();
    const n = Math.min(config.blockRows, rows - r0);
    let y = await toF32(tl, await tl.load(H.at(part.row0 + r0, 0), [n, hidden], H.dtype));
    if (Back !== null) {
      for (let j = 0; j < k; j++) {
        const pos = await tl.load(Pos.at(r0, j), [n, 1], "i32", { stride: k });
        const keep = await tl.load(Keep.at(r0, j), [n, 1], "f32", { stride: k });
        const gate = await tl.load(Gate.at(r0, j), [n, 1], "f32", { stride: k });
        const offsets = await tl.add(await tl.mul(pos, hidden), cols);
        const e = await tl.load(Back, [n, hidden], "f32", { offsets });
        y = await tl.add(y, await tl.mul(e, await tl.mul(gate, keep)));
      }
    }
    await tl.store(Y.at(r0, 0), await toDtype(tl, y, Y.dtype));
    tl.scratchRelease(mark);
  }
}
