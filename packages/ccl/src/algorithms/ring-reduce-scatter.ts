import type { TensorHandle, TL } from "@kb/tl";
import {
  bufferOf,
  combine,
  elementAddress,
  kernelError,
  type ReduceScatterArgs,
  type Region,
  type Span,
  split,
} from "../kernel-support.js";
import { laneOf, laneRing, rankOf } from "../ranks.js";
import { RingStream, roundsFor } from "./ring-stream.js";

/**
 * Ring reduce-scatter: the first half of {@link ringAllReduce}. Each buffer is `n` equal segments;
 * after `n - 1` steps rank `r` holds segment `r` reduced over every rank, written to
 * `outputs[r]` or in place. Step `s`: send the partial of segment `r - s - 1` to `r + 1`, receive
 * segment `r - s - 2` from `r - 1` and combine it with the rank's own data. A lane takes the same
 * slice of every segment; each step streams it in slot-sized pieces with the partial in TCM
 * (`RingStream`, as the all-reduce does), in rounds when it does not fit the scratch; odd lanes go
 * round the ring backwards (`laneRing`). The last step stores each reduced piece as it is made.
 */
export async function ringReduceScatter(tl: TL, args: ReduceScatterArgs): Promise<void> {
  const { group, op } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  const buffer = bufferOf(tl, args, rank);
  const output = segmentRegion(tl, args.outputs, rank, buffer, n, "outputs");
  const { lane, lanes } = laneOf(tl, group);
  const segmentCount = buffer.count / n;
  const mine = split(segmentCount, lanes, lane); // within each segment
  if (mine.count === 0 || (n === 1 && output === null)) return;
  const { dtype } = buffer;
  const ring = laneRing(group, rank, lane);
  const stream = new RingStream(tl, ring, dtype, args.slotBytes, args.queueSlots);
  const rounds = roundsFor(tl, dtype, stream.pieceCount, 2, (r) => Math.ceil(mine.count / r));
  // Segments are the ranks': the one a place holds is that of the rank there. Step 0 sends the
  // segment of the rank one place back.
  const first = ring.rankAt(ring.position - 1);
  const address = (k: number, span: Span) => elementAddress(buffer, k * segmentCount + span.start);
  const outputAddress = (span: Span) =>
    output === null ? address(rank, span) : elementAddress(output, span.start);
  const load = (k: number, span: Span, into: TensorHandle) =>
    tl.load(address(k, span), [span.count], dtype, { out: into });

  for (let round = 0; round < rounds; round++) {
    const cut = split(mine.count, rounds, round);
    const pieces = stream.pieces({ start: mine.start + cut.start, count: cut.count });
    const mark = tl.scratchMark();
    const inFlight = tl.empty([cut.count], dtype);
    if (n === 1) {
      for (const [i, span] of pieces.entries())
        await tl.store(outputAddress(span), await load(rank, span, stream.at(inFlight, i, span)));
      tl.scratchRelease(mark);
      continue;
    }
    const landing = tl.empty([stream.pieceCount], dtype);
    const own = tl.empty([stream.pieceCount], dtype);
    let outgoing: TensorHandle[] = [];
    for (let s = 0; s < n - 1; s++) {
      const sending = outgoing;
      const k = ring.rankAt(ring.position - s - 2);
      outgoing = await stream.step(
        pieces.length,
        (t) =>
          s === 0
            ? load(first, pieces[t] as Span, stream.at(inFlight, t, pieces[t] as Span))
            : (sending[t] as TensorHandle),
        pieces,
        async (i, span) => {
          const theirs = await stream.receive(stream.at(landing, 0, span));
          const mine = await load(k, span, stream.at(own, 0, span));
          const reduced = await combine(tl, op, theirs, mine, stream.at(inFlight, i, span));
          // The last step's result is the rank's own segment, reduced: store it.
          if (s === n - 2) await tl.store(outputAddress(span), reduced);
          return reduced;
        },
      );
    }
    tl.scratchRelease(mark);
  }
}

/**
 * `regions[rank]` when given (a rank's own segment: `count / n` elements of the buffer's dtype),
 * else null; checks that the buffer cuts into `n` equal segments.
 */
export function segmentRegion(
  tl: TL,
  regions: readonly Region[] | undefined,
  rank: number,
  buffer: Region,
  n: number,
  what: string,
): Region | null {
  if (buffer.count % n !== 0) {
    throw kernelError(
      tl,
      `a buffer of ${buffer.count} elements does not cut into ${n} equal segments (one per rank); use a count divisible by ${n}.`,
    );
  }
  if (regions === undefined) return null;
  const region = Array.isArray(regions) ? regions[rank] : undefined;
  if (
    region === undefined ||
    regions.length !== n ||
    region.count !== buffer.count / n ||
    region.dtype !== buffer.dtype
  ) {
    throw kernelError(
      tl,
      `${what} must be one region per rank (${n}) of ${buffer.count / n} x ${buffer.dtype} (the buffer's ${buffer.count} elements / ${n} ranks).`,
    );
  }
  return region;
}
