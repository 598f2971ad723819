import {
  type AllReduceArgs,
  type AllToAllArgs,
  initProcessGroup,
  type ProcessGroup,
  type Region,
  ringPerCube,
  singleBlocks,
} from "@kb/ccl";
import { KbError } from "@kb/errors";
import type { DeviceTensor, Simulator } from "@kb/runtime";
import type { TL } from "@kb/tl";
import type { GridParams } from "../params.js";
import { placeRanks, type TpPlacement } from "./ranks.js";
import type { ReduceLaunch } from "./tp-all-reduce.js";

// Where a MoE layer's ranks live and how they talk. Rank r = g x tp + t is rank t of
// expert-parallel group g. With tp = 1 the ep ranks are placed as llama-layer's tensor-parallel
// ranks (cubes of the first SIP, or one cube per SIP) and the dispatch / combine all-to-all-v is
// one @kb/ccl process-group call. With tp > 1 a group is the first tp cubes of one SIP (SIP g),
// and the all-to-all runs between the SIPs, one ring per cube index side by side in one launch
// (rank t of every group exchanges with rank t of the others), while the expert outputs'
// all-reduce runs around each SIP's cube ring, all SIPs in one launch. The attention block is
// tensor parallel over all ep x tp ranks (llama-layer's placement and all-reduces).

/** A MoE layer's ranks, their grid, and the collectives between them. */
export interface MoePlacement {
  readonly ep: number;
  readonly tp: number;
  /** Every rank (ep x tp, group-major), their grid and the attention block's all-reduce. */
  readonly attention: TpPlacement;
  /**
   * The all-to-all-v of group-major rank tensors: `counts[g][d]` rows from group g to group d
   * (the same for each rank t of a group). Null for ep = 1.
   */
  readonly allToAll:
    | ((
        name: string,
        outputs: DeviceTensor[],
        inputs: DeviceTensor[],
        counts: number[][],
      ) => Promise<ReduceLaunch[]>)
    | null;
  /** The sum of each group's tp partial expert outputs, in place. Null for tp = 1. */
  readonly expertAllReduce: ((name: string, tensors: DeviceTensor[]) => Promise<ReduceLaunch[]>) | null;
}

/** The all-to-all-v of a process group whose ranks are the groups (tp = 1): one @kb/ccl launch. */
export function groupAllToAll(pg: ProcessGroup): NonNullable<MoePlacement["allToAll"]> {
  return async (name, outputs, inputs, counts) => {
    const result = await pg.allToAllSingle(outputs, inputs, undefined, counts);
    return [{ name: `${name} (${result.algorithm})`, record: result.launch }];
  };
}

/** llama-layer's placement of `ep` ranks, its refusal restated for the MoE layer's params. */
function placeEpRanks(sim: Simulator, params: GridParams, ep: number, kvHeads: number): TpPlacement {
  try {
    return placeRanks(sim, params, ep, kvHeads);
  } catch (error) {
    if (
      !(error instanceof KbError) ||
      error.code !== "RUNTIME_INVALID" ||
      !/does not fit this grid/.test(error.message)
    ) {
      throw error;
    }
    const whole = sim.grid(params.pes === undefined ? {} : { pes: params.pes });
    throw new KbError(
      "RUNTIME_INVALID",
      `moe-layer: ep=${ep} with tp=1 does not fit this grid (${whole.sips.length} SIP(s) x ${whole.cubes.length} cube(s)): a group is a cube, and the groups are cubes of the first SIP (ep up to ${whole.cubes.length}: 1, 2 or all of them) or one cube per SIP (ep = ${whole.sips.length}); with tp > 1, group g is the first tp cubes of SIP g.`,
    );
  }
}

const regionOf = (t: DeviceTensor): Region => ({ address: t.address, count: t.size, dtype: t.dtype });

/**
 * Places `ep x tp` ranks (see the module comment). Throws `RUNTIME_INVALID` when they do not fit
 * the grid, naming the placements that do.
 */
