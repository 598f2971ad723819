import {
  DataExecutor,
  type ExecutorOptions,
  type ExecutorStats,
  MemoryStore,
  type VerifyReport,
  verify,
} from "@kb/data-executor";
import type { OpRecord } from "@kb/oplog";
import type { Tensor } from "@kb/tensor";
import type { BenchOutcome } from "./bench.js";
import type { HostWrite } from "./simulator.js";

/** What phase 2 leaves: the memory after every op, and what the executor did. */
export interface Phase2Result {
  readonly store: MemoryStore;
  readonly stats: ExecutorStats;
  readonly executor: DataExecutor;
}

/**
 * Phase 2 (ADR-0020 D6, D7): a fresh memory store gets the host's writes (the initial data) and
 * the op log is replayed on it with real arithmetic. A host write is applied before the ops that
 * started at or after its simulated time, so data a host copies in between launches is seen by
 * the later kernels only.
 */
export function replay(
  hostWrites: readonly HostWrite[],
  records: readonly OpRecord[],
  options: ExecutorOptions = {},
): Phase2Result {
  const store = new MemoryStore();
  const executor = new DataExecutor(store, options);
  const writes = [...hostWrites].sort((a, b) => a.atNs - b.atNs);
  let next = 0;
  for (const write of writes) {
    let end = next;
    while (end < records.length && (records[end] as OpRecord).t_start < write.atNs) end++;
    if (end > next) executor.run(records.slice(next, end));
    next = end;
    store.write(write.address, write.bytes);
  }
  if (next < records.length) executor.run(next === 0 ? records : records.slice(next));
  return { store, stats: executor.stats, executor };
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
 * tolerances. The references come from the bench (a separate host implementation).
 *
 * Pass the replay's `executor.firstNonFinite` in `options` to have the report name the op that
 * first produced a non-finite value: `verifyOutcome(outcome, phase2.store, { firstNonFinite:
 * phase2.executor.firstNonFinite })`.
 */
export async function verifyOutcome(
  outcome: BenchOutcome | undefined,
  store: MemoryStore,
  options: VerifyOutcomeOptions = {},
): Promise<VerifyReport> {
  const outputs: Record<string, Tensor> = {};
  const references: Record<string, Tensor> = {};
  for (const [name, check] of Object.entries(outcome?.check ?? {})) {
    const { actual } = check;
    outputs[name] = store.readTensor(actual.address, actual.shape, actual.dtype);
    references[name] = await check.reference();
  }
  const report = verify(outputs, references);
  return options.firstNonFinite === undefined
    ? report
    : { ...report, firstNonFinite: options.firstNonFinite };
}
