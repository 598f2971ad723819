import { KbError } from "@kb/errors";
import type { DeviceTensor, Simulator } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import { sliceRows } from "../cube-parts.js";
import type { LayerLaunch, RankBuffers } from "./layer.js";
import type { LinearTiles } from "./linear.js";
import type { MoeDims } from "./moe-config.js";
import {
  combineKernel,
  dispatchKernel,
  expertDownKernel,
  expertSwigluKernel,
  routerKernel,
} from "./moe-kernels.js";
import type { MoePlacement } from "./moe-placement.js";
import type { DispatchPlan, GroupPlan } from "./moe-plan.js";
import { concatColumns } from "./ranks.js";

/** One expert's full weights, `[in, out]` (`y = x @ W`). */
export interface ExpertWeights {
  readonly gate: Tensor;
  readonly up: Tensor;
  readonly down: Tensor;
}

/** One rank's device tensors of the MoE block (all in its cube's HBM). */
export interface MoeBuffers {
  readonly Wr: DeviceTensor;
  readonly Top: DeviceTensor;
  readonly Gate: DeviceTensor;
  readonly Ids: DeviceTensor;
  readonly Send: DeviceTensor;
  readonly Recv: DeviceTensor;
  readonly Wg: DeviceTensor;
  readonly Wu: DeviceTensor;
  readonly Act: DeviceTensor;
  readonly Wd: DeviceTensor;
  readonly Out: DeviceTensor;
  readonly Back: DeviceTensor;
  readonly Pos: DeviceTensor;
  readonly Keep: DeviceTensor;
  readonly Y: DeviceTensor;
}

/** The row-major concatenation, row-wise, of matrices with the same columns. */
function stackRows(parts: readonly Tensor[], dtype: Dtype): Tensor {
  const cols = parts[0]?.shape[1] as number;
  const rows = parts.reduce((sum, t) => sum + (t.shape[0] as number), 0);
  const out = new Uint8Array(parts.reduce((sum, t) => sum + t.nbytes, 0));
  let at = 0;
  for (const t of parts) {
    out.set(t.bytes, at);
    at += t.nbytes;
  }
  return new Tensor([rows, cols], dtype, out);
}

const sum = (list: readonly number[]) => list.reduce((a, b) => a + b, 0);

/**
 * Uploads rank r's share (group g = r / tp, rank t = r % tp of it): the router weight, its
 * group's experts' column block t (gate, up) and row block t (down) stacked by expert, the
 * dispatch tables of its group's tokens (send-row ids, return positions, kept flags), and the
 * buffers sized by the plan's counts. Throws `RUNTIME_INVALID` when a group would receive no
 * rows (no token routed to its experts survives): a buffer of 0 rows cannot exist. With
 * `sharing` (the buffers of an earlier call on the same placement), the router and expert
 * weights are that call's tensors, not new copies (the layers and micro-batches of a pipeline
 * stage share one copy).
 */
export async function uploadMoe(
  sim: Simulator,
  placement: MoePlacement,
  dims: MoeDims,
  dtype: Dtype,
  router: Tensor,
  experts: readonly ExpertWeights[],
  plan: DispatchPlan,
  sharing?: readonly MoeBuffers[],
): Promise<MoeBuffers[]> {
  const { tp } = placement;
  const width = dims.ffn / tp;
  const out: MoeBuffers[] = [];
  for (const [r, rank] of placement.attention.ranks.entries()) {
    const g = Math.floor(r / tp);
    const t = r % tp;
    const group = plan.groups[g] as GroupPlan;
    const sent = group.sendIds.length;
    const received = sum(group.recvCounts);
    if (sent === 0 || received === 0) {
      throw new KbError(
        "RUNTIME_INVALID",
        `moe-layer: expert group ${g} would ${sent === 0 ? "send" : "receive"} no token rows (every assignment ${sent === 0 ? "of its tokens" : "to its experts"} dropped or routed elsewhere); raise capacityFactor, the tokens (seq, batch), or lower ep.`,
      );
    }
    const where = { sip: rank.sip, cube: rank.cube };
    const put = (x: Tensor, name: string) => sim.toDevice(x, { ...where, name: `moe.${name}.r${r}` });
    const shared = sharing?.[r];
    const weight = async (field: "Wr" | "Wg" | "Wu" | "Wd", make: () => Tensor, name: string) =>
      shared?.[field] ?? put(make(), name);
    const empty = (shape: readonly number[], name: string, type: Dtype = dtype) =>
      sim.empty(shape, type, { ...where, name: `moe.${name}.r${r}` });
    const mine = experts.slice(g * plan.perGroup, (g + 1) * plan.perGroup);
    const block = { start: t * width, count: width };
    const n = group.tokens.count;
    const k = dims.topK;
    out.push({
      Wr: await weight("Wr", () => router, "w_router"),
      Top: empty([n, k], "top", "i32"),
      Gate: empty([n, k], "gate", "f32"),
      Ids: await put(Tensor.fromArray(group.sendIds, [sent, 1], "i32"), "send_ids"),
      Send: empty([sent, dims.hidden], "send"),
      Recv: empty([received, dims.hidden], "recv"),
      Wg: await weight(
        "Wg",
        () =>
          stackRows(
            mine.map((e) => concatColumns([{ tensor: e.gate, ...block }], dtype)),
            dtype,
          ),
        "w_gate",
      ),
      Wu: await weight(
        "Wu",
        () =>
          stackRows(
            mine.map((e) => concatColumns([{ tensor: e.up, ...block }], dtype)),
            dtype,
          ),
        "w_up",
      ),
      Act: empty([received, width], "act"),
      Wd: await weight(
        "Wd",
        () =>
          stackRows(
            mine.map((e) => sliceRows(e.down, block)),
            dtype,
          ),
        "w_down",
      ),
      Out: empty([received, dims.hidden], "expert_out", "f32"),
      Back: empty([sent, dims.hidden], "back", "f32"),
      Pos: await put(Tensor.fromArray(group.positions, [n, k], "i32"), "positions"),
      Keep: await put(Tensor.fromArray(group.keep, [n, k], "f32"), "keep"),
      Y: empty([n, dims.hidden], "y"),
    });
  }
  return out;
}

