import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import type { TensorHandle, TL } from "@kb/tl";
import {
  type AllToAllArgs,
  COLLECTIVE_DTYPES,
  elementAddress,
  kernelError,
  type Region,
  type Span,
  slotElements,
  split,
} from "../kernel-support.js";
import { laneOf, laneRing, rankOf } from "../ranks.js";
import { RingStream, roundsFor } from "./ring-stream.js";

/**
 * Ring all-to-all (all-to-all-v when the blocks' counts differ): `n - 1` steps round the ring of
 * single hops. At step `s` a rank sends the next place the blocks that started `s` places back
 * and have not arrived yet (`n - 1 - s` of them), and receives the previous place's: it stores
 * the one addressed to itself and passes the others on at the next step. Per lane, step `s`
 * moves `n - 1 - s` blocks over each link, `n (n - 1) / 2` in all: `(n - 1) a + (n - 1) / 2 * S / b`
 * for `S` bytes per rank (`ringAllToAllModelNs`). A rank's block to itself is a local copy.
 *
 * A lane takes the same slice of every block; odd lanes go round the ring backwards
 * (`laneRing`), so a SIP or cube rank uses both directions of its links. Pieces stream through
 * two TCM buffers (what a step receives, what it sends), in rounds when they do not fit.
 */
export async function ringAllToAll(tl: TL, args: AllToAllArgs): Promise<void> {
  const { group } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  const dtype = checkAllToAll(tl, args);
  const { lane, lanes } = laneOf(tl, group);
  const sendOf = (src: number, dst: number) => args.sends[src]?.[dst] as Region;
  const slice = (src: number, dst: number) => split(sendOf(src, dst).count, lanes, lane);
  await copyOwn(tl, args, rank, slice(rank, rank), dtype);
  if (n === 1) return;
  const ring = laneRing(group, rank, lane);
  const stream = new RingStream(tl, ring, dtype, args.slotBytes, args.queueSlots);
  const p = ring.position;
  // Step s at place `at`: the blocks of the rank s places back (outgoing) and s + 1 places back
  // (incoming), to the places from at + 1 (outgoing) and at (incoming) on.
  const blocks = (s: number, incoming: boolean, at = p): [number, number][] => {
    const src = ring.rankAt(at - s - (incoming ? 1 : 0));
    return Array.from({ length: n - 1 - s }, (_, j) => [src, ring.rankAt(at + j + (incoming ? 0 : 1))]);
  };
  // The largest step of any place: every rank must cut the blocks into the same rounds, so the
  // rank with the most to move (all-to-all-v) sets them for all.
  const stepElements = (rounds: number) => {
    let most = 0;
    for (let at = 0; at < n; at++) {
      for (let s = 0; s < n - 1; s++) {
        const total = blocks(s, true, at).reduce(
          (sum, [src, dst]) => sum + Math.ceil(slice(src, dst).count / rounds),
          0,
        );
        most = Math.max(most, total);
      }
    }
    return most;
  };
  // Two step buffers, each allocation rounded up: one piece of slack each.
  const rounds = roundsFor(tl, dtype, stream.pieceCount, 2, (r) => 2 * stepElements(r));

  for (let round = 0; round < rounds; round++) {
    // The pieces of a step's blocks in this round, and where each lands in a step buffer.
    const layout = (s: number, incoming: boolean) => {
      const pieces: { span: Span; src: number; dst: number; at: number }[] = [];
      let at = 0;
      for (const [src, dst] of blocks(s, incoming)) {
        const mine = slice(src, dst);
        const cut = split(mine.count, rounds, round);
        for (const span of stream.pieces({ start: mine.start + cut.start, count: cut.count })) {
          pieces.push({ span, src, dst, at });
          at += span.count;
        }
      }
      return { pieces, total: at };
    };
    const mark = tl.scratchMark();
    const size = Math.max(1, stepElements(rounds));
    const buffers = [tl.empty([size], dtype), tl.empty([size], dtype)] as const;
    const first = layout(0, false);
    let outgoing: (() => Promise<TensorHandle>)[] = first.pieces.map(({ span, src, dst, at }) => () => {
      const into = tl.view(buffers[1], at, [span.count]);
      return tl.load(elementAddress(sendOf(src, dst), span.start), [span.count], dtype, { out: into });
    });
    for (let s = 0; s < n - 1; s++) {
      const { pieces } = layout(s, true);
      const buffer = buffers[s % 2] as TensorHandle;
      const kept: (() => Promise<TensorHandle>)[] = [];
      const sending = outgoing;
      await stream.step(
        sending.length,
        (t) => (sending[t] as () => Promise<TensorHandle>)(),
        pieces.map((piece) => piece.span),
        async (i) => {
          const { span, src, dst, at } = pieces[i] as (typeof pieces)[number];
          const piece = await stream.receive(tl.view(buffer, at, [span.count]));
          if (dst === rank) {
            await tl.store(elementAddress(args.recvs[rank]?.[src] as Region, span.start), piece);
          } else {
            kept.push(async () => piece);
          }
          return piece;
        },
      );
      outgoing = kept;
    }
    tl.scratchRelease(mark);
  }
}

