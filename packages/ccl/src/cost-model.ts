import { KbError } from "@kb/errors";

/**
 * The alpha-beta cost models of the collectives (Thakur, Rabenseifner and Gropp 2005), ns: `a` is
 * the latency of one step (`hopLatencyNs`: a send, the hop, the receive), `b` the bandwidth of one
 * hop in GB/s (= bytes/ns). They leave out the PEs' own work (loads, stores, additions) and assume
 * every hop is uncontended: the simulation may only be slower. packages/ccl/README.md ("The other
 * collectives against their models") explains each and lists them against the simulation.
 */

/**
 * Ring all-reduce of `bytes` per rank over `n` ranks: `2 (n - 1) a + 2 (n - 1) / n * S / b`.
 *
 * Throws `RUNTIME_INVALID` unless `n` is a whole number >= 1, `hopLatencyNs` and `bytes` are >= 0
 * and `bwGbs` is > 0 (all finite); so do the other models.
 */
export function ringAllReduceModelNs(n: number, hopLatencyNs: number, bwGbs: number, bytes: number): number {
  checkModel("ringAllReduceModelNs", n, hopLatencyNs, bwGbs, bytes);
  return 2 * (n - 1) * hopLatencyNs + ((2 * (n - 1)) / n) * (bytes / bwGbs);
}

/**
 * Ring all-to-all of `bytes` per rank (`n` blocks of `S / n`) over `n` ranks: `n - 1` steps, step
 * `s` moving `n - 1 - s` blocks over each hop, so `(n - 1) a + (n - 1) / 2 * S / b`. (Pairwise
 * exchange on a fully connected network would take `(n - 1) (a + S / n / b)`; a ring of single
 * hops carries each block `d` hops for a peer `d` places on.)
 */
export function ringAllToAllModelNs(n: number, hopLatencyNs: number, bwGbs: number, bytes: number): number {
  checkModel("ringAllToAllModelNs", n, hopLatencyNs, bwGbs, bytes);
  return (n - 1) * hopLatencyNs + ((n - 1) / 2) * (bytes / bwGbs);
}

/**
 * Pipelined chain of `n` ranks (reduce into the root, as broadcast out of it) of `bytes` per rank
 * in chunks of `chunkBytes`: the first chunk takes `n - 1` hops, the others follow it one chunk
 * time apart, so `(n - 1) a + (S + (n - 2) c) / b` with `c = min(chunkBytes, S)`.
 */
export function chainModelNs(
  n: number,
  hopLatencyNs: number,
  bwGbs: number,
  bytes: number,
  chunkBytes: number,
): number {
  checkModel("chainModelNs", n, hopLatencyNs, bwGbs, bytes);
  if (n === 1) return 0;
  const c = Math.min(checkChunk("chainModelNs", chunkBytes), bytes);
  return (n - 1) * hopLatencyNs + (bytes + (n - 2) * c) / bwGbs;
}

/**
 * Chain gather into the root (or scatter out of it) of `bytes` per rank: the hop next to the root
 * carries the other `n - 1` ranks' buffers, pipelined behind the first: `(n - 1) a + (n - 1) S / b`.
 */
export function gatherModelNs(n: number, hopLatencyNs: number, bwGbs: number, bytes: number): number {
  checkModel("gatherModelNs", n, hopLatencyNs, bwGbs, bytes);
  return (n - 1) * hopLatencyNs + ((n - 1) * bytes) / bwGbs;
}

/**
 * A point-to-point transfer of `bytes` over `hops` hops (the shorter way round the ring), forwarded
 * in chunks of `chunkBytes`: `h a + (S + (h - 1) c) / b`; between neighbours `a + S / b`.
 */
export function p2pModelNs(
  hops: number,
  hopLatencyNs: number,
  bwGbs: number,
  bytes: number,
  chunkBytes: number,
): number {
  checkModel("p2pModelNs", hops + 1, hopLatencyNs, bwGbs, bytes);
  if (hops === 0) return 0;
  const c = Math.min(checkChunk("p2pModelNs", chunkBytes), bytes);
  return hops * hopLatencyNs + (bytes + (hops - 1) * c) / bwGbs;
}

function checkModel(name: string, n: number, hopLatencyNs: number, bwGbs: number, bytes: number): void {
  if (!Number.isInteger(n) || n < 1) {
    throw new KbError("RUNTIME_INVALID", `${name}: n must be a whole number >= 1, got ${n}.`);
  }
  if (!(Number.isFinite(hopLatencyNs) && hopLatencyNs >= 0)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${name}: hopLatencyNs must be a finite number >= 0, got ${hopLatencyNs}.`,
    );
  }
  if (!(Number.isFinite(bwGbs) && bwGbs > 0)) {
    throw new KbError("RUNTIME_INVALID", `${name}: bwGbs must be a finite number > 0 (GB/s), got ${bwGbs}.`);
  }
  if (!(Number.isFinite(bytes) && bytes >= 0)) {
    throw new KbError("RUNTIME_INVALID", `${name}: bytes must be a finite number >= 0, got ${bytes}.`);
  }
}

function checkChunk(name: string, chunkBytes: number): number {
  if (!(Number.isFinite(chunkBytes) && chunkBytes > 0)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${name}: chunkBytes must be a finite number > 0, got ${chunkBytes}.`,
    );
  }
  return chunkBytes;
}