export function placeMoe(
  sim: Simulator,
  params: GridParams,
  ep: number,
  tp: number,
  kvHeads: number,
): MoePlacement {
  if (tp === 1) {
    const attention = placeEpRanks(sim, params, ep, kvHeads);
    if (ep === 1) return { ep, tp, attention, allToAll: null, expertAllReduce: null };
    const first = attention.ranks[0] as { sip: number; cube: number };
    const oneSip = attention.ranks.every((r) => r.sip === first.sip);
    const pg = initProcessGroup(sim, {
      backend: "ahbm",
      ...(oneSip
        ? { scope: "cubes" as const, sip: first.sip }
        : { scope: "sips" as const, cube: first.cube }),
      cclConfig: { defaults: { worldSize: ep } },
    });
    return {
      ep,
      tp,
      attention,
      allToAll: groupAllToAll(pg),
      expertAllReduce: null,
    };
  }
  const whole = sim.grid(params.pes === undefined ? {} : { pes: params.pes });
  if (ep > whole.sips.length || tp > whole.cubes.length) {
    throw new KbError(
      "RUNTIME_INVALID",
      `moe-layer: ep=${ep} x tp=${tp} needs ${ep} SIP(s) of ${tp} cubes (with tp > 1 a group is the first tp cubes of one SIP); this topology has ${whole.sips.length} SIP(s) of ${whole.cubes.length} cube(s). Use tp=1 (the ep ranks on cubes), or a topology with more SIPs (--topology ref-4sip).`,
    );
  }
  const attention = placeRanks(sim, { sips: ep, cubes: tp, pes: params.pes }, ep * tp, kvHeads);
  const cubeRing = initProcessGroup(sim, {
    backend: "ahbm",
    scope: "cubes",
    sip: 0,
    cclConfig: { defaults: { worldSize: tp } },
  });
  const grid = attention.grid;
  const launch = async <A>(
    name: string,
    args: { kernel: (tl: TL, a: A) => Promise<void>; args: A }[],
    by: 1 | 2,
  ) => {
    const record = await sim.launch(
      ((tl: TL, list: typeof args) => {
        const mine = list[tl.programId(by)] as (typeof args)[number];
        return mine.kernel(tl, mine.args);
      }) as never,
      { grid, args: [args] as never, name },
    );
    return [{ name, record }];
  };
  const expertAllReduce =
    ep === 1
      ? async (name: string, tensors: DeviceTensor[]) => {
          const result = await cubeRing.allReduce(tensors, "sum");
          return [{ name: `${name} (${result.algorithm}, cubes)`, record: result.launch }];
        }
      : async (name: string, tensors: DeviceTensor[]) => {
          const args = Array.from({ length: ep }, (_, g) => {
            const mine = tensors.slice(g * tp, (g + 1) * tp);
            const algorithm = cubeRing.algorithmFor("allReduce", (mine[0] as DeviceTensor).nbytes);
            const a: AllReduceArgs = {
              group: cubeRing.group,
              buffers: mine.map(regionOf),
              op: "sum",
              slotBytes: cubeRing.slotBytes,
              queueSlots: cubeRing.queueSlots,
            };
            return { kernel: algorithm.kernel as (tl: TL, a: AllReduceArgs) => Promise<void>, args: a };
          });
          return launch(`${name} (cube rings)`, args, 2);
        };
  if (ep === 1) return { ep, tp, attention, allToAll: null, expertAllReduce };
  const sipRing: ProcessGroup = initProcessGroup(sim, {
    backend: "ahbm",
    scope: "sips",
    cube: 0,
    cclConfig: { defaults: { worldSize: ep } },
  });
  const allToAll = async (
    name: string,
    outputs: DeviceTensor[],
    inputs: DeviceTensor[],
    counts: number[][],
  ) => {
    const args = Array.from({ length: tp }, (_, t) => {
      const pick = (list: DeviceTensor[]) =>
        Array.from({ length: ep }, (_, g) => list[g * tp + t] as DeviceTensor);
      const ins = pick(inputs);
      const blocks = singleBlocks(pick(outputs), ins, ep, undefined, counts);
      const algorithm = sipRing.algorithmFor("allToAll", (ins[0] as DeviceTensor).nbytes);
      const a: AllToAllArgs = {
        group: ringPerCube(sipRing.group),
        ...blocks,
        slotBytes: sipRing.slotBytes,
        queueSlots: sipRing.queueSlots,
      };
      return { kernel: algorithm.kernel as (tl: TL, a: AllToAllArgs) => Promise<void>, args: a };
    });
    return launch(`${name} (SIP rings)`, args, 1);
  };
  return { ep, tp, attention, allToAll, expertAllReduce };
}
