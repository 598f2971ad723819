import { initProcessGroup, type ProcessGroup } from "@kb/ccl";
import { KbError } from "@kb/errors";
import type { DeviceTensor, LaunchRecord, Simulator } from "@kb/runtime";
import { type GridParams, gridOf } from "../params.js";
import type { TpPlacement } from "./ranks.js";
import { flatAllReduce } from "./tp-all-reduce.js";

/** One stage-to-stage transfer link: who sends to whom, and the process group that moves it. */
interface Link {
  readonly group: ProcessGroup;
  /** The process-group rank of each stage's end of this link. */
  readonly rankOfStage: (stage: number) => number;
  /** Which TP rank of a stage holds the link's end (its buffers send and receive). */
  readonly tpRank: number;
}

/** The stages of a pipeline: each one a tensor-parallel group of cubes, and how they pass activations. */
export interface PipelinePlacement {
  /** `"sips"`: stage s is SIP s (its TP ranks cubes 0..tp-1); `"cubes"`: stage s is cube s of the first SIP. */
  readonly on: "sips" | "cubes";
  readonly stages: readonly TpPlacement[];
  /** Who sends to whom between stage s and s + 1: `sip0.cube0 -> sip1.cube0`, or `sip0.cube{0,1} -> sip1.cube{same}` (rank i to rank i). */
  readonly pairs: (stage: number) => string;
  /**
   * Sends each TP rank's `out` of stage `stage` to the same TP rank's `into` of stage `stage + 1`
   * (a posted irecv, then the send: one launch per link); returns the launches in order.
   */
  send(stage: number, out: readonly DeviceTensor[], into: readonly DeviceTensor[]): Promise<LaunchRecord[]>;
}

const at = (sip: number, cube: number) => `sip${sip}.cube${cube}`;

/**
 * Places `pp` stages of `tp` ranks (a rank is a cube) on the grid of `params`. When the grid has
 * at least `pp` SIPs, stage s is SIP s and its ranks are cubes 0..tp-1 of it (their all-reduce a
 * @kb/ccl process group over that SIP's cube ring; `tp` up to its cubes, `"auto"` all of them
 * when they divide `kvHeads`, else 1); rank i of stage s sends its activations to rank i of stage
 * s + 1, through a process group of SIP ranks on cube i (SIP links). Otherwise stage s is cube s of
 * the first SIP (`pp` up to its cubes, one rank each: a sub-ring of a SIP's cubes has no
 * all-reduce), sending over the cube ring. Throws `RUNTIME_INVALID` naming `pp` or `tp` when they
 * do not fit, with the values that do.
 */
export function placeStages(
  sim: Simulator,
  params: GridParams,
  pp: number,
  tp: number | "auto",
  kvHeads: number,
): PipelinePlacement {
  const whole = gridOf(sim, params);
  const sips = whole.sips;
  const cubes = whole.cubes;
  const pes = params.pes === undefined ? {} : { pes: params.pes };
  const shape = `${sips.length} SIP(s) x ${cubes.length} cube(s)`;
  if (pp > 1 && sips.length >= pp && sips[0] === 0 && cubes[0] === 0) {
    const degree = tp === "auto" ? (kvHeads % cubes.length === 0 ? cubes.length : 1) : tp;
    if (degree > cubes.length) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-pp: param tp=${degree} (ranks per stage) exceeds the ${cubes.length} cube(s) of a SIP: with stages over SIPs (${shape}, pp=${pp}), a stage's ranks are cubes of its SIP. Choose tp <= ${cubes.length}.`,
      );
    }
    const ids = cubes.slice(0, degree);
    const stages = Array.from({ length: pp }, (_, s): TpPlacement => {
      const sip = sips[s] as number;
      return {
        ranks: ids.map((cube) => ({ sip, cube })),
        grid: sim.grid({ sips: [sip], cubes: ids, ...pes }),
        allReduce:
          degree === 1
            ? null
            : flatAllReduce(
                initProcessGroup(sim, {
                  backend: "ahbm",
                  scope: "cubes",
                  sip,
                  cclConfig: { defaults: { worldSize: degree } },
                }),
              ),
      };
    });
    const links: Link[] = ids.map((cube, tpRank) => ({
      group: initProcessGroup(sim, {
        backend: "ahbm",
        scope: "sips",
        cube,
        cclConfig: { defaults: { worldSize: pp } },
      }),
      rankOfStage: (stage) => stage,
      tpRank,
    }));
    return {
      on: "sips",
      stages,
      pairs: (s) =>
        ids.length === 1
          ? `${at(s, ids[0] as number)} -> ${at(s + 1, ids[0] as number)}`
          : `sip${s}.cube{${ids.join(",")}} -> sip${s + 1}.cube{same}`,
      send: (s, out, into) => sendOver(links, s, out, into),
    };
  }
  if (pp <= cubes.length && cubes[0] === 0) {
    if (tp !== "auto" && tp !== 1) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-pp: param tp=${tp} needs stages over SIPs, but this grid (${shape}) has fewer than pp=${pp} SIPs, so each stage is one cube of SIP ${sips[0]} (tp = 1). Use tp=1, or a topology with ${pp} SIPs (e.g. --topology topologies/ref-4sip.yaml).`,
      );
    }
    const sip = sips[0] as number;
    const stages = Array.from({ length: pp }, (_, s): TpPlacement => {
      const cube = cubes[s] as number;
      return {
        ranks: [{ sip, cube }],
        grid: sim.grid({ sips: [sip], cubes: [cube], ...pes }),
        allReduce: null,
      };
    });
    const links: Link[] =
      pp === 1
        ? []
        : [
            {
              group: initProcessGroup(sim, {
                backend: "ahbm",
                scope: "cubes",
                sip,
                cclConfig: { defaults: { worldSize: pp } },
              }),
              rankOfStage: (stage) => stage,
              tpRank: 0,
            },
          ];
    return {
      on: "cubes",
      stages,
      pairs: (s) => `${at(sip, cubes[s] as number)} -> ${at(sip, cubes[s + 1] as number)}`,
      send: (s, out, into) => sendOver(links, s, out, into),
    };
  }
  throw new KbError(
    "RUNTIME_INVALID",
    `llama-pp: param pp=${pp} does not fit this grid (${shape}): a stage is a SIP (pp up to ${sips.length}) or, on one SIP, a cube (pp up to ${cubes.length}). Choose pp <= ${Math.max(sips.length, cubes.length)}, or a topology with more SIPs (e.g. --topology topologies/ref-4sip.yaml).`,
  );
}

async function sendOver(
  links: readonly Link[],
  stage: number,
  out: readonly DeviceTensor[],
  into: readonly DeviceTensor[],
): Promise<LaunchRecord[]> {
  const records: LaunchRecord[] = [];
  for (const { group, rankOfStage, tpRank } of links) {
    const from = rankOfStage(stage);
    const to = rankOfStage(stage + 1);
    const received = group.irecv(into[tpRank] as DeviceTensor, from, { rank: to });
    const sent = await group.send(out[tpRank] as DeviceTensor, to, { rank: from });
    await received.wait();
    records.push(sent.launch);
  }
  return records;
}
