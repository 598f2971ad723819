import { KbError } from "@kb/errors";
import {
  type GemmOpRecord,
  type MathOpRecord,
  type MemoryOpRecord,
  type OpRecord,
  scaleBlockOf,
} from "@kb/oplog";
import { DTYPE_BYTES, type Dtype, isFloatDtype, shapeSize, Tensor } from "@kb/tensor";
import { atomicCopy } from "./atomic.js";
import type { GemmPool } from "./gemm/gemm-pool.js";
import { fromFloat32, type GemmProblem, igemm, sgemm, toFloat32 } from "./gemm/index.js";
import { applyBlockScales } from "./gemm/scales.js";
import { type Access, accessesOf, conflict, gemmKey } from "./hazards.js";
import { indexedCopy } from "./indexed-copy.js";
import { applyMath } from "./math.js";
import type { MemoryStore } from "./memory-store.js";
import { firstNonFiniteIndex, hasNonFinite, storedValue } from "./non-finite.js";

/** Options of a {@link DataExecutor}. */
export interface ExecutorOptions {
  /** Keep a copy of every op's output bytes (`snapshots`) to compare against per-op references. */
  readonly debug?: boolean;
  /** Pull independent GEMMs of the same signature forward into one batched call (default true). */
  readonly batch?: boolean;
  /** How many records ahead a GEMM may be pulled forward from (default 256). */
  readonly lookahead?: number;
  /**
   * Worker threads for GEMM batches (`GemmPool.create(2)`): a batch big enough to pay is split
   * over them (the pool decides, see its `minSplitFlops`). Without one, GEMMs run on this thread.
   */
  readonly pool?: GemmPool | null;
  /** Called every 1024 ops with the ops executed so far (progress lines; ETA). */
  readonly onProgress?: ((opsDone: number) => void) | null;
  /**
   * Called after each record has been executed, with that record and the executor's store: the
   * record's output is in the store then, and no later record has run yet. Records are reported
   * in execution order: memory copies and math ops in log order; the GEMMs of a batch once the
   * whole batch ran (each of its records, in log order), at the position of its first record.
   * Absent (the default), nothing is called and nothing is paid. `kb run --check-phases`
   * (`comparePhases` of `@kb/runtime`) uses it to read what each `dma_read` wrote.
   *
   * **Gotchas**: the callback must not write to the store (it would change the replay), and what
   * it throws stops the run as it is (not located at the record).
   */
  readonly onExecuted?: ((record: OpRecord, store: MemoryStore) => void) | null;
}

/** What a run did. */
export interface ExecutorStats {
  /** Records executed. */
  ops: number;
  /** Records by op_name. */
  readonly byName: Record<string, number>;
  /** Batched GEMM calls and the GEMMs they carried. */
  gemmBatches: number;
  batchedGemms: number;
  /** Arithmetic of the GEMMs (2 m n k each). */
  gemmFlops: number;
}

/** The output of one op in debug mode. */
export interface OpSnapshot {
  readonly id: number;
  readonly opName: string;
  readonly componentId: string;
  readonly dst: number;
  readonly bytes: Uint8Array;
}

/**
 * The first op of a replay whose output held a NaN or an infinity
 * ({@link DataExecutor.firstNonFinite}): which op, where it ran and the first bad element.
 */
export interface NonFiniteOrigin {
  /** The op record's `id` in the op log. */
  readonly id: number;
  /** Its `op_name`, e.g. `log` or `gemm_f16`. */
  readonly opName: string;
  /** Its `op_kind`: only ops that compute values count, memory copies only move them. */
  readonly opKind: "math" | "gemm";
  /** The component that ran it, which names the PE: `sip0.cube0.pe3.pe_math`. */
  readonly componentId: string;
  /** Its simulated start time (`t_start`), ns. */
  readonly tStartNs: number;
  /** The device address of its output (`dst_addr`). */
  readonly dst: number;
  /** Row-major flat index of the first non-finite element of its output. */
  readonly index: number;
  /** That element as stored in the output dtype: NaN, Infinity or -Infinity. */
  readonly value: number;
  /**
   * True when an input of the op (or a GEMM's accumulator) already held a non-finite value: the
   * op passed on a value of the host's data (no earlier op produced one) rather than producing it.
   */
  readonly inputNonFinite: boolean;
}

