import type { ExecutorOptions, MemoryStore } from "@kb/data-executor";
import { formatSimTime } from "@kb/errors";
import type { MemoryOpRecord, OpRecord } from "@kb/oplog";
import type { LoadObservation } from "@kb/tl";
import { formatAddress } from "./memory/format.js";
import { replay } from "./phase2.js";
import type { HostWrite } from "./simulator.js";

/** Bytes shown on each side of a difference (from the first differing byte on). */
const SHOWN_BYTES = 8;

/** The first `tl.load` whose bytes in phase 1 differ from what phase 2 copied for the same op. */
export interface PhaseDifference {
  /** The `dma_read` op record's `id` in the op log. */
  readonly opId: number;
  /** Its `op_name` (`dma_read`). */
  readonly opName: string;
  /** The component that ran it: `sip0.cube0.pe1.pe_dma`. */
  readonly componentId: string;
  /** Its simulated start time (`t_start`), ns: when phase 2 applies it. */
  readonly tStartNs: number;
  /** Simulated time the load completed in phase 1 (when the kernel read the bytes), ns. */
  readonly loadedAtNs: number;
  /** The kernel that loaded. */
  readonly kernel: string;
  /** Its PE, `sip0.cube0.pe1`. */
  readonly pe: string;
  /** The `tl.load` call in the kernel's source, `file:line:col`, or null when unknown. */
  readonly site: string | null;
  /** Device address read (HBM or SRAM). */
  readonly src: number;
  /** TCM address written. */
  readonly dst: number;
  /** Offset of the first differing byte in the tile, as the kernel received it (row after row). */
  readonly byteOffset: number;
  /** Up to 8 bytes the kernel received in phase 1, from `byteOffset` on. */
  readonly phase1: number[];
  /** The same bytes as phase 2 copied them. */
  readonly phase2: number[];
}

/**
 * Whether phase 1 and phase 2 agree on every value a kernel observed (see {@link comparePhases}).
 * Plain data: `kb run --check-phases --json` prints it as `phaseCheck`.
 */
export interface PhaseCheck {
  /** `tl.load`s observed in phase 1 (loads of pending bytes are not observed: there is nothing to see). */
  readonly observed: number;
  /** Observations compared with the `dma_read` op phase 2 executed for them. */
  readonly compared: number;
  /** Observations compared whose bytes differ (0 when the phases agree). */
  readonly differing: number;
  /**
   * Observations matched by no `dma_read` op of the op log: nothing to compare them with. Always 0
   * for a complete op log of the run that observed them; anything else is a bug of kb.
   */
  readonly unmatched: number;
  /** The first difference in replay order, or null when every comparison agreed. */
  readonly firstDifference: PhaseDifference | null;
}

/** Options of {@link comparePhases}. */
export interface ComparePhasesOptions {
  /** Options of the replay (`onProgress`, `pool`, ...); `onExecuted` is the comparer's own. */
  readonly executor?: Omit<ExecutorOptions, "onExecuted">;
}

/**
 * Replays phase 2 (`replay`) and compares, op by op, every value a kernel observed in phase 1
 * with what phase 2 computes for the same op: for each `tl.load` (an observation of
 * `Simulator.loadObservations`, kept with `SimulatorOptions.checkPhases`), the bytes phase 2's
 * `dma_read` op wrote into the PE's TCM right after it executed. Phase 1 reads a load's bytes
 * when the copy completes and makes a store visible when it is issued; phase 2 applies each copy
 * at its DMA's start time (log order). They agree unless a kernel reads bytes another PE writes
 * while the load is in flight: a race the program must order (a barrier, separate launches).
 *
 * Which op an observation belongs to: the `dma_read` records of `<pe>.pe_dma` with the same
 * source and TCM destination, first in first out. A load of pending bytes (a compute result
 * phase 1 does not know) leaves a record but no observation; such a record is skipped when the
 * next one of the same PE, source and destination started before the observation completed (a
 * PE runs one load at a time). Composite GEMM and math tiles read through PE_DMA too, but into
 * the scheduler's buffers, never a kernel's scratch: they match no observation.
 *
 * Memory: an index of the observed loads' records, plus what `replay` holds. Throws what
 * `replay` throws (`OPLOG_INVALID` for a record it cannot execute).
 */
