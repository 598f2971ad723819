import type { TL } from "@kb/tl";
import {
  COLLECTIVE_DTYPES,
  chunkCount,
  elementAddress,
  kernelError,
  type Region,
  recvToScratch,
  type Span,
  split,
} from "../kernel-support.js";
import { laneOf, mod, type RankGroup, rankOf } from "../ranks.js";

/** One point-to-point transfer: rank `src`'s region `from` into rank `dst`'s region `to`. */
export interface Transfer {
  readonly src: number;
  readonly dst: number;
  readonly from: Region;
  readonly to: Region;
}

/** The arguments of {@link p2pTransfers}. */
export interface P2PArgs {
  readonly group: RankGroup;
  /** In the order the ranks posted them: transfers between the same two ranks arrive in it. */
  readonly transfers: readonly Transfer[];
  /** Largest payload of one `tl.send`, bytes. */
  readonly slotBytes: number;
}

/**
 * The ranks a transfer passes, from `src` to `dst`, the shorter way round the ring (forwards on a
 * tie): neighbours are one hop, the rank opposite on a ring of `n` is `n / 2`.
 */
export function routeOf(group: RankGroup, src: number, dst: number): { ranks: number[]; forward: boolean } {
  const n = group.size;
  const ahead = mod(dst - src, n);
  const forward = ahead <= n - ahead;
  const hops = forward ? ahead : n - ahead;
  return { ranks: Array.from({ length: hops + 1 }, (_, i) => mod(src + (forward ? i : -i), n)), forward };
}

/**
 * Point-to-point transfers (`send` / `recv`, `batchIsendIrecv`) as one kernel on every rank: each
 * goes the shorter way round the ring of single hops, forwarded chunk by chunk by the ranks on
 * the way, so one of `h` hops takes `h a + (S + (h - 1) c) / b` (`p2pModelNs`). The ranks take
 * chunk `t` of every transfer in the order the transfers were posted, then chunk `t + 1`: transfers
 * on different links run at the same time, and the order is one for all ranks, so they never wait
 * on each other in a circle. A lane moves the same slice of every transfer.
 */
export async function p2pTransfers(tl: TL, args: P2PArgs): Promise<void> {
  const { group, transfers } = args;
  const rank = rankOf(tl, group);
  const { lane, lanes } = laneOf(tl, group);
  const plans = transfers.map((transfer, index) => {
    const { from, to } = transfer;
    if (from.count !== to.count || from.dtype !== to.dtype) {
      throw kernelError(
        tl,
        `transfer ${index}: rank ${transfer.src} sends ${from.count} x ${from.dtype}, rank ${transfer.dst} expects ${to.count} x ${to.dtype}; they must match.`,
      );
    }
    if (!(COLLECTIVE_DTYPES as readonly string[]).includes(from.dtype)) {
      throw kernelError(
        tl,
        `transfer ${index}: dtype ${from.dtype} is not supported; use ${COLLECTIVE_DTYPES.join(", ")}.`,
      );
    }
    const { ranks, forward } = routeOf(group, transfer.src, transfer.dst);
    const mine = split(from.count, lanes, lane);
    const count = mine.count === 0 ? 0 : chunkCount(mine.count, args.slotBytes, from.dtype);
    const chunks: Span[] = Array.from({ length: count }, (_, c) => {
      const cut = split(mine.count, count, c);
      return { start: mine.start + cut.start, count: cut.count };
    });
    const out = forward ? group.next[rank] : group.prev[rank];
    const back = forward ? group.prev[rank] : group.next[rank];
    return { transfer, at: ranks.indexOf(rank), last: ranks.length - 1, chunks, out, back };
  });
  const rounds = Math.max(0, ...plans.map((plan) => plan.chunks.length));
  for (let t = 0; t < rounds; t++) {
    for (const { transfer, at, last, chunks, out, back } of plans) {
      const chunk = chunks[t];
      if (chunk === undefined || at < 0) continue;
      const { from, to } = transfer;
      const mark = tl.scratchMark();
      if (at === 0) {
        const values = await tl.load(elementAddress(from, chunk.start), [chunk.count], from.dtype);
        if (last === 0) await tl.store(elementAddress(to, chunk.start), values);
        else await tl.send(out as string, values);
      } else {
        const values = await recvToScratch(tl, back as string, chunk.count, from.dtype);
        if (at === last) await tl.store(elementAddress(to, chunk.start), values);
        else await tl.send(out as string, values);
      }
      tl.scratchRelease(mark);
    }
  }
}