/**
 * Phase 2 (ADR-0020 D6): replays an op log on a `MemoryStore` with real arithmetic.
 *
 * - **Order.** Records are executed in log order (stable t_start order, which phase 1 made
 *   causal), except that a GEMM may be pulled forward to join a batch of GEMMs with the same
 *   op_name, shapes, dtypes, layouts, transpose and accumulate flags, when the read/write address
 *   ranges of every record it would overtake show no RAW, WAW or WAR conflict and none of its
 *   `dependency_ids` is among them. Such a batch runs as one call.
 * - **Dtypes.** f32, f16, bf16, i8, i32. GEMMs accumulate in the record's `dtype_acc` (f32 via
 *   `sgemm` for floats; exact integers for i8/i32) and round once to `dtype_out`. Math ops compute
 *   in double precision and round once to the output dtype (round to nearest even); softmax is
 *   expanded to max, subtract, exp, sum and divide along its axis.
 * - **Debug mode** keeps every op's output bytes in `snapshots`.
 * - **Non-finite values.** The first math or GEMM op whose output, as stored in its dtype, holds
 *   a NaN or an infinity is kept in {@link firstNonFinite}, to name the op and PE a NaN in an
 *   output came from.
 */
export class DataExecutor {
  readonly snapshots: OpSnapshot[] = [];
  readonly stats: ExecutorStats = { ops: 0, byName: {}, gemmBatches: 0, batchedGemms: 0, gemmFlops: 0 };
  private origin: NonFiniteOrigin | null = null;
  private readonly debug: boolean;
  private readonly batch: boolean;
  private readonly lookahead: number;
  private readonly pool: GemmPool | null;
  private readonly onProgress: ((opsDone: number) => void) | null;
  private readonly onExecuted: ((record: OpRecord, store: MemoryStore) => void) | null;

  constructor(
    readonly store: MemoryStore,
    options: ExecutorOptions = {},
  ) {
    this.debug = options.debug ?? false;
    this.batch = options.batch ?? true;
    this.lookahead = options.lookahead ?? 256;
    this.pool = options.pool ?? null;
    this.onProgress = options.onProgress ?? null;
    this.onExecuted = options.onExecuted ?? null;
  }

  /**
   * The first math or GEMM op, in replay order (over every {@link run} of this executor), whose
   * output held a NaN, +Inf or -Inf as stored in its dtype (so an f16 overflow to Inf counts);
   * null while none has. Memory copies are not checked: they only move values, so a non-finite
   * output with no such op came from the host's data. When the op's inputs already held a
   * non-finite value (host data, since no earlier op produced one), `inputNonFinite` is true: it
   * passed the value on rather than producing it.
   *
   * **Gotchas**: it names where the first non-finite value was computed, which need not reach
   * an output (a later `where` may drop it). Each op's output is scanned once, with no allocation
   * per element, and scanning stops once one op is recorded.
   */
  get firstNonFinite(): NonFiniteOrigin | null {
    return this.origin;
  }

  /** Executes `records` (in log order). Throws `OPLOG_INVALID` naming the record it cannot run. */
  run(records: readonly OpRecord[]): ExecutorStats {
    const done = new Uint8Array(records.length);
    const accesses: (Access | undefined)[] = new Array(records.length);
    const accessOf = (i: number): Access => {
      let access = accesses[i];
      if (access === undefined) {
        access = accessesOf(records[i] as OpRecord);
        accesses[i] = access;
      }
      return access;
    };
    const position = new Map<number, number>();
    for (let i = 0; i < records.length; i++) position.set((records[i] as OpRecord).id, i);
    for (let i = 0; i < records.length; i++) {
      if (done[i] === 1) continue;
      const record = records[i] as OpRecord;
      if (record.op_kind === "gemm" && this.batch) {
        const group = [i];
        const key = gemmKey(record);
        const limit = Math.min(records.length, i + 1 + this.lookahead);
        for (let j = i + 1; j < limit; j++) {
          if (done[j] === 1) continue;
          const candidate = records[j] as OpRecord;
          if (candidate.op_kind !== "gemm" || gemmKey(candidate) !== key) continue;
          if (this.canMoveBefore(records, j, i, done, accessOf, position, group)) group.push(j);
        }
        this.runGemms(group.map((g) => records[g] as GemmOpRecord));
        for (const g of group) {
          done[g] = 1;
          accesses[g] = undefined;
        }
        if (this.onExecuted !== null)
          for (const g of group) this.onExecuted(records[g] as OpRecord, this.store);
        continue;
      }
      this.runOne(record);
      done[i] = 1;
      accesses[i] = undefined;
      if (this.onExecuted !== null) this.onExecuted(record, this.store);
    }
    return this.stats;
  }

