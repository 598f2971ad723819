import type { TensorHandle, TL } from "@kb/tl";
import { type AllGatherArgs, bufferOf, elementAddress, type Span, split } from "../kernel-support.js";
import { laneOf, laneRing, rankOf } from "../ranks.js";
import { segmentRegion } from "./ring-reduce-scatter.js";
import { RingStream, roundsFor } from "./ring-stream.js";

/**
 * Ring all-gather: the second half of {@link ringAllReduce}. Each buffer is `n` equal segments;
 * rank `r` contributes segment `r` (from `inputs[r]`, copied into its own buffer too, or already in
 * place). Step `s`: send segment `r - s` to `r + 1`, receive segment `r - s - 1` from `r - 1`,
 * store it and pass it on at the next step. A lane takes the same slice of every segment; each
 * step streams it in slot-sized pieces through a TCM buffer (`RingStream`, as the all-reduce
 * does), in rounds when it does not fit the scratch; odd lanes go round the ring backwards
 * (`laneRing`).
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
  if (mine.count === 0 || (n === 1 && input === null)) return;
  const { dtype } = buffer;
  const ring = laneRing(group, rank, lane);
  const stream = new RingStream(tl, ring, dtype, args.slotBytes, args.queueSlots);
  const rounds = roundsFor(tl, dtype, stream.pieceCount, 0, (r) => Math.ceil(mine.count / r));
  const address = (k: number, span: Span) => elementAddress(buffer, k * segmentCount + span.start);
  // The rank's own piece: from its input (and copied into its segment), or in place.
  const source = (span: Span) => (input === null ? address(rank, span) : elementAddress(input, span.start));

  for (let round = 0; round < rounds; round++) {
    const cut = split(mine.count, rounds, round);
    const pieces = stream.pieces({ start: mine.start + cut.start, count: cut.count });
    const mark = tl.scratchMark();
    const inFlight = tl.empty([cut.count], dtype);
    const own = (t: number) => {
      const span = pieces[t] as Span;
      return tl.load(source(span), [span.count], dtype, { out: stream.at(inFlight, t, span) });
    };
    const copy =
      input === null
        ? undefined
        : (t: number, piece: TensorHandle) => tl.store(address(rank, pieces[t] as Span), piece);
    if (n === 1) {
      for (let t = 0; t < pieces.length; t++) await copy?.(t, await own(t));
      tl.scratchRelease(mark);
      continue;
    }
    let outgoing: TensorHandle[] = [];
    for (let s = 0; s < n - 1; s++) {
      const sending = outgoing;
      // The segment of the rank `s + 1` places back round this lane's ring.
      const k = ring.rankAt(ring.position - s - 1);
      outgoing = await stream.step(
        pieces.length,
        (t) => (s === 0 ? own(t) : (sending[t] as TensorHandle)),
        pieces,
        async (i, span) => {
          const piece = await stream.receive(stream.at(inFlight, i, span));
          await tl.store(address(k, span), piece);
          return piece;
        },
        s === 0 ? copy : undefined,
      );
    }
    tl.scratchRelease(mark);
  }
}
