import { DTYPE_BYTES } from "@kb/tensor";
import type { TL } from "@kb/tl";
import {
  type AllReduceArgs,
  bufferOf,
  chunkCount,
  combine,
  elementAddress,
  recvToScratch,
  split,
} from "../kernel-support.js";
import { laneOf, rankOf } from "../ranks.js";

/**
 * The smallest chunk the tree cuts a message into to pipeline it, bytes: below that, the fixed
 * cost of a message (dispatch, slot read, credit) outweighs what the overlap saves (measured on
 * the default 2 x 4 PE cube).
 */
export const TREE_MIN_CHUNK_BYTES = 2048;

/**
 * Latency-optimised all-reduce on a binary tree: the shallowest spanning tree of the ring. Rank 0
 * is the root; ranks `1..floor(n/2)` form one branch (each the parent of the next), the other
 * ranks the other branch going the other way round. Every chunk is reduced up the tree (a rank
 * adds what its child sent to its own data and sends the sum to its parent), and the root sends
 * the result back down (each rank stores it and passes it on). That is `2 ceil((n-1)/2)` hops
 * instead of the ring's `2 (n - 1)`, for full-size messages instead of `1/n` of them: the choice
 * for small messages.
 *
 * Why not recursive halving-doubling: IPCQs reach neighbours only, so a partner `d` ranks away
 * costs `d` forwarding hops, and the `log n` steps add up to the ring's `2 (n - 1)` hops again.
 *
 * Pipelining: a rank at depth `k` works through iterations `i = 0, 1, ...`; in each it reduces
 * chunk `i` and then receives chunk `i - 2k` of the result from its parent. The root sends chunk
 * `i` down as soon as it reduced it, so after its first `2k` chunks the result arrives at depth
 * `k` just as it is due: reduction and broadcast overlap, and each queue holds only a few messages,
 * so sends rarely wait for credits. Per chunk a leaf sends 1 message, any other rank 2.
 */
export async function treeAllReduce(tl: TL, args: AllReduceArgs): Promise<void> {
  const { group, op } = args;
  const n = group.size;
  const rank = rankOf(tl, group);
  const buffer = bufferOf(tl, args, rank);
  const { lane, lanes } = laneOf(tl, group);
  const mine = split(buffer.count, lanes, lane);
  if (n === 1 || mine.count === 0) return;
  const { dtype } = buffer;
  const next = group.next[rank] as string;
  const prev = group.prev[rank] as string;
  // The branches: 1..half go "next"-wards from the root, half+1..n-1 "prev"-wards.
  const half = Math.floor(n / 2);
  let depth: number;
  let up: string | null; // towards the parent
  const down: string[] = []; // towards the children
  if (rank === 0) {
    depth = 0;
    up = null;
    down.push(next);
    if (n - 1 > half) down.push(prev);
  } else if (rank <= half) {
    depth = rank;
    up = prev;
    if (rank < half) down.push(next);
  } else {
    depth = n - rank;
    up = next;
    if (rank > half + 1) down.push(prev);
  }
  // At least one chunk per rank (but none under TREE_MIN_CHUNK_BYTES), so the pipeline fills.
  const chunks = Math.max(
    chunkCount(mine.count, args.slotBytes, dtype),
    Math.min(n, Math.floor((mine.count * DTYPE_BYTES[dtype]) / TREE_MIN_CHUNK_BYTES)),
  );
  const chunkAt = (chunk: number) => {
    const cut = split(mine.count, chunks, chunk);
    return { address: elementAddress(buffer, mine.start + cut.start), count: cut.count };
  };
  const lag = 2 * depth;

  for (let i = 0; i < chunks + lag; i++) {
    const mark = tl.scratchMark();
    if (i < chunks) {
      // Reduce chunk i: own data, plus what each child reduced below.
      const { address, count } = chunkAt(i);
      let sum = await tl.load(address, [count], dtype);
      for (const child of down)
        sum = await combine(tl, op, sum, await recvToScratch(tl, child, count, dtype));
      if (up !== null) {
        await tl.send(up, sum);
      } else {
        for (const child of down) await tl.send(child, sum);
        await tl.store(address, sum);
      }
    }
    const result = i - lag;
    if (up !== null && result >= 0) {
      // The reduced chunk `result` comes down from the parent.
      const { address, count } = chunkAt(result);
      const incoming = await recvToScratch(tl, up, count, dtype);
      for (const child of down) await tl.send(child, incoming);
      await tl.store(address, incoming);
    }
    tl.scratchRelease(mark);
  }
}