  /** True when record `j` can run before every not-yet-run record in [from, j) except `group`. */
  private canMoveBefore(
    records: readonly OpRecord[],
    j: number,
    from: number,
    done: Uint8Array,
    accessOf: (i: number) => Access,
    position: ReadonlyMap<number, number>,
    group: readonly number[],
  ): boolean {
    const record = records[j] as OpRecord;
    for (const dependency of record.dependency_ids) {
      const at = position.get(dependency);
      if (at !== undefined && at >= from && at < j && done[at] !== 1) return false;
    }
    const mine = accessOf(j);
    for (let i = from; i < j; i++) {
      if (done[i] === 1 || group.includes(i)) continue;
      if (conflict(mine, accessOf(i))) return false;
    }
    // Members of the batch must not depend on each other either.
    return !group.some((g) => conflict(mine, accessOf(g)));
  }

  private count(record: OpRecord): void {
    this.stats.ops++;
    if (this.onProgress !== null && (this.stats.ops & 1023) === 0) this.onProgress(this.stats.ops);
    this.stats.byName[record.op_name] = (this.stats.byName[record.op_name] ?? 0) + 1;
  }

  private snapshot(record: OpRecord, dst: number, bytes: number): void {
    if (!this.debug) return;
    this.snapshots.push({
      id: record.id,
      opName: record.op_name,
      componentId: record.component_id,
      dst,
      bytes: this.store.read(dst, bytes),
    });
  }

  private runOne(record: OpRecord): void {
    try {
      switch (record.op_kind) {
        case "memory":
          this.copy(record);
          break;
        case "gemm":
          this.runGemms([record]);
          return;
        case "math":
          this.math(record);
          break;
        default:
          throw new KbError(
            "OPLOG_INVALID",
            `unknown op_kind ${JSON.stringify((record as OpRecord).op_kind)}.`,
          );
      }
    } catch (error) {
      throw located(record, error);
    }
    this.count(record);
  }

  private copy(record: MemoryOpRecord): void {
    const { src_addr, dst_addr, nbytes } = record.params;
    const rows = record.params.rows ?? 1;
    const rowBytes = nbytes / rows;
    if (!Number.isInteger(rowBytes)) {
      throw new KbError("OPLOG_INVALID", `nbytes ${nbytes} is not a whole number of ${rows} rows.`);
    }
    const srcStride = record.params.src_stride ?? rowBytes;
    const dstStride = record.params.dst_stride ?? rowBytes;
    const runs = record.params.mask_runs;
    const indexed = record.params.index_runs;
    if (indexed !== undefined && record.params.atomic !== undefined) {
      atomicCopy(this.store, record.params, indexed);
    } else if (indexed !== undefined) {
      indexedCopy(this.store, record.params, indexed);
    } else if (runs !== undefined) {
      this.maskedCopy(record, runs, rows, rowBytes, srcStride, dstStride);
    } else if (rows === 1 || (srcStride === rowBytes && dstStride === rowBytes)) {
      this.store.copy(src_addr, dst_addr, nbytes);
    } else {
      for (let r = 0; r < rows; r++)
        this.store.copy(src_addr + r * srcStride, dst_addr + r * dstStride, rowBytes);
    }
    if (this.debug) {
      const span = (rows - 1) * dstStride + rowBytes;
      this.snapshot(record, dst_addr, span);
    }
  }

