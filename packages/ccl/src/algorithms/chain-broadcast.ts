import type { TL } from "@kb/tl";
import {
  type BroadcastArgs,
  bufferOf,
  chunkCount,
  elementAddress,
  kernelError,
  recvToScratch,
  split,
} from "../kernel-support.js";
import { laneOf, laneRing, mod, rankOf } from "../ranks.js";

/**
 * Pipelined chain broadcast: the root sends its buffer chunk by chunk to `root + 1`, every rank
 * passes each chunk on to the next one and stores it, the rank before the root only stores. The
 * chain is `n - 1` hops long, but chunks follow each other down it, so a large message costs
 * about `(n - 2 + chunks)` chunk times rather than `(n - 1) x chunks`. Each rank but the last
 * sends `chunks` messages.
 */
export async function chainBroadcast(tl: TL, args: BroadcastArgs): Promise<void> {
  const { group, root } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  const buffer = bufferOf(tl, args, rank);
  if (!Number.isInteger(root) || root < 0 || root >= n) {
    throw kernelError(tl, `broadcast root must be a rank 0..${n - 1}, got ${root}.`);
  }
  const { lane, lanes } = laneOf(tl, group);
  const mine = split(buffer.count, lanes, lane);
  if (n === 1 || mine.count === 0) return;
  const { dtype } = buffer;
  // Odd lanes run the chain the other way round the ring (both directions of the links work).
  const ring = laneRing(group, rank, lane);
  const position = mod(ring.position - (ring.reverse ? mod(-root, n) : root), n); // 0: root, n - 1: end
  const chunks = chunkCount(mine.count, args.slotBytes, dtype);

  for (let chunk = 0; chunk < chunks; chunk++) {
    const cut = split(mine.count, chunks, chunk);
    const address = elementAddress(buffer, mine.start + cut.start);
    const mark = tl.scratchMark();
    if (position === 0) {
      await tl.send(ring.next as string, await tl.load(address, [cut.count], dtype));
    } else {
      const incoming = await recvToScratch(tl, ring.prev as string, cut.count, dtype);
      // Pass it on first: the rest of the chain waits for it, the store does not.
      if (position < n - 1) await tl.send(ring.next as string, incoming);
      await tl.store(address, incoming);
    }
    tl.scratchRelease(mark);
  }
}