/** How the MoE block's kernels tile their work. */
export interface MoeRunConfig {
  readonly tiles: LinearTiles;
  readonly blockRows: number;
  /** Called before each step with its name (progress). */
  readonly onStep?: (step: string) => void;
}

/** The launches of the MoE block, in order: the names {@link runMoe} gives them. */
export const MOE_STEPS = [
  "router",
  "dispatch",
  "all-to-all dispatch",
  "expert gate-up-swiglu",
  "expert down",
  "all-reduce experts",
  "all-to-all combine",
  "combine",
] as const;

/**
 * Runs the MoE block after the attention block (`attention[r].H` the f32 residual, `.HN` its
 * normalisation): router, dispatch gather, all-to-all-v to the experts' groups, grouped expert
 * GEMMs, the tp all-reduce of their outputs, the reverse all-to-all-v, and the weighted combine
 * with the residual into `Y` (rank r's rows: its group's tokens). Returns the launches in order.
 */
export async function runMoe(
  sim: Simulator,
  placement: MoePlacement,
  dims: MoeDims,
  plan: DispatchPlan,
  attention: readonly RankBuffers[],
  moe: readonly MoeBuffers[],
  config: MoeRunConfig,
): Promise<LayerLaunch[]> {
  const { tp } = placement;
  const grid = placement.attention.grid;
  const launches: LayerLaunch[] = [];
  const groupOf = (r: number) => plan.groups[Math.floor(r / tp)] as GroupPlan;
  const launch = async (kernel: string, fn: unknown, args: readonly unknown[]) => {
    config.onStep?.(kernel);
    const record = await sim.launch(fn as never, { grid, args: args as never, name: kernel });
    launches.push({ layer: 0, kernel, communication: false, record });
  };
  const collective = async (
    kernel: string,
    run: () => Promise<{ name: string; record: LayerLaunch["record"] }[]>,
  ) => {
    config.onStep?.(kernel);
    for (const { name, record } of await run())
      launches.push({ layer: 0, kernel: name, communication: true, record });
  };
  const rows = { blockRows: config.blockRows, topK: dims.topK };
  await launch("router", routerKernel, [
    moe.map((b, r) => ({
      HN: (attention[r] as RankBuffers).HN,
      row0: groupOf(r).tokens.start,
      rows: groupOf(r).tokens.count,
      Wr: b.Wr,
      Top: b.Top,
      Gate: b.Gate,
    })),
    rows,
  ]);
  await launch("dispatch", dispatchKernel, [
    moe.map((b, r) => ({ X: (attention[r] as RankBuffers).HN, Ids: b.Ids, Send: b.Send })),
    rows,
  ]);
  const counts = plan.groups.map((g) => [...g.sendCounts]);
  const allToAll = placement.allToAll;
  // With one group the send buffer is the receive buffer (and the expert output the returned one).
  const recvOf = (b: MoeBuffers) => (allToAll === null ? b.Send : b.Recv);
  const backOf = (b: MoeBuffers) => (allToAll === null ? b.Out : b.Back);
  if (allToAll !== null) {
    await collective("all-to-all dispatch", () =>
      allToAll(
        "all-to-all dispatch",
        moe.map((b) => b.Recv),
        moe.map((b) => b.Send),
        counts,
      ),
    );
  }
  const experts = moe.map((b, r) => ({
    A: recvOf(b),
    Wg: b.Wg,
    Wu: b.Wu,
    Act: b.Act,
    Wd: b.Wd,
    Out: b.Out,
    segments: groupOf(r).segments,
  }));
  await launch("expert gate-up-swiglu", expertSwigluKernel, [experts, config.tiles]);
  await launch("expert down", expertDownKernel, [experts, config.tiles]);
  const reduce = placement.expertAllReduce;
  if (reduce !== null) {
    await collective("all-reduce experts", () =>
      reduce(
        "all-reduce experts",
        moe.map((b) => b.Out),
      ),
    );
  }
  if (allToAll !== null) {
    const back = counts.map((_, d) => counts.map((row) => row[d] as number));
    await collective("all-to-all combine", () =>
      allToAll(
        "all-to-all combine",
        moe.map((b) => b.Back),
        moe.map((b) => b.Out),
        back,
      ),
    );
  }
  await launch("combine", combineKernel, [
    moe.map((b, r) => ({
      H: (attention[r] as RankBuffers).H,
      row0: groupOf(r).tokens.start,
      Back: backOf(b),
      Pos: b.Pos,
      Keep: b.Keep,
      Gate: b.Gate,
      Y: b.Y,
    })),
    rows,
  ]);
  return launches;
}