  /**
   * A masked copy: the destination tile's rows get `mask_fill` repeated (a load's `other`), then
   * only the runs are copied (row `r`, byte `c` of the tile is at `r * stride + c` on each side).
   */
  private maskedCopy(
    record: MemoryOpRecord,
    runs: readonly number[],
    rows: number,
    rowBytes: number,
    srcStride: number,
    dstStride: number,
  ): void {
    const { src_addr, dst_addr, mask_fill } = record.params;
    if (mask_fill !== undefined && mask_fill.length > 0) {
      const row = new Uint8Array(rowBytes);
      for (let i = 0; i < rowBytes; i++) row[i] = mask_fill[i % mask_fill.length] as number;
      for (let r = 0; r < rows; r++) this.store.write(dst_addr + r * dstStride, row);
    }
    for (let i = 0; i + 1 < runs.length; i += 2) {
      const offset = runs[i] as number;
      const row = Math.floor(offset / rowBytes);
      const column = offset % rowBytes;
      this.store.copy(
        src_addr + row * srcStride + column,
        dst_addr + row * dstStride + column,
        runs[i + 1] as number,
      );
    }
  }

  private math(record: MathOpRecord): void {
    const p = record.params;
    const inputs = p.input_addrs.map((address, i) => {
      const shape = p.input_shapes[i] ?? p.shape_out;
      const inputDtype: Dtype = p.input_dtypes?.[i] ?? p.input_dtype ?? p.dtype;
      const bytes = this.store.readTyped(
        address,
        shapeSize(shape) * DTYPE_BYTES[inputDtype],
        DTYPE_BYTES[inputDtype],
      );
      return new Tensor(shape, inputDtype, bytes);
    });
    const out = applyMath(p.op, inputs, p.shape_out, p.dtype, p.axis, p.scalars ?? [], p.scalar_index);
    this.store.writeTyped(p.dst_addr, out.bytes, DTYPE_BYTES[p.dtype]);
    this.snapshot(record, p.dst_addr, out.nbytes);
    if (this.origin === null) {
      const index = firstNonFiniteIndex(out.bytes, p.dtype);
      if (index >= 0) {
        const inherited = inputs.some((input) => firstNonFiniteIndex(input.bytes, input.dtype) >= 0);
        this.recordOrigin(record, p.dst_addr, out.bytes, p.dtype, index, inherited);
      }
    }
  }

  /** One batched call for GEMMs of one signature (split over the pool's threads when it pays). */
  private runGemms(group: readonly GemmOpRecord[]): void {
    const prepared: { record: GemmOpRecord; problem: GemmProblem }[] = [];
    for (const record of group) {
      try {
        if (isFloatDtype(record.params.dtype_in))
          prepared.push({ record, problem: this.prepareGemm(record) });
        else this.integerGemm(record);
      } catch (error) {
        throw located(record, error);
      }
    }
    const problems = prepared.map((entry) => entry.problem);
    if (this.pool !== null && problems.length > 0) this.pool.batch(problems);
    else {
      for (const { m, n, k, a, b, c, transA, transB, accumulate } of problems) {
        sgemm(m, n, k, a, transA === true ? m : k, b, transB === true ? k : n, c, n, {
          transA: transA === true,
          transB: transB === true,
          accumulate: accumulate === true,
        });
      }
    }
    for (const { record, problem } of prepared) {
      const p = record.params;
      const outBytes = DTYPE_BYTES[p.dtype_out];
      const out = fromFloat32(problem.c, p.dtype_out);
      if (this.origin === null) {
        const index = firstNonFiniteIndex(out, p.dtype_out);
        if (index >= 0) {
          // The accumulator is read before the write below replaces it.
          const inherited =
            hasNonFinite(problem.a) ||
            hasNonFinite(problem.b) ||
            (problem.accumulate === true &&
              firstNonFiniteIndex(this.store.readTyped(p.dst_addr, out.byteLength, outBytes), p.dtype_out) >=
                0);
          this.recordOrigin(record, p.dst_addr, out, p.dtype_out, index, inherited);
        }
      }
      this.store.writeTyped(p.dst_addr, out, outBytes);
      this.snapshot(record, p.dst_addr, problem.c.length * outBytes);
    }
    for (const record of group) this.count(record);
    if (group.length > 1) {
      this.stats.gemmBatches++;
      this.stats.batchedGemms += group.length;
    }
  }

