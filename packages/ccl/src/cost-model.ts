import { KbError } from "@kb/errors";

/**
 * The time of a ring all-reduce of `bytes` per rank over `n` ranks, ns, by the alpha-beta model
 * of Thakur, Rabenseifner and Gropp (2005): `2 (n - 1) a + 2 (n - 1) / n * S / b`, with `a` the
 * latency of one step (`hopLatencyNs`: a send, the hop, the receive) and `b` the bandwidth of one
 * hop in GB/s (= bytes/ns). It leaves out the reduction's compute (`(n - 1) / n * S` elements
 * added per rank) and assumes every hop is uncontended: the simulation may only be slower.
 *
 * Throws `RUNTIME_INVALID` unless `n` is a whole number >= 1, `hopLatencyNs` and `bytes` are >= 0
 * and `bwGbs` is > 0 (all finite).
 */
export function ringAllReduceModelNs(n: number, hopLatencyNs: number, bwGbs: number, bytes: number): number {
  if (!Number.isInteger(n) || n < 1) {
    throw new KbError("RUNTIME_INVALID", `ringAllReduceModelNs: n must be a whole number >= 1, got ${n}.`);
  }
  if (!(Number.isFinite(hopLatencyNs) && hopLatencyNs >= 0)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `ringAllReduceModelNs: hopLatencyNs must be a finite number >= 0, got ${hopLatencyNs}.`,
    );
  }
  if (!(Number.isFinite(bwGbs) && bwGbs > 0)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `ringAllReduceModelNs: bwGbs must be a finite number > 0 (GB/s), got ${bwGbs}.`,
    );
  }
  if (!(Number.isFinite(bytes) && bytes >= 0)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `ringAllReduceModelNs: bytes must be a finite number >= 0, got ${bytes}.`,
    );
  }
  return 2 * (n - 1) * hopLatencyNs + ((2 * (n - 1)) / n) * (bytes / bwGbs);
}
