import { KbError } from "@kb/errors";
import { NO_PE_WORK, type PieceWork } from "./pe-term.js";

/**
 * The alpha-beta cost models of the collectives (Thakur, Rabenseifner and Gropp 2005), ns: `a` is
 * the latency of one step (`hopLatencyNs`: a send, the hop, the receive), `b` the bandwidth of one
 * hop in GB/s (= bytes/ns). Without a PE term they leave out the PEs' own work (loads, stores,
 * additions) and assume every hop is uncontended. With one (`PeTerm`: the PE's time per piece,
 * `pe-term.ts`) a step's pieces pass at the slower of the wire (`c / b`) and the PE (its commands
 * per piece, one after the other), the PE's serial phases (a root's copy of its own buffer) and
 * the first and last piece's work are added. packages/ccl/README.md ("The other collectives
 * against their models", "The PE term") explains each and lists them against the simulation.
 */

/** The PE term of a model: the PE's work per piece and the piece size. */
export interface PeTerm {
  readonly work: PieceWork;
  /** Bytes of a piece: one IPCQ slot (`ipcq_slot_bytes`). */
  readonly chunkBytes: number;
  /** Slots per IPCQ queue (`ipcq_slots`): gather's root receives that many while it copies. */
  readonly queueSlots?: number;
}

/**
 * Ring all-reduce of `bytes` per rank over `n` ranks: `2 (n - 1) a + 2 (n - 1) / n * S / b`.
 *
 * With a PE term, each of the `2 (n - 1)` steps moves a segment `S / n` of `P = ceil(S / n / c)`
 * pieces and takes `a + max(S / n / b, P w)` with `w` the PE's work per piece of that step (every
 * step sends one piece and receives one): reduce-scatter step 0 `2 load + send + recv + combine`
 * (it loads what it sends), the others `send + recv + load + combine`; all-gather step 0 `send +
 * 2 store + recv` (it stores what it sends and what it receives), the others `send + recv + store`.
 *
 * Throws `RUNTIME_INVALID` unless `n` is a whole number >= 1, `hopLatencyNs` and `bytes` are >= 0
 * and `bwGbs` is > 0 (all finite); so do the other models.
 */
export function ringAllReduceModelNs(
  n: number,
  hopLatencyNs: number,
  bwGbs: number,
  bytes: number,
  pe?: PeTerm,
): number {
  checkModel("ringAllReduceModelNs", n, hopLatencyNs, bwGbs, bytes);
  if (pe === undefined) return 2 * (n - 1) * hopLatencyNs + ((2 * (n - 1)) / n) * (bytes / bwGbs);
  if (n === 1) return 0;
  const w = checkWork("ringAllReduceModelNs", pe.work);
  const segment = bytes / n;
  const pieces = Math.ceil(segment / checkChunk("ringAllReduceModelNs", pe.chunkBytes));
  const step = (work: number) => hopLatencyNs + Math.max(segment / bwGbs, pieces * work);
  const each = w.sendNs + w.recvNs;
  return (
    step(each + 2 * w.loadNs + w.combineNs) +
    (n - 2) * step(each + w.loadNs + w.combineNs) +
    step(each + 2 * w.storeNs) +
    (n - 2) * step(each + w.storeNs)
  );
}

/**
 * Ring all-to-all of `bytes` per rank (`n` blocks of `S / n`) over `n` ranks: `n - 1` steps, step
 * `s` moving `n - 1 - s` blocks over each hop, so `(n - 1) a + (n - 1) / 2 * S / b`. (Pairwise
 * exchange on a fully connected network would take `(n - 1) (a + S / n / b)`; a ring of single
 * hops carries each block `d` hops for a peer `d` places on.)
 *
 * With a PE term: first the copy of the rank's own block, `P (load + store)` with `P = ceil(S / n
 * / c)` pieces a block; then step `s` (`k = n - 1 - s` blocks) takes `a + max(k S / n / b, P (k
 * (send + recv) + store))`, plus `k P load` at step 0, which loads what it sends.
 */
