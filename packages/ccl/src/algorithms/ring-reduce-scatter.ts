import type { TensorHandle, TL } from "@kb/tl";
import {
  bufferOf,
  chunkCount,
  combine,
  elementAddress,
  kernelError,
  type ReduceScatterArgs,
  type Region,
  recvToScratch,
  type Span,
  split,
} from "../kernel-support.js";
import { laneOf, laneRing, rankOf } from "../ranks.js";

/**
 * Ring reduce-scatter: the first half of {@link ringAllReduce}. Each buffer is `n` equal segments;
 * after `n - 1` steps rank `r` holds segment `r` reduced over every rank, written to
 * `outputs[r]` or in place. Step `s`: send the partial of segment `r - s - 1` to `r + 1`, receive
 * segment `r - s - 2` from `r - 1` and add the rank's own data. A lane takes the same slice of
 * every segment; each slice goes in chunks of at most one slot, chunk by chunk, so chunks
 * pipeline; odd lanes go round the ring backwards (`laneRing`). Per chunk each rank sends
 * `n - 1` messages.
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
  if (mine.count === 0) return;
  const { dtype } = buffer;
  const ring = laneRing(group, rank, lane);
  const chunks = chunkCount(mine.count, args.slotBytes, dtype);
  const part = (chunk: number): Span => {
    const cut = split(mine.count, chunks, chunk);
    return { start: mine.start + cut.start, count: cut.count };
  };
  const load = (k: number, span: Span) =>
    tl.load(elementAddress(buffer, k * segmentCount + span.start), [span.count], dtype);
  const outputAddress = (span: Span) =>
    output === null
      ? elementAddress(buffer, rank * segmentCount + span.start)
      : elementAddress(output, span.start);

  for (let chunk = 0; chunk < chunks; chunk++) {
    const span = part(chunk);
    if (span.count === 0) continue;
    const mark = tl.scratchMark();
    if (n === 1) {
      if (output !== null) await tl.store(outputAddress(span), await load(0, span));
      tl.scratchRelease(mark);
      continue;
    }
    // Segments are the ranks': the one a place holds is that of the rank there.
    let outgoing: TensorHandle = await load(ring.rankAt(ring.position - 1), span);
    for (let step = 0; step < n - 1; step++) {
      await tl.send(ring.next as string, outgoing);
      tl.scratchRelease(mark);
      const own = await load(ring.rankAt(ring.position - step - 2), span);
      const incoming = await recvToScratch(tl, ring.prev as string, span.count, dtype);
      outgoing = await combine(tl, op, incoming, own);
    }
    await tl.store(outputAddress(span), outgoing);
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