/** The rank's block to itself: loaded and stored a slot at a time. */
async function copyOwn(tl: TL, args: AllToAllArgs, rank: number, mine: Span, dtype: Dtype): Promise<void> {
  const from = args.sends[rank]?.[rank] as Region;
  const to = args.recvs[rank]?.[rank] as Region;
  const piece = slotElements(args.slotBytes, dtype);
  for (let at = 0; at < mine.count; at += piece) {
    const count = Math.min(piece, mine.count - at);
    const mark = tl.scratchMark();
    const values = await tl.load(elementAddress(from, mine.start + at), [count], dtype);
    await tl.store(elementAddress(to, mine.start + at), values);
    tl.scratchRelease(mark);
  }
}

/**
 * The dtype of an all-to-all's blocks after checking what the kernel relies on: `n x n` blocks
 * each way, each pair's send and receive of one count and dtype, one supported dtype, a usable
 * slot size. Throws `RUNTIME_INVALID` located at the kernel instance.
 */
function checkAllToAll(tl: TL, args: AllToAllArgs): Dtype {
  const n = args.group.size;
  const square = (blocks: readonly (readonly Region[])[] | undefined) =>
    Array.isArray(blocks) &&
    blocks.length === n &&
    blocks.every((row) => Array.isArray(row) && row.length === n);
  if (!square(args.sends) || !square(args.recvs)) {
    throw kernelError(tl, `allToAll needs ${n} x ${n} blocks in sends and recvs (one per pair of ranks).`);
  }
  const dtype = ((args.sends[0] as readonly Region[])[0] as Region).dtype;
  if (!(COLLECTIVE_DTYPES as readonly string[]).includes(dtype)) {
    throw kernelError(
      tl,
      `dtype ${dtype} is not supported by the collectives; use ${COLLECTIVE_DTYPES.join(", ")}.`,
    );
  }
  for (let s = 0; s < n; s++) {
    for (let d = 0; d < n; d++) {
      const sent = args.sends[s]?.[d] as Region;
      const got = args.recvs[d]?.[s] as Region;
      if (sent.count !== got.count || sent.dtype !== dtype || got.dtype !== dtype) {
        throw kernelError(
          tl,
          `allToAll: rank ${s} sends ${sent.count} x ${sent.dtype} to rank ${d}, which expects ${got.count} x ${got.dtype}; every pair's blocks need one count and the dtype ${dtype}.`,
        );
      }
    }
  }
  if (!Number.isInteger(args.slotBytes) || args.slotBytes < DTYPE_BYTES[dtype]) {
    throw kernelError(tl, `slotBytes must be a whole number of at least one element, got ${args.slotBytes}.`);
  }
  return dtype;
}