  /** Keeps `record` as {@link firstNonFinite}: element `index` of its output `bytes` is not finite. */
  private recordOrigin(
    record: MathOpRecord | GemmOpRecord,
    dst: number,
    bytes: Uint8Array,
    dtype: Dtype,
    index: number,
    inputNonFinite: boolean,
  ): void {
    this.origin = {
      id: record.id,
      opName: record.op_name,
      opKind: record.op_kind,
      componentId: record.component_id,
      tStartNs: record.t_start,
      dst,
      index,
      value: storedValue(bytes, dtype, index),
      inputNonFinite,
    };
  }

  /** The shape of a GEMM record: m, n, k. */
  private shape(record: GemmOpRecord): [number, number, number] {
    const p = record.params;
    const [m, n] = p.shape_out as [number, number];
    const k = (p.transpose_a ? p.shape_a[0] : p.shape_a[1]) as number;
    this.stats.gemmFlops += 2 * m * n * k;
    return [m, n, k];
  }

  /** Float GEMM: operands decoded to f32, the accumulator read when the record accumulates. */
  private prepareGemm(record: GemmOpRecord): GemmProblem {
    const p = record.params;
    const [m, n, k] = this.shape(record);
    const inBytes = DTYPE_BYTES[p.dtype_in];
    const outBytes = DTYPE_BYTES[p.dtype_out];
    // A mixed-format scaled GEMM (fp8 x fp4) decodes B as its own dtype.
    const dtypeB = p.dtype_in_b ?? p.dtype_in;
    const bBytes = DTYPE_BYTES[dtypeB];
    const a = toFloat32(this.store.readTyped(p.src_a_addr, m * k * inBytes, inBytes), p.dtype_in);
    const b = toFloat32(this.store.readTyped(p.src_b_addr, k * n * bBytes, bBytes), dtypeB);
    const blocks = Math.ceil(k / scaleBlockOf(p.scale_dtype));
    if (p.scale_a_addr !== undefined)
      applyBlockScales(a, this.store.read(p.scale_a_addr, m * blocks), m, k, !p.transpose_a, p.scale_dtype);
    if (p.scale_b_addr !== undefined)
      applyBlockScales(b, this.store.read(p.scale_b_addr, n * blocks), n, k, p.transpose_b, p.scale_dtype);
    const accumulate = p.accumulate === true;
    const c = accumulate
      ? toFloat32(this.store.readTyped(p.dst_addr, m * n * outBytes, outBytes), p.dtype_out)
      : new Float32Array(m * n);
    return { m, n, k, a, b, c, transA: p.transpose_a, transB: p.transpose_b, accumulate };
  }

  /** i8/i32 inputs: exact products summed in i32 (wrapping like the hardware's i32 accumulator). */
  private integerGemm(record: GemmOpRecord): void {
    const p = record.params;
    const [m, n, k] = this.shape(record);
    const inBytes = DTYPE_BYTES[p.dtype_in];
    const outBytes = DTYPE_BYTES[p.dtype_out];
    const read = (address: number, count: number) => {
      const bytes = this.store.readTyped(address, count * inBytes, inBytes);
      return p.dtype_in === "i8"
        ? new Int8Array(bytes.buffer, bytes.byteOffset, count)
        : new Int32Array(bytes.buffer, bytes.byteOffset, count);
    };
    const c =
      p.accumulate === true
        ? Int32Array.from(
            new Tensor(
              [m * n],
              p.dtype_out,
              this.store.readTyped(p.dst_addr, m * n * outBytes, outBytes),
            ).toFloat64Array(),
          )
        : new Int32Array(m * n);
    igemm(
      m,
      n,
      k,
      read(p.src_a_addr, m * k),
      p.transpose_a ? m : k,
      read(p.src_b_addr, k * n),
      p.transpose_b ? k : n,
      c,
      n,
      {
        transA: p.transpose_a,
        transB: p.transpose_b,
        accumulate: p.accumulate === true,
      },
    );
    const out = Tensor.fromArray(c, [m, n], p.dtype_out);
    this.store.writeTyped(p.dst_addr, out.bytes, outBytes);
    this.snapshot(record, p.dst_addr, out.nbytes);
  }
}

function located(record: OpRecord, error: unknown): KbError {
  const where = `op ${record.id} (${record.op_name} on ${record.component_id} at t=${record.t_start} ns)`;
  if (error instanceof KbError) {
    return new KbError(error.code, `${where}: ${error.detail}`, { context: error.context, cause: error });
  }
  return new KbError("OPLOG_INVALID", `${where}: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}