export function comparePhases(
  observations: readonly LoadObservation[],
  hostWrites: readonly HostWrite[],
  records: readonly OpRecord[],
  options: ComparePhasesOptions = {},
): PhaseCheck {
  const comparer = new PhaseComparer(observations, records);
  replay(hostWrites, records, { ...options.executor, onExecuted: comparer.onExecuted });
  return comparer.result();
}

/**
 * The comparison of {@link comparePhases} without its replay, for a caller that replays anyway
 * (`kb run --check-phases --verify` replays once): pass {@link onExecuted} to `replay`'s
 * options, then read {@link result}.
 *
 * ```ts
 * const comparer = new PhaseComparer(sim.loadObservations, records);
 * const phase2 = replay(sim.hostWrites, records, { onExecuted: comparer.onExecuted });
 * const check = comparer.result(); // and verifyOutcome(outcome, phase2.store)
 * ```
 */
export class PhaseComparer {
  /** The `ExecutorOptions.onExecuted` hook that compares each observed load's op as it runs. */
  readonly onExecuted: (record: OpRecord, store: MemoryStore) => void;
  private readonly observed: number;
  private readonly unmatched: number;
  private compared = 0;
  private differing = 0;
  private difference: PhaseDifference | null = null;

  constructor(observations: readonly LoadObservation[], records: readonly OpRecord[]) {
    const { matches, unmatched } = matchLoads(observations, records);
    this.observed = observations.length;
    this.unmatched = unmatched;
    this.onExecuted = (record, store) => {
      if (matches.size === 0) return;
      const observation = matches.get(record.id);
      if (observation === undefined) return;
      matches.delete(record.id);
      this.compare(record as MemoryOpRecord, observation, store);
    };
  }

  /** The check so far (complete once the replay has run every record). */
  result(): PhaseCheck {
    return {
      observed: this.observed,
      compared: this.compared,
      differing: this.differing,
      unmatched: this.unmatched,
      firstDifference: this.difference,
    };
  }

  /** Compares the bytes the record just wrote at its destination with the observed ones. */
  private compare(record: MemoryOpRecord, observation: LoadObservation, store: MemoryStore): void {
    this.compared++;
    const p = record.params;
    const rows = p.rows ?? 1;
    const rowBytes = p.nbytes / rows;
    const dstStride = p.dst_stride ?? rowBytes;
    const seen = observation.bytes;
    // Row by row, as the record wrote them; the observation holds them row after row.
    const copied = new Uint8Array(p.nbytes);
    const dst = p.atomic?.old_addr ?? p.dst_addr;
    for (let row = 0; row < rows; row++)
      store.readInto(dst + row * dstStride, copied.subarray(row * rowBytes, (row + 1) * rowBytes));
    let offset = -1;
    const common = Math.min(seen.length, copied.length);
    for (let i = 0; i < common; i++) {
      if (seen[i] !== copied[i]) {
        offset = i;
        break;
      }
    }
    if (offset < 0 && seen.length !== copied.length) offset = common;
    if (offset < 0) return;
    this.differing++;
    if (this.difference !== null) return;
    this.difference = {
      opId: record.id,
      opName: record.op_name,
      componentId: record.component_id,
      tStartNs: record.t_start,
      loadedAtNs: observation.atNs,
      kernel: observation.kernel,
      pe: observation.pe,
      site: observation.site,
      src: observation.src,
      dst: observation.dst,
      byteOffset: offset,
      phase1: Array.from(seen.subarray(offset, offset + SHOWN_BYTES)),
      phase2: Array.from(copied.subarray(offset, offset + SHOWN_BYTES)),
    };
  }
}

/**
 * Pairs each observation with the `dma_read` record of its load: record id -> observation, and
 * the observations no record matched. Per (PE, src, dst), records and observations are both in
 * time order (one load at a time per PE), so they pair first in first out, except that a record
 * with no observation (a load of pending bytes) is skipped when the next record of the same key
 * started before the head observation completed, and an observation that completed before the
 * record's start belongs to no later record either.
 */