export function ringAllToAllModelNs(
  n: number,
  hopLatencyNs: number,
  bwGbs: number,
  bytes: number,
  pe?: PeTerm,
): number {
  checkModel("ringAllToAllModelNs", n, hopLatencyNs, bwGbs, bytes);
  if (pe === undefined) return (n - 1) * hopLatencyNs + ((n - 1) / 2) * (bytes / bwGbs);
  const w = checkWork("ringAllToAllModelNs", pe.work);
  const block = bytes / n;
  const pieces = Math.ceil(block / checkChunk("ringAllToAllModelNs", pe.chunkBytes));
  let total = pieces * (w.loadNs + w.storeNs);
  for (let s = 0; s < n - 1; s++) {
    const k = n - 1 - s;
    const work = pieces * (k * (w.sendNs + w.recvNs) + w.storeNs + (s === 0 ? k * w.loadNs : 0));
    total += hopLatencyNs + Math.max((k * block) / bwGbs, work);
  }
  return total;
}

/**
 * Pipelined chain of `n` ranks (reduce into the root, as broadcast out of it) of `bytes` per rank
 * in chunks of `chunkBytes`: the first chunk takes `n - 1` hops, the others follow it one chunk
 * time apart, so `(n - 1) a + (S + (n - 2) c) / b` with `c = min(chunkBytes, S)`.
 *
 * With the PE's work per piece (reduce): the first rank loads and sends (`ws = load + send`),
 * a middle rank receives, loads, adds and sends (`wm`), the root receives, loads, adds and stores
 * (`wr`); chunks follow each other at `p = max(c / b, ws, wm, wr)`, so `(n - 1) a + (n - 2) (c / b
 * + wm) + ws + wr + S / b + (P - 1) (p - c / b)` for `P = ceil(S / c)` chunks. Without it (the
 * default) the formula above.
 */
export function chainModelNs(
  n: number,
  hopLatencyNs: number,
  bwGbs: number,
  bytes: number,
  chunkBytes: number,
  work: PieceWork = NO_PE_WORK,
): number {
  checkModel("chainModelNs", n, hopLatencyNs, bwGbs, bytes);
  checkWork("chainModelNs", work);
  if (n === 1) return 0;
  const c = Math.min(checkChunk("chainModelNs", chunkBytes), bytes);
  const first = work.loadNs + work.sendNs;
  const middle = work.recvNs + work.loadNs + work.combineNs + work.sendNs;
  const root = work.recvNs + work.loadNs + work.combineNs + work.storeNs;
  const period = Math.max(c / bwGbs, first, n > 2 ? middle : 0, root);
  return (
    (n - 1) * hopLatencyNs + (n - 2) * (c / bwGbs + middle) + first + root + stream(bytes, c, bwGbs, period)
  );
}

/**
 * Chain gather into the root of `bytes` per rank: the hop next to the root carries the other
 * `n - 1` ranks' buffers, pipelined behind the first: `(n - 1) a + (n - 1) S / b`.
 *
 * With a PE term: the root first copies its own buffer (`P (load + store)`, `P = ceil(S / c)`),
 * while the place after it fills the root's `queueSlots` slots (`min(queueSlots c / b, copy)`
 * hidden); then the root receives and stores `(n - 1) P` pieces at `p = max(c / b, load + send,
 * recv + send, recv + store)`: `copy - hidden + (n - 1) a + (n - 1) S / b + ((n - 1) P - 1) (p -
 * c / b) + recv + store`.
 */
export function gatherModelNs(
  n: number,
  hopLatencyNs: number,
  bwGbs: number,
  bytes: number,
  pe?: PeTerm,
): number {
  checkModel("gatherModelNs", n, hopLatencyNs, bwGbs, bytes);
  const base = (n - 1) * hopLatencyNs + ((n - 1) * bytes) / bwGbs;
  if (pe === undefined || n === 1 || bytes === 0) return n === 1 ? 0 : base;
  const w = checkWork("gatherModelNs", pe.work);
  const c = Math.min(checkChunk("gatherModelNs", pe.chunkBytes), bytes);
  const copy = Math.ceil(bytes / c) * (w.loadNs + w.storeNs);
  const root = w.recvNs + w.storeNs;
  const period = Math.max(c / bwGbs, w.loadNs + w.sendNs, w.recvNs + w.sendNs, root);
  const hidden = Math.min(((pe.queueSlots ?? 0) * c) / bwGbs, copy);
  return copy - hidden + base + ((n - 1) * Math.ceil(bytes / c) - 1) * (period - c / bwGbs) + root;
}

