import type { TensorHandle, TL } from "@kb/tl";
import {
  type AllReduceArgs,
  bufferOf,
  combine,
  elementAddress,
  type ReduceOp,
  type Region,
  type Span,
  split,
} from "../kernel-support.js";
import { laneOf, laneRing, mod, rankOf } from "../ranks.js";
import { RingStream, roundsFor } from "./ring-stream.js";

/**
 * Ring all-reduce (Patarasuk and Yuan 2009; Thakur, Rabenseifner and Gropp 2005): a reduce-scatter
 * then an all-gather around the ring, each `n - 1` steps. Bandwidth-optimal: every rank sends
 * `2 (n - 1) / n` of the data; the latency is `2 (n - 1)` hops, so small messages prefer `tree`.
 *
 * Data: this lane's slice of the rank's buffer is cut into `n` segments. Step `s` of the
 * reduce-scatter, at place `p` of the ring: send the partial result of segment `p - s - 1` (at
 * step 0 the rank's own data) to `p + 1`; receive segment `p - s - 2` from `p - 1` and combine it
 * with the rank's own data. After `n - 1` steps the rank holds segment `p` reduced over all ranks.
 * Step `s` of the all-gather: send segment `p - s`, receive segment `p - s - 1` and store it.
 *
 * Each step moves a whole segment as a stream of slot-sized pieces (`RingStream`), and a step
 * starts when the previous one has arrived (the classic store-and-forward ring its cost model
 * describes). The segment in flight stays in TCM: what a step receives and combines is written
 * over the pieces it has just sent (a send takes its payload when it is issued), so each step's
 * result is the next step's message and nothing goes back to HBM until the reduced segments are
 * stored. Within a step the rank sends `queueSlots / 2` pieces ahead of the one it receives, so
 * the link stays busy while payloads and credits travel (`queueSlots`: the IPCQ's slots; without
 * it, one piece at a time). A slice whose segment does not fit the kernel's TCM scratch is
 * all-reduced in rounds of parts that do. When a rank runs on several PEs (lanes), odd lanes go round the ring
 * backwards (`laneRing`), so both directions of every link carry data.
 */
export async function ringAllReduce(tl: TL, args: AllReduceArgs): Promise<void> {
  const { group } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  const buffer = bufferOf(tl, args, rank);
  const { lane, lanes } = laneOf(tl, group);
  const mine = split(buffer.count, lanes, lane);
  if (n === 1 || mine.count === 0) return;
  const ring = laneRing(group, rank, lane);
  const stream = new RingStream(tl, ring, buffer.dtype, args.slotBytes, args.queueSlots);
  // One segment and two pieces (received, own data) must fit the scratch: else go in rounds.
  const rounds = roundsFor(tl, buffer.dtype, stream.pieceCount, 2, (r) =>
    Math.ceil(Math.ceil(mine.count / r) / n),
  );
  for (let round = 0; round < rounds; round++) {
    const part = split(mine.count, rounds, round);
    await ringRound(tl, args.op, n, buffer, ring.position, stream, {
      start: mine.start + part.start,
      count: part.count,
    });
  }
}

/**
 * One ring all-reduce over `part` of the rank's `buffer` (one segment of it fits in TCM), for the
 * rank at `position` of an `n`-place ring.
 */
async function ringRound(
  tl: TL,
  op: ReduceOp,
  n: number,
  buffer: Region,
  position: number,
  stream: RingStream,
  part: Span,
) {
  const { dtype } = buffer;
  // The pieces of segment `k` of the part: the same on every rank.
  const piecesOf = (k: number): Span[] => {
    const cut = split(part.count, n, mod(k, n));
    return stream.pieces({ start: part.start + cut.start, count: cut.count });
  };
  const address = (span: Span) => elementAddress(buffer, span.start);
  const load = (span: Span, into: TensorHandle) => tl.load(address(span), [span.count], dtype, { out: into });

  const mark = tl.scratchMark();
  // The segment in flight (piece `i` at element `i * pieceCount`), a landing piece for received
  // payloads and one for the own data they are combined with: written, never filled.
  const inFlight = tl.empty([Math.ceil(part.count / n)], dtype);
  const landing = tl.empty([stream.pieceCount], dtype);
  const own = tl.empty([stream.pieceCount], dtype);
  // What a reduce-scatter step does with received piece `i`: combine it with the rank's own data
  // into the segment in flight.
  const reduce = async (i: number, span: Span) => {
    const theirs = await stream.receive(stream.at(landing, 0, span));
    const mine = await load(span, stream.at(own, 0, span));
    return combine(tl, op, theirs, mine, stream.at(inFlight, i, span));
  };

  // Reduce-scatter. Step 0 sends the rank's own data of segment `p - 1`, loaded piece by piece.
  const first = piecesOf(position - 1);
  let outgoing = await stream.step(
    first.length,
    (t) => load(first[t] as Span, stream.at(inFlight, t, first[t] as Span)),
    piecesOf(position - 2),
    reduce,
  );
  for (let s = 1; s < n - 1; s++) {
    const sending = outgoing;
    outgoing = await stream.step(
      sending.length,
      (t) => sending[t] as TensorHandle,
      piecesOf(position - s - 2),
      reduce,
    );
  }

  // All-gather. `outgoing` is segment `p` reduced over every rank: step 0 passes it on and stores
  // each piece once it is sent; every step stores what it receives and passes it on.
  const reduced = piecesOf(position);
  for (let s = 0; s < n - 1; s++) {
    const sending = outgoing;
    outgoing = await stream.step(
      sending.length,
      (t) => sending[t] as TensorHandle,
      piecesOf(position - s - 1),
      async (i, span) => {
        const piece = await stream.receive(stream.at(inFlight, i, span));
        await tl.store(address(span), piece);
        return piece;
      },
      s === 0 ? (t, piece) => tl.store(address(reduced[t] as Span), piece) : undefined,
    );
  }
  tl.scratchRelease(mark);
}
