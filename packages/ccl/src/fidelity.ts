import { KbError } from "@kb/errors";
import type { DeviceTensor, Simulator } from "@kb/runtime";
import { DTYPE_BYTES, Tensor } from "@kb/tensor";
import { type PeTerm, ringAllReduceModelNs } from "./cost-model.js";
import type { CollectiveDtype } from "./kernel-support.js";
import { type PieceWork, peParamsOf, pieceWork } from "./pe-term.js";
import { initProcessGroup } from "./process-group.js";
import { rankPlacement } from "./queue-check.js";
import type { RankGroup, RankScope } from "./ranks.js";

/** Options of {@link measureRingAllReduce}. */
export interface RingMeasureOptions {
  /** Bytes of each rank's buffer. */
  readonly bytes: number;
  readonly dtype?: CollectiveDtype;
  /** What a rank is (default `"sips"`). */
  readonly scope?: RankScope;
  /** Ranks (default: every SIP / cube / PE of the topology). */
  readonly worldSize?: number;
}

/** A ring all-reduce measured on the simulator next to the alpha-beta model of its ring. */
export interface RingMeasurement {
  /** Ranks. */
  readonly n: number;
  readonly bytes: number;
  readonly dtype: CollectiveDtype;
  /** Simulated time of the collective's launch (first PE start to last PE end), ns. */
  readonly measuredNs: number;
  /**
   * The model with the PE term (`ringAllReduceModelNs(n, a, b, S, pe)`: the PE's work per piece
   * from the topology's PE parameters, `pe-term.ts`), ns.
   */
  readonly modelNs: number;
  /** The per-hop model alone, `2 (n - 1) a + 2 (n - 1) / n * S / b`, ns. */
  readonly linkModelNs: number;
  /** The PE's work per piece the model used (rank 0's PE, one slot of `dtype`). */
  readonly work: PieceWork;
  /** a: the latency of the slowest hop's fabric route (sender PE_DMA to receiver PE_DMA), ns. */
  readonly hopLatencyNs: number;
  /** b: the bottleneck bandwidth of the narrowest hop's route, GB/s. */
  readonly bwGbs: number;
  /** measuredNs / modelNs. */
  readonly ratio: number;
  /** measuredNs / linkModelNs. */
  readonly linkRatio: number;
}

/**
 * Runs one `ring` all-reduce (sum, one PE per rank) of `bytes` per rank on `sim` and compares it
 * with `ringAllReduceModelNs` for the ring's hops: `a` and `b` are read off the fabric routes
 * the payloads take (the largest latency and the smallest bottleneck over the ring's hops), so
 * the model is the machine's own alpha-beta bound. The ring is uncontended only when nothing
 * else runs: use a fresh simulator.
 *
 * Throws `RUNTIME_INVALID` for a size that is not a whole number of elements, and what
 * `initProcessGroup` throws for a ring the topology does not have.
 */
export async function measureRingAllReduce(
  sim: Simulator,
  options: RingMeasureOptions,
): Promise<RingMeasurement> {
  const dtype = options.dtype ?? "f32";
  const scope = options.scope ?? "sips";
  const { bytes } = options;
  const count = bytes / DTYPE_BYTES[dtype];
  if (!(Number.isInteger(count) && count > 0)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `measureRingAllReduce: bytes must be a positive whole number of ${dtype} elements, got ${bytes}.`,
    );
  }
  const pg = initProcessGroup(sim, {
    backend: "ahbm",
    scope,
    lanes: 1,
    cclConfig: {
      allReduce: [{ algorithm: "ring" }],
      ...(options.worldSize !== undefined ? { defaults: { worldSize: options.worldSize } } : {}),
    },
  });
  const { group } = pg;
  const n = group.size;
  const tensors: DeviceTensor[] = [];
  for (let rank = 0; rank < n; rank++) {
    // Small integers: exact sums in every dtype.
    const values = Tensor.full([count], (rank % 7) - 3, dtype);
    const member = group.members[rank] as number;
    const where = scope === "sips" ? { sip: member } : scope === "cubes" ? { cube: member } : {};
    tensors.push(await sim.toDevice(values, { ...where, name: `ring${rank}` }));
  }
  const { launch } = await pg.allReduce(tensors, "sum");
  const { hopLatencyNs, bwGbs } = ringHops(sim, group);
  const measuredNs = launch.endNs - launch.startNs;
  const pe = peTermOf(sim, group, pg.slotBytes, dtype, pg.queueSlots);
  const modelNs = n > 1 ? ringAllReduceModelNs(n, hopLatencyNs, bwGbs, bytes, pe) : 0;
  const linkModelNs = n > 1 ? ringAllReduceModelNs(n, hopLatencyNs, bwGbs, bytes) : 0;
  return {
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

/**
 * The PE term of `group` on `sim`: the work per piece of one slot (`slotBytes` of `dtype`) of rank
 * 0's PE (`pieceWork` of `peParamsOf`), the slot size and the queue's slots.
 */
export function peTermOf(
  sim: Simulator,
  group: RankGroup,
  slotBytes: number,
  dtype: CollectiveDtype,
  queueSlots: number,
): PeTerm {
  const pe = peParamsOf(sim, rankPlacement(group, 0).pe);
  return { work: pieceWork(pe, slotBytes, dtype), chunkBytes: slotBytes, queueSlots };
}

/**
 * The alpha and beta of `group`'s ring on `sim`: the largest latency and the smallest bottleneck
 * bandwidth over the fabric routes of its hops (sender PE_DMA to receiver PE_DMA, both ways round);
 * 0 and 0 for one rank.
 */
export function ringHops(sim: Simulator, group: RankGroup): { hopLatencyNs: number; bwGbs: number } {
  const n = group.size;
  if (n === 1) return { hopLatencyNs: 0, bwGbs: 0 };
  let hopLatencyNs = 0;
  let bwGbs = Number.POSITIVE_INFINITY;
  for (let rank = 0; rank < n; rank++) {
    const from = rankPlacement(group, rank).pe;
    const to = rankPlacement(group, (rank + 1) % n).pe;
    for (const [a, b] of [
      [from, to],
      [to, from],
    ]) {
      const path = sim.machine.fabric.path(`${a}.pe_dma`, `${b}.pe_dma`, "sink");
      hopLatencyNs = Math.max(hopLatencyNs, path.latencyNs);
      bwGbs = Math.min(bwGbs, path.minBwGbs);
    }
  }
  return { hopLatencyNs, bwGbs };
}