/**
 * Chain scatter out of the root of `bytes` per rank: the mirror of gather, `(n - 1) a + (n - 1)
 * S / b` without a PE term. With one: the root copies its own piece first (`P (load + store)`),
 * then loads and sends `(n - 1) P` pieces at `p = max(c / b, load + send, recv + send, recv +
 * store)`, farthest place first, so the last piece crosses one hop: `copy + load + send + a +
 * (n - 1) S / b + ((n - 1) P - 1) (p - c / b) + recv + store` (the first piece's load, the last
 * one's store).
 */
export function scatterModelNs(
  n: number,
  hopLatencyNs: number,
  bwGbs: number,
  bytes: number,
  pe?: PeTerm,
): number {
  checkModel("scatterModelNs", n, hopLatencyNs, bwGbs, bytes);
  if (pe === undefined || n === 1 || bytes === 0) return gatherModelNs(n, hopLatencyNs, bwGbs, bytes);
  const w = checkWork("scatterModelNs", pe.work);
  const c = Math.min(checkChunk("scatterModelNs", pe.chunkBytes), bytes);
  const pieces = Math.ceil(bytes / c);
  const source = w.loadNs + w.sendNs;
  const leaf = w.recvNs + w.storeNs;
  const period = Math.max(c / bwGbs, source, w.recvNs + w.sendNs, leaf);
  return (
    pieces * (w.loadNs + w.storeNs) +
    source +
    hopLatencyNs +
    ((n - 1) * bytes) / bwGbs +
    ((n - 1) * pieces - 1) * (period - c / bwGbs) +
    leaf
  );
}

/**
 * A point-to-point transfer of `bytes` over `hops` hops (the shorter way round the ring), forwarded
 * in chunks of `chunkBytes`: `h a + (S + (h - 1) c) / b`; between neighbours `a + S / b`.
 *
 * With the PE's work per piece: the source loads and sends (`ws`), a rank between receives and
 * sends (`wf`), the destination receives and stores (`wd`); chunks follow at `p = max(c / b, ws,
 * wf, wd)`: `h a + (h - 1) (c / b + wf) + ws + wd + S / b + (P - 1) (p - c / b)`.
 */
export function p2pModelNs(
  hops: number,
  hopLatencyNs: number,
  bwGbs: number,
  bytes: number,
  chunkBytes: number,
  work: PieceWork = NO_PE_WORK,
): number {
  checkModel("p2pModelNs", hops + 1, hopLatencyNs, bwGbs, bytes);
  checkWork("p2pModelNs", work);
  if (hops === 0) return 0;
  const c = Math.min(checkChunk("p2pModelNs", chunkBytes), bytes);
  const source = work.loadNs + work.sendNs;
  const between = work.recvNs + work.sendNs;
  const destination = work.recvNs + work.storeNs;
  const period = Math.max(c / bwGbs, source, hops > 1 ? between : 0, destination);
  return (
    hops * hopLatencyNs +
    (hops - 1) * (c / bwGbs + between) +
    source +
    destination +
    stream(bytes, c, bwGbs, period)
  );
}

/**
 * `S / b` for a stream of `ceil(S / c)` pieces of `c` bytes, plus what a period `p` longer than a
 * piece's wire time `c / b` adds for the pieces after the first: `(P - 1) (p - c / b)`.
 */
function stream(bytes: number, c: number, bwGbs: number, period: number): number {
  if (bytes === 0) return 0;
  return bytes / bwGbs + (Math.ceil(bytes / c) - 1) * (period - c / bwGbs);
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

function checkWork(name: string, work: PieceWork): PieceWork {
  for (const [key, value] of Object.entries(work)) {
    if (!(Number.isFinite(value) && value >= 0)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${name}: the PE's work per piece must be finite numbers >= 0 (ns), got ${key} ${value}; build it with pieceWork(peParamsOf(sim, pe), bytes, dtype).`,
      );
    }
  }
  return work;
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
