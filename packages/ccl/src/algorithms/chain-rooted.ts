import type { Dtype } from "@kb/tensor";
import type { TL } from "@kb/tl";
import {
  bufferOf,
  type CollectiveArgs,
  chunkCount,
  combine,
  elementAddress,
  type GatherArgs,
  kernelError,
  type ReduceArgs,
  type Region,
  recvToScratch,
  type ScatterArgs,
  type Span,
  split,
} from "../kernel-support.js";
import { type LaneRing, laneOf, laneRing, mod, rankOf } from "../ranks.js";

/** A kernel instance's place in a chain that ends (reduce, gather) or starts (scatter) at the root. */
interface Chain {
  readonly n: number;
  readonly rank: number;
  readonly buffer: Region;
  readonly dtype: Dtype;
  readonly ring: LaneRing;
  /** Places after the root round this lane's ring: 0 is the root, `n - 1` its previous place. */
  readonly q: number;
  /** The rank `q` places after the root. */
  rankAt(q: number): number;
  /** This lane's slice of a buffer of the rank's count, cut into slot-sized chunks. */
  readonly chunks: readonly Span[];
}

/** The chain of `args` from this kernel instance's view, or null when it has nothing to move. */
function chainOf(tl: TL, args: CollectiveArgs & { readonly root: number }, what: string): Chain | null {
  const { group, root } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  const buffer = bufferOf(tl, args, rank);
  if (!Number.isInteger(root) || root < 0 || root >= n) {
    throw kernelError(tl, `${what} root must be a rank 0..${n - 1}, got ${root}.`);
  }
  const { lane, lanes } = laneOf(tl, group);
  const mine = split(buffer.count, lanes, lane);
  if (mine.count === 0) return null;
  const ring = laneRing(group, rank, lane);
  const rootPosition = ring.reverse ? mod(-root, n) : root;
  const count = chunkCount(mine.count, args.slotBytes, buffer.dtype);
  const chunks = Array.from({ length: count }, (_, c) => {
    const cut = split(mine.count, count, c);
    return { start: mine.start + cut.start, count: cut.count };
  });
  return {
    n,
    rank,
    buffer,
    dtype: buffer.dtype,
    ring,
    q: mod(ring.position - rootPosition, n),
    rankAt: (q) => ring.rankAt(rootPosition + q),
    chunks,
  };
}

/** Copies `chunks` of `from` to the same elements of `to`, a chunk at a time. */
async function copyChunks(tl: TL, from: Region, to: Region, chunks: readonly Span[]): Promise<void> {
  for (const chunk of chunks) {
    const mark = tl.scratchMark();
    await tl.store(
      elementAddress(to, chunk.start),
      await tl.load(elementAddress(from, chunk.start), [chunk.count], from.dtype),
    );
    tl.scratchRelease(mark);
  }
}

/**
 * Pipelined chain reduce: the place after the root sends its buffer chunk by chunk to the next
 * place, every place adds its own chunk to what it receives and passes the sum on, the root adds
 * its own and stores: `n - 1` hops, chunks following each other, so `(n - 1) a + (S + (n - 2) c) / b`
 * for chunks of `c` bytes (`chainModelNs`). The mirror of `chainBroadcast`; only the root's buffer
 * changes.
 */
export async function chainReduce(tl: TL, args: ReduceArgs): Promise<void> {
  const chain = chainOf(tl, args, "reduce");
  if (chain === null || chain.n === 1) return;
  const { ring, q, buffer, dtype } = chain;
  for (const chunk of chain.chunks) {
    const mark = tl.scratchMark();
    const own = () => tl.load(elementAddress(buffer, chunk.start), [chunk.count], dtype);
    if (q === 1) {
      await tl.send(ring.next as string, await own());
    } else {
      const incoming = await recvToScratch(tl, ring.prev as string, chunk.count, dtype);
      const sum = await combine(tl, args.op, incoming, await own(), incoming);
      if (q === 0) await tl.store(elementAddress(buffer, chunk.start), sum);
      else await tl.send(ring.next as string, sum);
    }
    tl.scratchRelease(mark);
  }
}

