import { DTYPE_BYTES } from "@kb/tensor";
import { SCRATCH_ALIGN, type TensorHandle, type TL } from "@kb/tl";
import {
  type AllReduceArgs,
  bufferOf,
  combine,
  elementAddress,
  kernelError,
  type Span,
  slotElements,
  split,
} from "../kernel-support.js";
import { laneOf, laneRing, mod, rankOf } from "../ranks.js";

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
 * Each step moves a whole segment as a stream of slot-sized pieces, and a step starts when the
 * previous one has arrived (the classic store-and-forward ring its cost model describes). The
 * segment in flight stays in TCM: what a step receives and combines is written over the pieces it
 * has just sent (a send takes its payload when it is issued), so each step's result is the next
 * step's message and nothing goes back to HBM until the reduced segments are stored. Within a
 * step the rank sends `queueSlots / 2` pieces ahead of the one it receives, so the link stays
 * busy while payloads and credits travel (`queueSlots`: the IPCQ's slots; without it, one piece
 * at a time). A slice whose segment does not fit the kernel's TCM scratch is all-reduced in
 * rounds of parts that do. When a rank runs on several PEs (lanes), odd lanes go round the ring
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
  const piece = slotElements(args.slotBytes, buffer.dtype);
  // One segment, one piece received and one piece of own data must fit the scratch at once
  // (each allocation rounded up to SCRATCH_ALIGN bytes).
  const size = DTYPE_BYTES[buffer.dtype];
  const aligned = (bytes: number) => Math.ceil(bytes / SCRATCH_ALIGN) * SCRATCH_ALIGN;
  const free = tl.scratchUsage.bytes - tl.scratchUsage.used;
  const room = Math.floor(
    (Math.floor((free - 2 * aligned(piece * size)) / SCRATCH_ALIGN) * SCRATCH_ALIGN) / size,
  );
  if (room < piece) {
    throw kernelError(
      tl,
      `ring all-reduce needs TCM scratch for 3 messages of ${piece} elements, but ${free} bytes are free; use smaller slotBytes.`,
    );
  }
  let rounds = Math.ceil(Math.ceil(mine.count / n) / room);
  while (Math.ceil(Math.ceil(mine.count / rounds) / n) > room) rounds++;
  for (let round = 0; round < rounds; round++) {
    const part = split(mine.count, rounds, round);
    await ringRound(tl, args, { start: mine.start + part.start, count: part.count }, lane);
  }
}

/** One ring all-reduce over `part` of the rank's buffer (one segment of it fits in TCM). */
async function ringRound(tl: TL, args: AllReduceArgs, part: Span, lane: number): Promise<void> {
  const { group, op } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  const buffer = bufferOf(tl, args, rank);
  const { dtype } = buffer;
  const ring = laneRing(group, rank, lane);
  const { position } = ring;
  const next = ring.next as string;
  const prev = ring.prev as string;
  const pieceCount = slotElements(args.slotBytes, dtype);
  // Pieces sent ahead of the one received: half the queue covers the way there, the other half
  // the credit's way back, so a rank that keeps up never waits for a free slot.
  const lag = Math.floor((args.queueSlots ?? 1) / 2);
  // Segment `k` of the part, and its pieces (at most one slot each): the same on every rank.
  const segment = (k: number): Span => {
    const cut = split(part.count, n, mod(k, n));
    return { start: part.start + cut.start, count: cut.count };
  };
  const piecesOf = (k: number): Span[] => {
    const { start, count } = segment(k);
    const out: Span[] = [];
    for (let at = 0; at < count; at += pieceCount)
      out.push({ start: start + at, count: Math.min(pieceCount, count - at) });
    return out;
  };
  const address = (span: Span) => elementAddress(buffer, span.start);

  const mark = tl.scratchMark();
  // The segment in flight (piece `i` at element `i * pieceCount`), a landing piece for received
  // payloads and one for the own data they are combined with.
  const inFlight = tl.empty([Math.ceil(part.count / n)], dtype);
  const landing = tl.empty([pieceCount], dtype);
  const own = tl.empty([pieceCount], dtype);
  const at = (region: TensorHandle, i: number, span: Span) => tl.view(region, i * pieceCount, [span.count]);

  /**
   * One step: sends `count` pieces (`outgoing(t)` gives piece `t`) to the next place while
   * receiving the pieces of segment `incoming` from the previous one; `arrived(i, span)` handles
   * received piece `i` and returns what goes out as piece `i` in the next step.
   */
  const step = async (
    count: number,
    outgoing: (t: number) => TensorHandle | Promise<TensorHandle>,
    incoming: readonly Span[],
    arrived: (i: number, span: Span) => Promise<TensorHandle>,
    sent?: (t: number, piece: TensorHandle) => Promise<void>,
  ): Promise<TensorHandle[]> => {
    const result: TensorHandle[] = [];
    for (let t = 0; t < Math.max(count, incoming.length + lag); t++) {
      if (t < count) {
        const piece = await outgoing(t);
        await tl.send(next, piece);
        await sent?.(t, piece);
      }
      // Piece `t - lag` lands where a piece already sent was: the send took its payload.
      const i = t - lag;
      const span = incoming[i];
      if (span !== undefined) result.push(await arrived(i, span));
    }
    return result;
  };
  const receive = (into: TensorHandle) =>
    tl.recv(prev, { shape: [...into.shape], dtype, dstAddr: into.address });
  const load = (span: Span, into: TensorHandle) => tl.load(address(span), [span.count], dtype, { out: into });
  // What a reduce-scatter step does with received piece `i`: combine it with the rank's own data
  // into the segment in flight.
  const reduce = async (i: number, span: Span) => {
    const theirs = await receive(at(landing, 0, span));
    const mine = await load(span, at(own, 0, span));
    return combine(tl, op, theirs, mine, at(inFlight, i, span));
  };

  // Reduce-scatter. Step 0 sends the rank's own data of segment `p - 1`, loaded piece by piece.
  const first = piecesOf(position - 1);
  let outgoing = await step(
    first.length,
    (t) => load(first[t] as Span, at(inFlight, t, first[t] as Span)),
    piecesOf(position - 2),
    reduce,
  );
  for (let s = 1; s < n - 1; s++) {
    const sending = outgoing;
    outgoing = await step(
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
    outgoing = await step(
      sending.length,
      (t) => sending[t] as TensorHandle,
      piecesOf(position - s - 1),
      async (i, span) => {
        const piece = await receive(at(inFlight, i, span));
        await tl.store(address(span), piece);
        return piece;
      },
      s === 0 ? (t, piece) => tl.store(address(reduced[t] as Span), piece) : undefined,
    );
  }
  tl.scratchRelease(mark);
}
