import type { TensorHandle, TL } from "@kb/tl";
import {
  type AllReduceArgs,
  bufferOf,
  chunkCount,
  combine,
  elementAddress,
  recvToScratch,
  type Span,
  split,
} from "../kernel-support.js";
import { laneOf, laneRing, mod, rankOf } from "../ranks.js";

/**
 * Ring all-reduce (Patarasuk and Yuan 2009; Thakur, Rabenseifner and Gropp 2005): a reduce-scatter
 * then an all-gather around the ring, each `n - 1` steps. Bandwidth-optimal: every rank sends
 * `2 (n - 1) / n` of the data; the latency is `2 (n - 1)` hops, so small messages prefer `tree`.
 *
 * Data: this lane's slice of the rank's buffer is cut into `n` segments; each segment into
 * `chunks` pieces of at most one IPCQ slot. The kernel runs chunk by chunk (all `2 (n - 1)` steps
 * of piece 0 of every segment, then piece 1, ...), so a rank starts the next chunk while the
 * previous one is still travelling: chunks pipeline around the ring. When a rank runs on several
 * PEs (lanes), odd lanes go round the ring backwards (`laneRing`), so both directions of every
 * link carry data.
 *
 * Step `s` of the reduce-scatter, at place `p` of the ring: send the partial sum of segment
 * `p - s - 1` (at step 0 the rank's own data) to `p + 1`, receive segment `p - s - 2` from `p - 1`,
 * add the rank's own data. After `n - 1` steps the rank holds segment `p` reduced over all ranks.
 * Step `s` of the all-gather: send segment `p - s`, receive segment `p - s - 1` and store it. Per chunk each rank sends
 * `2 (n - 1)` messages and receives as many.
 *
 * Queue rules it follows: a message is at most `slotBytes`; a send blocks only until it has a free
 * slot at the receiver (credit-based, `ipcq_slots` per queue), and every step sends before it
 * receives, so no rank waits for one that waits for it; a payload is copied out of its slot
 * during the receive (`recvToScratch`), so a sender that laps the queue cannot overwrite it.
 */
export async function ringAllReduce(tl: TL, args: AllReduceArgs): Promise<void> {
  const { group, op } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  const buffer = bufferOf(tl, args, rank);
  const { lane, lanes } = laneOf(tl, group);
  const mine = split(buffer.count, lanes, lane);
  if (n === 1 || mine.count === 0) return;
  // This lane's ring (odd lanes go the other way round, so both directions of every link carry
  // data); the steps below work with the rank's place in it.
  const ring = laneRing(group, rank, lane);
  const { position } = ring;
  const next = ring.next as string;
  const prev = ring.prev as string;
  const { dtype } = buffer;
  const chunks = chunkCount(Math.ceil(mine.count / n), args.slotBytes, dtype);
  // Piece `chunk` of segment `k` (element offsets in the buffer); the same on every rank.
  const piece = (k: number, chunk: number): Span => {
    const segment = split(mine.count, n, k);
    const part = split(segment.count, chunks, chunk);
    return { start: mine.start + segment.start + part.start, count: part.count };
  };
  const load = (span: Span) => tl.load(elementAddress(buffer, span.start), [span.count], dtype);
  const receive = (span: Span) => recvToScratch(tl, prev, span.count, dtype);

  for (let chunk = 0; chunk < chunks; chunk++) {
    // Everything a step allocates in TCM is released once its result has been sent on.
    const mark = tl.scratchMark();

    // Reduce-scatter.
    const first = piece(mod(position - 1, n), chunk);
    let outgoing: TensorHandle | null = first.count > 0 ? await load(first) : null;
    for (let step = 0; step < n - 1; step++) {
      if (outgoing !== null) await tl.send(next, outgoing);
      tl.scratchRelease(mark);
      const span = piece(mod(position - step - 2, n), chunk);
      if (span.count === 0) {
        outgoing = null;
        continue;
      }
      // Read the own data first: the neighbour's payload is on its way meanwhile.
      const own = await load(span);
      outgoing = await combine(tl, op, await receive(span), own);
    }
    // `outgoing` is segment `position` reduced over every rank: keep it, and start the all-gather.
    const reduced = piece(position, chunk);
    if (outgoing !== null) await tl.store(elementAddress(buffer, reduced.start), outgoing);

    // All-gather.
    for (let step = 0; step < n - 1; step++) {
      if (outgoing !== null) await tl.send(next, outgoing);
      tl.scratchRelease(mark);
      const span = piece(mod(position - step - 1, n), chunk);
      if (span.count === 0) {
        outgoing = null;
        continue;
      }
      const incoming = await receive(span);
      await tl.store(elementAddress(buffer, span.start), incoming);
      // The last segment received is the one the next rank reduced itself: nothing to pass on.
      outgoing = step < n - 2 ? incoming : null;
    }
    tl.scratchRelease(mark);
  }
}
