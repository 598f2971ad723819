import type { TL } from "@kb/tl";
import type { RankGroup } from "../ranks.js";
import { rankOf } from "../ranks.js";

/** What {@link ringBarrier} takes. */
export interface BarrierArgs {
  readonly group: RankGroup;
}

/**
 * A barrier on the ring: a 4-byte token goes from rank 0 round the ring and back (every rank has
 * arrived), then round again as far as rank `n - 1` (every rank may leave). No rank returns before
 * every rank has started; `2n - 1` hops. Moves no data. Run it on one PE per rank.
 */
export async function ringBarrier(tl: TL, args: BarrierArgs): Promise<void> {
  const { group } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  if (n === 1) return;
  const next = group.next[rank] as string;
  const prev = group.prev[rank] as string;
  const token = { shape: [1], dtype: "f32" } as const;
  if (rank === 0) {
    await tl.send(next, tl.zeros([1], "f32")); // arrival round
    const arrived = await tl.recv(prev, token);
    await tl.send(next, arrived); // release round
  } else {
    await tl.send(next, await tl.recv(prev, token));
    const release = await tl.recv(prev, token);
    if (rank < n - 1) await tl.send(next, release);
  }
}
