import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import { SCRATCH_ALIGN, type TensorHandle, type TL } from "@kb/tl";
import { kernelError, type Span, slotElements } from "../kernel-support.js";
import type { LaneRing } from "../ranks.js";

/**
 * The streaming steps the ring collectives share: a step sends one segment to the next place as
 * slot-sized pieces while it receives one from the previous place, `lag` pieces behind its own
 * sends, so the link stays busy while payloads and credits travel.
 */
export class RingStream {
  /** Elements of one piece (one IPCQ slot). */
  readonly pieceCount: number;
  /**
   * Pieces sent ahead of the one received: half the queue covers the way there, the other half
   * the credit's way back, so a rank that keeps up never waits for a free slot; less than the
   * queue's slots, so no ring of ranks can wait on each other.
   */
  readonly lag: number;
  private readonly next: string;
  private readonly prev: string;

  constructor(
    private readonly tl: TL,
    ring: LaneRing,
    private readonly dtype: Dtype,
    slotBytes: number,
    queueSlots = 1,
  ) {
    this.pieceCount = slotElements(slotBytes, dtype);
    this.lag = Math.floor(queueSlots / 2);
    this.next = ring.next as string;
    this.prev = ring.prev as string;
  }

  /** `span` cut into pieces of one slot (the last shorter); none for an empty span. */
  pieces(span: Span): Span[] {
    const out: Span[] = [];
    for (let at = 0; at < span.count; at += this.pieceCount)
      out.push({ start: span.start + at, count: Math.min(this.pieceCount, span.count - at) });
    return out;
  }

  /** Piece `i` (of `span`'s length) of a TCM buffer holding a segment's pieces back to back. */
  at(buffer: TensorHandle, i: number, span: Span): TensorHandle {
    return this.tl.view(buffer, i * this.pieceCount, [span.count]);
  }

  /** Receives the next payload from the previous place into `into` (copied out of the slot). */
  receive(into: TensorHandle): Promise<TensorHandle> {
    return this.tl.recv(this.prev, { shape: [...into.shape], dtype: this.dtype, dstAddr: into.address });
  }

  /**
   * One step: sends `count` pieces (`outgoing(t)` gives piece `t`; `sent(t, piece)` runs after
   * each send) to the next place while receiving the pieces `incoming` from the previous one;
   * `arrived(i, span)` handles received piece `i` and returns what goes out as piece `i` of the
   * next step. A received piece may be written over piece `i` of what this step sends: a send
   * takes its payload when it is issued, and piece `i` went `lag` sends earlier.
   */
  async step(
    count: number,
    outgoing: (t: number) => TensorHandle | Promise<TensorHandle>,
    incoming: readonly Span[],
    arrived: (i: number, span: Span) => Promise<TensorHandle>,
    sent?: (t: number, piece: TensorHandle) => Promise<void>,
  ): Promise<TensorHandle[]> {
    const result: TensorHandle[] = [];
    for (let t = 0; t < Math.max(count, incoming.length + this.lag); t++) {
      if (t < count) {
        const piece = await outgoing(t);
        await this.tl.send(this.next, piece);
        await sent?.(t, piece);
      }
      const i = t - this.lag;
      const span = incoming[i];
      if (span !== undefined) result.push(await arrived(i, span));
    }
    return result;
  }
}

/**
 * How many rounds a collective needs so that one round's segment (`segmentAt(rounds)` elements)
 * fits the kernel's free TCM scratch next to `extraPieces` pieces of `pieceCount` elements (each
 * allocation rounded up to `SCRATCH_ALIGN`). Throws `RUNTIME_INVALID` when not even one piece fits.
 */
export function roundsFor(
  tl: TL,
  dtype: Dtype,
  pieceCount: number,
  extraPieces: number,
  segmentAt: (rounds: number) => number,
): number {
  const size = DTYPE_BYTES[dtype];
  const aligned = (bytes: number) => Math.ceil(bytes / SCRATCH_ALIGN) * SCRATCH_ALIGN;
  const free = tl.scratchUsage.bytes - tl.scratchUsage.used;
  const room = Math.floor(
    (Math.floor((free - extraPieces * aligned(pieceCount * size)) / SCRATCH_ALIGN) * SCRATCH_ALIGN) / size,
  );
  if (room < pieceCount) {
    throw kernelError(
      tl,
      `a streaming ring needs TCM scratch for ${extraPieces + 1} messages of ${pieceCount} elements, but ${free} bytes are free; use smaller slotBytes.`,
    );
  }
  let rounds = Math.max(1, Math.ceil(segmentAt(1) / room));
  while (segmentAt(rounds) > room) rounds++;
  return rounds;
}