/**
 * Chain gather: every place sends its own buffer towards the root, then passes on, chunk by
 * chunk, the buffers of the places before it; the root stores what arrives in `gathered` and
 * copies its own. The hop into the root carries `n - 1` buffers: `(n - 1) a + (n - 1) S / b`
 * (`gatherModelNs`).
 */
export async function chainGather(tl: TL, args: GatherArgs): Promise<void> {
  const chain = chainOf(tl, args, "gather");
  if (chain === null) return;
  const { ring, q, n, dtype } = chain;
  checkRootRegions(tl, args.gathered, chain, "gather", "gathered");
  if (q === 0) await copyChunks(tl, chain.buffer, args.gathered[chain.rank] as Region, chain.chunks);
  if (n === 1) return;
  if (q !== 0) {
    for (const chunk of chain.chunks) {
      const mark = tl.scratchMark();
      await tl.send(
        ring.next as string,
        await tl.load(elementAddress(chain.buffer, chunk.start), [chunk.count], dtype),
      );
      tl.scratchRelease(mark);
    }
  }
  // Buffers arrive nearest first: those of places q - 1, q - 2, ..., 1 (n - 1 .. 1 at the root).
  const arriving = q === 0 ? n - 1 : q - 1;
  for (let k = 0; k < arriving; k++) {
    const from = chain.rankAt((q === 0 ? n : q) - 1 - k);
    for (const chunk of chain.chunks) {
      const mark = tl.scratchMark();
      const incoming = await recvToScratch(tl, ring.prev as string, chunk.count, dtype);
      if (q === 0) await tl.store(elementAddress(args.gathered[from] as Region, chunk.start), incoming);
      else await tl.send(ring.next as string, incoming);
      tl.scratchRelease(mark);
    }
  }
}

/**
 * Chain scatter: the root sends `pieces[r]` for the places after it, farthest first, chunk by
 * chunk; every place passes on those for the places after it and stores its own, the last to
 * arrive. The hop out of the root carries `n - 1` buffers: `(n - 1) a + (n - 1) S / b`
 * (`gatherModelNs`).
 */
export async function chainScatter(tl: TL, args: ScatterArgs): Promise<void> {
  const chain = chainOf(tl, args, "scatter");
  if (chain === null) return;
  const { ring, q, n, dtype } = chain;
  checkRootRegions(tl, args.pieces, chain, "scatter", "pieces");
  if (q === 0) {
    await copyChunks(tl, args.pieces[chain.rank] as Region, chain.buffer, chain.chunks);
    for (let to = n - 1; to >= 1; to--) {
      const piece = args.pieces[chain.rankAt(to)] as Region;
      for (const chunk of chain.chunks) {
        const mark = tl.scratchMark();
        await tl.send(
          ring.next as string,
          await tl.load(elementAddress(piece, chunk.start), [chunk.count], dtype),
        );
        tl.scratchRelease(mark);
      }
    }
    return;
  }
  // Pieces for places n - 1 down to q arrive; all but the last go on.
  for (let to = n - 1; to >= q; to--) {
    for (const chunk of chain.chunks) {
      const mark = tl.scratchMark();
      const incoming = await recvToScratch(tl, ring.prev as string, chunk.count, dtype);
      if (to === q) await tl.store(elementAddress(chain.buffer, chunk.start), incoming);
      else await tl.send(ring.next as string, incoming);
      tl.scratchRelease(mark);
    }
  }
}

/** The root's `n` regions (`gathered` / `pieces`) must each match a rank's buffer. */
function checkRootRegions(
  tl: TL,
  regions: readonly Region[],
  chain: Chain,
  what: string,
  name: string,
): void {
  if (!Array.isArray(regions) || regions.length !== chain.n) {
    throw kernelError(
      tl,
      `${what}: expected ${chain.n} ${name} regions (one per rank), got ${String(regions?.length)}.`,
    );
  }
  for (const [r, region] of regions.entries()) {
    if (region.count !== chain.buffer.count || region.dtype !== chain.dtype) {
      throw kernelError(
        tl,
        `${what}: ${name}[${r}] has ${region.count} x ${region.dtype}, the ranks' buffers ${chain.buffer.count} x ${chain.dtype}; they must match.`,
      );
    }
  }
}
