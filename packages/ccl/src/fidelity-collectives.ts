import { KbError } from "@kb/errors";
import type { DeviceTensor, LaunchRecord, Simulator } from "@kb/runtime";
import { DTYPE_BYTES, Tensor } from "@kb/tensor";
import { routeOf } from "./algorithms/p2p.js";
import {
  chainModelNs,
  gatherModelNs,
  p2pModelNs,
  ringAllToAllModelNs,
  scatterModelNs,
} from "./cost-model.js";
import { peTermOf, type RingMeasurement, ringHops } from "./fidelity.js";
import type { CollectiveDtype } from "./kernel-support.js";
import { initProcessGroup } from "./process-group.js";

/** The collectives {@link measureCollective} runs. */
export const MEASURED_COLLECTIVES = ["allToAll", "reduce", "gather", "scatter", "sendRecv"] as const;

/** One of {@link MEASURED_COLLECTIVES}. */
export type MeasuredCollective = (typeof MEASURED_COLLECTIVES)[number];

/** Options of {@link measureCollective}. */
export interface CollectiveMeasureOptions {
  readonly collective: MeasuredCollective;
  /**
   * Bytes per rank: each rank's input (allToAll: `n` blocks of `bytes / n`), reduce's buffer,
   * gather's and scatter's block per rank, the message of sendRecv.
   */
  readonly bytes: number;
  readonly dtype?: CollectiveDtype;
  /** SIP ranks (default: every SIP of the topology). */
  readonly worldSize?: number;
  /** sendRecv: the receiving rank (default 1); rank 0 sends. */
  readonly peer?: number;
}

/** A collective measured on the simulator next to its alpha-beta model with the PE term (`modelNs`). */
export interface CollectiveMeasurement extends RingMeasurement {
  readonly collective: MeasuredCollective;
  /** The model's formula, as `bench:ccl` prints it. */
  readonly formula: string;
}

const FORMULAS: Record<MeasuredCollective, string> = {
  allToAll: "(n-1)a + (n-1)/2 S/b",
  reduce: "(n-1)a + (S + (n-2)c)/b",
  gather: "(n-1)a + (n-1)S/b",
  scatter: "(n-1)a + (n-1)S/b",
  sendRecv: "h a + (S + (h-1)c)/b",
};

/**
 * Runs one collective of `bytes` per rank (SIP ranks, one PE each, root 0, sum) on `sim` and
 * compares it with its model in `cost-model.ts` with the PE term (`linkModelNs`: without), `a` and
 * `b` read off the ring's hops as `measureRingAllReduce` does. Use a fresh simulator: the models assume nothing else runs.
 *
 * Throws `RUNTIME_INVALID` for a size that is not a whole number of elements (of `n` equal blocks
 * for allToAll), an unknown collective, or a sendRecv peer that is not another rank.
 */
export async function measureCollective(
  sim: Simulator,
  options: CollectiveMeasureOptions,
): Promise<CollectiveMeasurement> {
  const { collective, bytes } = options;
  const dtype = options.dtype ?? "f32";
  if (!(MEASURED_COLLECTIVES as readonly string[]).includes(collective)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `measureCollective: unknown collective ${JSON.stringify(collective)}; use ${MEASURED_COLLECTIVES.join(", ")}.`,
    );
  }
  const pg = initProcessGroup(sim, {
    backend: "ahbm",
    scope: "sips",
    lanes: 1,
    ...(options.worldSize !== undefined ? { cclConfig: { defaults: { worldSize: options.worldSize } } } : {}),
  });
  const n = pg.getWorldSize();
  const count = bytes / DTYPE_BYTES[dtype];
  const blocks = collective === "allToAll" ? n : 1;
  if (!(Number.isInteger(count / blocks) && count > 0)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `measureCollective: bytes must be a positive whole number of ${blocks > 1 ? `${n} equal blocks of ` : ""}${dtype} elements, got ${bytes}.`,
    );
  }
  const { hopLatencyNs, bwGbs } = ringHops(sim, pg.group);
  const chunk = pg.slotBytes;
  const pe = peTermOf(sim, pg.group, chunk, dtype, pg.queueSlots);
  let launch: LaunchRecord;
  let modelNs: number;
  let linkModelNs: number;
  const up = (rank: number, name: string, size = count) =>
    sim.toDevice(Tensor.full([size], (rank % 7) - 3, dtype), { sip: rank, name });
  const perRank = async (name: string, size = count) => {
    const out: DeviceTensor[] = [];
    for (let rank = 0; rank < n; rank++) out.push(await up(rank, `${name}${rank}`, size));
    return out;
  };
  const atRoot = async (name: string) => {
    const out: DeviceTensor[] = [];
    for (let rank = 0; rank < n; rank++) out.push(await up(0, `${name}${rank}`));
    return out;
  };
  switch (collective) {
    case "allToAll":
      ({ launch } = await pg.allToAllSingle(await perRank("out"), await perRank("in")));
      modelNs = ringAllToAllModelNs(n, hopLatencyNs, safe(bwGbs), bytes, pe);
      linkModelNs = ringAllToAllModelNs(n, hopLatencyNs, safe(bwGbs), bytes);
      break;
    case "reduce":
      ({ launch } = await pg.reduce(await perRank("x"), 0, "sum"));
      modelNs = chainModelNs(n, hopLatencyNs, safe(bwGbs), bytes, chunk, pe.work);
      linkModelNs = chainModelNs(n, hopLatencyNs, safe(bwGbs), bytes, chunk);
      break;
    case "gather":
      ({ launch } = await pg.gather(await perRank("x"), await atRoot("g")));
      modelNs = gatherModelNs(n, hopLatencyNs, safe(bwGbs), bytes, pe);
      linkModelNs = gatherModelNs(n, hopLatencyNs, safe(bwGbs), bytes);
      break;
    case "scatter":
      ({ launch } = await pg.scatter(await perRank("x"), await atRoot("s")));
      modelNs = scatterModelNs(n, hopLatencyNs, safe(bwGbs), bytes, pe);
      linkModelNs = scatterModelNs(n, hopLatencyNs, safe(bwGbs), bytes);
      break;
    default: {
      const peer = options.peer ?? 1;
      const receive = pg.irecv(await up(peer, "received"), 0, { rank: peer });
      ({ launch } = await pg.send(await up(0, "sent"), peer));
      await receive.wait();
      const hops = routeOf(pg.group, 0, peer).ranks.length - 1;
      modelNs = p2pModelNs(hops, hopLatencyNs, safe(bwGbs), bytes, chunk, pe.work);
      linkModelNs = p2pModelNs(hops, hopLatencyNs, safe(bwGbs), bytes, chunk);
    }
  }
  const measuredNs = launch.endNs - launch.startNs;
  return {
    collective,
    formula: FORMULAS[collective],
    n,
    bytes,
    dtype,
    measuredNs,
    modelNs,
    linkModelNs,
    work: pe.work,
    hopLatencyNs,
    bwGbs,
    ratio: modelNs > 0 ? measuredNs / modelNs : 1,
    linkRatio: linkModelNs > 0 ? measuredNs / linkModelNs : 1,
  };
}

/** A bandwidth the models accept for one rank (where they give 0 anyway). */
function safe(bwGbs: number): number {
  return bwGbs > 0 ? bwGbs : 1;
}