function matchLoads(
  observations: readonly LoadObservation[],
  records: readonly OpRecord[],
): { matches: Map<number, LoadObservation>; unmatched: number } {
  const matches = new Map<number, LoadObservation>();
  if (observations.length === 0) return { matches, unmatched: 0 };
  const queues = new Map<string, LoadObservation[]>();
  for (const observation of observations) {
    const key = `${observation.pe}|${observation.src}|${observation.dst}`;
    const queue = queues.get(key);
    if (queue === undefined) queues.set(key, [observation]);
    else queue.push(observation);
  }
  const candidates = new Map<string, MemoryOpRecord[]>();
  for (const record of records) {
    if (record.op_kind !== "memory" || !record.component_id.endsWith(".pe_dma")) continue;
    // An atomic's old values are observed as a load from its device base into its old tile.
    const atomic = record.op_name === "dma_write" ? record.params.atomic : undefined;
    if (atomic === undefined && (record.op_name !== "dma_read" || record.params.dst_space !== "tcm"))
      continue;
    const pe = record.component_id.slice(0, -".pe_dma".length);
    const key =
      atomic === undefined
        ? `${pe}|${record.params.src_addr}|${record.params.dst_addr}`
        : `${pe}|${record.params.dst_addr}|${atomic.old_addr}`;
    if (!queues.has(key)) continue;
    const list = candidates.get(key);
    if (list === undefined) candidates.set(key, [record]);
    else list.push(record);
  }
  let unmatched = 0;
  for (const [key, queue] of queues) {
    const list = candidates.get(key) ?? [];
    let next = 0;
    for (let index = 0; index < list.length && next < queue.length; index++) {
      const record = list[index] as MemoryOpRecord;
      // An observation that completed before this record started cannot be its load's (nor a later one's).
      while (next < queue.length && (queue[next] as LoadObservation).atNs < record.t_start) {
        unmatched++;
        next++;
      }
      const observation = queue[next];
      if (observation === undefined) break;
      const following = list[index + 1];
      // The next load of this key started before this observation completed: the observation is
      // that one's (or a later one's), and this record's load observed nothing (pending bytes).
      if (following !== undefined && following.t_start < observation.atNs) continue;
      matches.set(record.id, observation);
      next++;
    }
    unmatched += queue.length - next;
  }
  return { matches, unmatched };
}

/**
 * A {@link PhaseCheck} as text: one line when the phases agree (`phases agree: 1234 loads
 * compared op by op`), else a located paragraph naming the op, its PE and kernel, the
 * `tl.load`'s site, the first differing byte and what it likely means. Observations no op
 * matched are reported on a line of their own.
 */
export function formatPhaseCheck(check: PhaseCheck): string {
  const lines: string[] = [];
  const difference = check.firstDifference;
  if (difference === null) {
    // A composite-only kernel (its tiles load into the scheduler's buffers) observes nothing.
    const none = check.observed === 0 ? " (no tl.load of known bytes was observed)" : "";
    lines.push(`phases agree: ${check.compared} ${plural(check.compared, "load")} compared op by op${none}`);
  } else {
    const where = difference.site === null ? "" : ` at ${difference.site}`;
    const others =
      check.differing > 1
        ? ` ${check.differing} of ${check.compared} loads compared differ; this is the first in replay order.`
        : ` It is the only one of ${check.compared} ${plural(check.compared, "load")} compared that differs.`;
    lines.push(
      `phases differ at op ${difference.opId} (${difference.opName} on ${difference.componentId}, t=${formatSimTime(difference.tStartNs)} ns): ` +
        `the tl.load${where} of kernel ${difference.kernel} on ${difference.pe} (${formatAddress(difference.src)} -> TCM ${formatAddress(difference.dst)}, completed at t=${formatSimTime(difference.loadedAtNs)} ns) ` +
        `received ${bytesText(difference.phase1)} at byte ${difference.byteOffset} of its tile in phase 1, ` +
        `but phase 2 copied ${bytesText(difference.phase2)}.${others}`,
      "  The bytes changed while the load was in flight: most likely another PE writes them at the same time, a race. " +
        "Phase 1 makes a store visible when it is issued and reads a load when it completes; phase 2 applies each copy at its DMA's start time. " +
        "Order the kernels: a barrier between the store and the load, or the store and the load in separate launches.",
    );
  }
  if (check.unmatched > 0) {
    lines.push(
      `  ${check.unmatched} of ${check.observed} observed ${plural(check.observed, "load")} matched no dma_read op of the op log and ${check.unmatched === 1 ? "was" : "were"} not compared (a bug of kb: please report it).`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}

/** `[3f 80 00 00]`, or `[]` past the end of the tile. */
function bytesText(bytes: readonly number[]): string {
  return `[${bytes.map((byte) => byte.toString(16).padStart(2, "0")).join(" ")}]`;
}
