import type { TensorHandle, TL } from "@kb/tl";
import {
  type AllGatherArgs,
  bufferOf,
  chunkCount,
  elementAddress,
  recvToScratch,
  type Span,
  split,
} from "../kernel-support.js";
import { laneOf, laneRing, rankOf } from "../ranks.js";
import { segmentRegion } from "./ring-reduce-scatter.js";

/**
 * Ring all-gather: the second half of {@link ringAllReduce}. Each buffer is `n` equal segments;
 * rank `r` contributes segment `r` (from `inputs[r]`, copied into its own buffer too, or already in
 * place). Step `s`: send segment `r - s` to `r + 1`, receive segment `r - s - 1` from `r - 1`,
 * store it and pass it on at the next step. A lane takes the same slice of every segment, in
 * chunks of at most one slot that pipeline; odd lanes go round the ring backwards (`laneRing`).
 * Per chunk each rank sends `n - 1` messages.
 */
export async function ringAllGather(tl: TL, args: AllGatherArgs): Promise<void> {
  const { group } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  const buffer = bufferOf(tl, args, rank);
  const input = segmentRegion(tl, args.inputs, rank, buffer, n, "inputs");
  const { lane, lanes } = laneOf(tl, group);
  const segmentCount = buffer.count / n;
  const mine = split(segmentCount, lanes, lane);
  if (mine.count === 0) return;
  const { dtype } = buffer;
  const ring = laneRing(group, rank, lane);
  const chunks = chunkCount(mine.count, args.slotBytes, dtype);
  const at = (k: number, span: Span) => elementAddress(buffer, k * segmentCount + span.start);

  for (let chunk = 0; chunk < chunks; chunk++) {
    const cut = split(mine.count, chunks, chunk);
    const span = { start: mine.start + cut.start, count: cut.count };
    if (span.count === 0) continue;
    const mark = tl.scratchMark();
    let outgoing: TensorHandle | null = null;
    if (input !== null) {
      outgoing = await tl.load(elementAddress(input, span.start), [span.count], dtype);
      await tl.store(at(rank, span), outgoing);
    } else if (n > 1) {
      outgoing = await tl.load(at(rank, span), [span.count], dtype);
    }
    for (let step = 0; step < n - 1; step++) {
      if (outgoing !== null) await tl.send(ring.next as string, outgoing);
      tl.scratchRelease(mark);
      const incoming = await recvToScratch(tl, ring.prev as string, span.count, dtype);
      // The segment of the rank `step + 1` places back round this lane's ring.
      await tl.store(at(ring.rankAt(ring.position - step - 1), span), incoming);
      // The last segment received came from rank + 1 itself: nothing to pass on.
      outgoing = step < n - 2 ? incoming : null;
    }
    tl.scratchRelease(mark);
  }
}
