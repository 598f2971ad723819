import { initProcessGroup } from "@kb/ccl";
import { KbError } from "@kb/errors";
import type { DeviceTensor, Simulator } from "@kb/runtime";
import { type GridParams, gridOf } from "../params.js";
import { groupAllToAll, type MoePlacement } from "./moe-placement.js";
import { type PipelinePlacement, placeStages } from "./pipeline-place.js";
import { placeRanks, type TpPlacement } from "./ranks.js";
import type { ReduceLaunch } from "./tp-all-reduce.js";

// Where moe-pp's model lives: `pp` stages (llama-pp's placement: a SIP each, or a cube each on
// one SIP), and inside a stage `ep x tp` ranks on cubes 0..ep x tp - 1 of its SIP: `ep` expert
// groups of one cube each (tp = 1: the dispatch and combine all-to-all-v and the all-gather of
// the layer's output run around the SIP's cube ring), or one group tensor parallel over `tp`
// cubes (ep = 1: the expert outputs' all-reduce is the attention's, around the same ring). A SIP's
// cubes form one ring, so both at once (rank t of every group exchanging with rank t of the
// others) has no collective here; moe-layer places ep x tp over SIPs for a single layer.

/** The placement of `pp` stages of a MoE model. */
export interface MoePipeline {
  readonly pp: number;
  readonly ep: number;
  readonly tp: number;
  /** Cubes the placement occupies: pp x ep x tp. */
  readonly cubes: number;
  /** Each stage's ranks and collectives (the attention block tensor parallel over all its ranks). */
  readonly stages: readonly MoePlacement[];
  /** The stage-to-stage transfers (llama-pp's), null for pp = 1. */
  readonly pipeline: PipelinePlacement | null;
  /**
   * Stage s's all-gather of the expert groups' output rows into every rank's full residual
   * stream (group g's rows are tokens g x tokens / ep ..): null for ep = 1 (one group holds them all).
   */
  readonly gather: (
    stage: number,
    name: string,
    outputs: readonly DeviceTensor[],
    inputs: readonly DeviceTensor[],
  ) => Promise<ReduceLaunch[]>;
}

const refuse = (message: string) => new KbError("RUNTIME_INVALID", `moe-pp: ${message}`);

/**
 * Places the model (see the module comment). Throws `RUNTIME_INVALID` naming the params and the
 * grid's counts when the placement does not fit: more cubes than the grid has, ep and tp both
 * above 1, a stage's ranks beyond a SIP's cubes, more stages than SIPs (or, for ep = tp = 1, than
 * the cubes of one SIP), or micro-batch tokens that the expert groups cannot share evenly.
 */
export function placeMoePipeline(
  sim: Simulator,
  params: GridParams,
  pp: number,
  ep: number,
  tp: number,
  kvHeads: number,
  tokens: number,
): MoePipeline {
  const whole = gridOf(sim, params);
  const sips = whole.sips.length;
  const cubes = whole.cubes.length;
  const n = ep * tp;
  const what = `pp=${pp} x ep=${ep} x tp=${tp}`;
  const grid = `${sips} SIP(s) x ${cubes} cube(s) = ${sips * cubes} cubes`;
  if (pp * n > sips * cubes) {
    throw refuse(
      `${what} needs ${pp * n} cubes (a rank is a cube); this grid has ${grid}. Lower pp, ep or tp so that pp x ep x tp <= ${sips * cubes}.`,
    );
  }
  if (ep > 1 && tp > 1) {
    throw refuse(
      `${what}: a stage's ranks are cubes of one SIP, whose cubes form one ring, so its expert groups are either ep cubes (tp=1) or one group tensor parallel over tp cubes (ep=1). Use tp=1 or ep=1 (moe-layer places ep x tp over SIPs for one layer).`,
    );
  }
  if (n > cubes) {
    throw refuse(
      `${what}: a stage's ep x tp = ${n} ranks are cubes of one SIP, and this grid (${grid}) has ${cubes} cube(s) per SIP. Choose ep x tp <= ${cubes}.`,
    );
  }
  if (pp > 1 && pp > sips && (n > 1 || pp > cubes)) {
    throw refuse(
      `${what}: a stage is a SIP (pp up to ${sips} on this grid, ${grid}) or, with ep=1 and tp=1, a cube of one SIP (pp up to ${cubes}). Lower pp, or use a topology with more SIPs (--topology ref-4sip).`,
    );
  }
  if (ep > 1 && tokens % ep !== 0) {
    throw refuse(
      `ep=${ep} expert groups each route an equal slice of a micro-batch's ${tokens} tokens (batch / microBatches x seq), and their outputs are all-gathered: choose seq, batch and microBatches so that ep divides the tokens.`,
    );
  }
  const pipeline = pp === 1 ? null : placeStages(sim, params, pp, n, kvHeads);
  const attention: readonly TpPlacement[] = pipeline?.stages ?? [placeRanks(sim, params, n, kvHeads)];
  const groups = attention.map((stage) =>
    ep === 1
      ? null
      : initProcessGroup(sim, {
          backend: "ahbm",
          scope: "cubes",
          sip: (stage.ranks[0] as { sip: number }).sip,
          cclConfig: { defaults: { worldSize: ep } },
        }),
  );
  const stages = attention.map(
    (stage, s): MoePlacement => ({
      ep,
      tp,
      attention: stage,
      allToAll: ep === 1 ? null : groupAllToAll(groups[s] as NonNullable<(typeof groups)[number]>),
      expertAllReduce: tp === 1 ? null : stage.allReduce,
    }),
  );
  return {
    pp,
    ep,
    tp,
    cubes: pp * n,
    stages,
    pipeline,
    gather: async (stage, name, outputs, inputs) => {
      const pg = groups[stage];
      if (pg === null || pg === undefined) return [];
      const result = await pg.allGather([...outputs], [...inputs]);
      return [{ name: `${name} (${result.algorithm})`, record: result.launch }];
    },
  };
}
