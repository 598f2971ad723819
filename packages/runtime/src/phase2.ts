import {
  DataExecutor,
  type ExecutorOptions,
  type ExecutorStats,
  MemoryStore,
  type OutputCheck,
  type VerifyReport,
  verify,
} from "@kb/data-executor";
import { KbError } from "@kb/errors";
import type { OpRecord } from "@kb/oplog";
import { Tensor } from "@kb/tensor";
import type { BenchOutcome } from "./bench.js";
import { checkOutcomeTolerances } from "./check-tolerance.js";
import { applyHostWrite, type HostWrite } from "./memory/host-writes.js";

/** What phase 2 leaves: the memory after every op, and what the executor did. */
export interface Phase2Result {
  readonly store: MemoryStore;
  readonly stats: ExecutorStats;
  readonly executor: DataExecutor;
}

/** Records a streamed replay hands the executor at a time (GEMMs are batched within one). */
const STREAM_CHUNK = 16_384;

/**
 * Phase 2 (ADR-0020 D6, D7): a fresh memory store gets the host's writes (the initial data) and
 * the op log is replayed on it with real arithmetic. A host write is applied before the ops that
 * started at or after its simulated time, so data a host copies in between launches is seen by
 * the later kernels only; a write of zeros (`zeroBytes`: a freed tensor) drops the store's bytes
 * there, so the store holds what is live at each point of the replay.
 *
 * `records` is an array (a `MemorySink`'s) or any iterable in id order, such as `SpillSink`'s
 * `records()` of `@kb/oplog/node`: it is then read as the replay goes, 16 384 records at a time,
 * so the records already run can be collected. GEMMs are batched within such a chunk, so
 * `stats.gemmBatches` may differ from an array's replay; the bytes computed do not.
 */
export function replay(
  hostWrites: readonly HostWrite[],
  records: readonly OpRecord[] | Iterable<OpRecord>,
  options: ExecutorOptions = {},
): Phase2Result {
  const store = new MemoryStore();
  const executor = new DataExecutor(store, options);
  const writes = [...hostWrites].sort((a, b) => a.atNs - b.atNs);
  if (Array.isArray(records)) replayArray(executor, store, writes, records);
  else replayStream(executor, store, writes, records);
  return { store, stats: executor.stats, executor };
}

function replayArray(
  executor: DataExecutor,
  store: MemoryStore,
  writes: readonly HostWrite[],
  records: readonly OpRecord[],
): void {
  let next = 0;
  for (const write of writes) {
    let end = next;
    while (end < records.length && (records[end] as OpRecord).t_start < write.atNs) end++;
    if (end > next) executor.run(records.slice(next, end));
    next = end;
    applyHostWrite(store, write);
  }
  if (next < records.length) executor.run(next === 0 ? records : records.slice(next));
}

function replayStream(
  executor: DataExecutor,
  store: MemoryStore,
  writes: readonly HostWrite[],
  records: Iterable<OpRecord>,
): void {
  let batch: OpRecord[] = [];
  let write = 0;
  for (const record of records) {
    // The host writes made before this op started go first: after the ops that started before them.
    if (write < writes.length && (writes[write] as HostWrite).atNs <= record.t_start) {
      if (batch.length > 0) executor.run(batch);
      batch = [];
      while (write < writes.length && (writes[write] as HostWrite).atNs <= record.t_start) {
        applyHostWrite(store, writes[write] as HostWrite);
        write++;
      }
    }
    batch.push(record);
    if (batch.length >= STREAM_CHUNK) {
      executor.run(batch);
      batch = [];
    }
  }
  if (batch.length > 0) executor.run(batch);
  for (; write < writes.length; write++) applyHostWrite(store, writes[write] as HostWrite);
}

/** Options of {@link verifyOutcome}. */
export interface VerifyOutcomeOptions {
  /**
   * The replay's `executor.firstNonFinite` (see {@link Phase2Result}): the first math or GEMM op
   * whose output held a NaN or an infinity, or null when none did. The report carries it as
   * `firstNonFinite`, so `formatVerifyTable` names the op and PE a non-finite output came from
   * (or says it came from the host's data). Default: absent, nothing is said.
   */
  readonly firstNonFinite?: DataExecutor["firstNonFinite"];
}

/**
 * Checks a bench's outputs (read from phase 2's memory) against its references with the D11
 * tolerances, or a check's own `tolerance` (its fields over the dtype's). The references come
 * from the bench (a separate host implementation).
 *
 * One check at a time, in the outcome's order: its reference is computed, its output read (into
 * one buffer as large as the largest output, reused), the two compared and dropped before the
 * next, with a turn of the event loop in between; so memory holds one output and one reference (a
 * reference the bench shares between checks aside). The report lists the checks in name order.
 *
 * Pass the replay's `executor.firstNonFinite` in `options` to have the report name the op that
 * first produced a non-finite value: `verifyOutcome(outcome, phase2.store, { firstNonFinite:
 * phase2.executor.firstNonFinite })`.
 *
 * Throws `MEMORY_ACCESS` for a check whose output tensor was freed (its bytes are gone from
 * phase 2's memory too), naming the check and where the tensor was freed; `RUNTIME_INVALID` for a
 * check's bad `tolerance` (as `runBenchCore` does when the bench returns).
 */
export async function verifyOutcome(
  outcome: BenchOutcome | undefined,
  store: MemoryStore,
  options: VerifyOutcomeOptions = {},
): Promise<VerifyReport> {
  checkOutcomeTolerances(outcome);
  const checks: OutputCheck[] = [];
  const entries = Object.entries(outcome?.check ?? {});
  // One buffer for every output, as large as the largest: verify keeps nothing of the tensors it
  // compares, and a fresh array per output would be garbage of the outputs' total size.
  let largest = 0;
  for (const [, { actual }] of entries) if (!actual.freed) largest = Math.max(largest, actual.nbytes);
  const buffer = new Uint8Array(largest);
  for (const [name, check] of entries) {
    const { actual } = check;
    if (actual.freed) {
      throw new KbError(
        "MEMORY_ACCESS",
        `verify: check "${name}": its output ${actual.describeOrigin()} was freed${actual.freedAt === null ? "" : ` at ${actual.freedAt}`}, so its bytes are gone from phase 2's memory too. A bench must keep the outputs it returns in check alive (free the other tensors).`,
      );
    }
    const reference = await check.reference();
    const bytes = store.readInto(actual.address, buffer.subarray(0, actual.nbytes));
    const output = new Tensor(actual.shape, actual.dtype, bytes);
    const own = check.tolerance === undefined ? {} : { outputTolerances: { [name]: check.tolerance } };
    checks.push(...verify({ [name]: output }, { [name]: reference }, own).outputs);
    // A turn of the event loop: the collector can reclaim this check's arrays (a reference's
    // inputs, hundreds of MiB for a large output) before the next check makes its own.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  checks.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const report: VerifyReport = { pass: checks.every((check) => check.pass), outputs: checks };
  return options.firstNonFinite === undefined
    ? report
    : { ...report, firstNonFinite: options.firstNonFinite };
}
