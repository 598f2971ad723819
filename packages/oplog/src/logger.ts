import { KbError } from "@kb/errors";
import { describeIssues } from "./jsonl.js";
import { type OpKind, type OpParamsByKind, type OpRecord, opRecordSchema } from "./schema.js";

/**
 * Where an {@link OpLogger} puts completed records: `write` is called once per record, in id
 * order (= t_start order). The record object is handed over, not copied.
 */
export interface OpLogSink {
  /** Takes the next completed record. */
  write(record: OpRecord): void;
  /** Called by `OpLogger.close()` after the last record; may finish asynchronously. */
  close?(): void | Promise<void>;
  /** Called by `OpLogger.abort()`: discard what was written (a file sink removes its temp file). */
  abort?(): void;
}

/** Options of {@link OpLogger}. */
export interface OpLoggerOptions {
  /**
   * Validate every record against `opRecordSchema` in `start()` (`OPLOG_INVALID` naming the op
   * and the bad field). Default false: validation allocates and is meant for tests and debugging.
   */
  readonly validate?: boolean;
}

/** `t_end` of a record whose op has not ended (a number, so records keep one shape). */
const OPEN = Number.NaN;
/** Shared by every record started without dependencies (never mutated). */
const NO_DEPENDENCIES = Object.freeze([]) as unknown as number[];
const INITIAL_CAPACITY = 64;

/**
 * Records the data ops of a timing run (ADR-0020 D2/D5): the component hook calls
 * {@link start} when it begins servicing an op and {@link end} when the service completes, both
 * with the simulated time in ns. Ids are assigned in start order; since a DES calls `start` in
 * nondecreasing time, that is the stable t_start order (ties keep insertion order), and the id
 * is the record's position in the log.
 *
 * Completed records go to the sink in id order: record k is written once records 0..k have all
 * ended, so an op still running holds back the records started after it. Only that window of
 * not-yet-written records is kept ({@link pendingCount}), in a ring buffer.
 *
 * Misuse (time going backwards, ending an unknown op or an op twice, anything after close) is a
 * `KbError` `OPLOG_MISUSE`.
 */
export class OpLogger {
  /** The sink completed records go to. */
  readonly sink: OpLogSink;
  private readonly validate: boolean;
  /** Records `head .. nextId-1` at index `id & mask`. */
  private ring: (OpRecord | undefined)[];
  private mask: number;
  private head = 0;
  private nextId = 0;
  private lastStart = 0;
  private open = 0;
  private state: "open" | "closed" | "aborted" = "open";

  constructor(sink: OpLogSink, options: OpLoggerOptions = {}) {
    this.sink = sink;
    this.validate = options.validate === true;
    this.ring = new Array<OpRecord | undefined>(INITIAL_CAPACITY).fill(undefined);
    this.mask = INITIAL_CAPACITY - 1;
  }

  /** Records started so far (= the id the next `start` returns). */
  get recordCount(): number {
    return this.nextId;
  }

  /** Ops started and not ended yet. */
  get openCount(): number {
    return this.open;
  }

  /** Records held in memory: started but not yet written to the sink (open ones, and ended ones behind an open one). */
  get pendingCount(): number {
    return this.nextId - this.head;
  }

  /** Records written to the sink so far (ids `0 .. emittedCount-1`). */
  get emittedCount(): number {
    return this.head;
  }

  /** True after {@link close} or {@link abort}. */
  get closed(): boolean {
    return this.state !== "open";
  }

  /**
   * Starts an op: its component began servicing it at `tNs` (simulated ns, nondecreasing across
   * calls). Returns the record's id. The logger keeps `params` and `dependencyIds` as given (no
   * copy): do not change them afterwards. `dependencyIds` must be ids of ops already started;
   * records started without them share one frozen empty array.
   */
  start<K extends OpKind>(
    tNs: number,
    componentId: string,
    opKind: K,
    opName: string,
    params: OpParamsByKind[K],
    dependencyIds?: number[],
  ): number {
    const id = this.nextId;
    if (!(tNs >= this.lastStart && tNs < Number.POSITIVE_INFINITY) || this.state !== "open") {
      this.rejectStart(tNs, componentId, opName);
    }
    const dependencies = dependencyIds ?? NO_DEPENDENCIES;
    for (let index = 0; index < dependencies.length; index++) {
      const dependency = dependencies[index] as number;
      if (!(dependency >= 0 && dependency < id && Number.isInteger(dependency))) {
        throw new KbError(
          "OPLOG_MISUSE",
          `start(${opName}): dependencyIds[${index}] is ${String(dependency)}, but a dependency must be the id of an op already started (0 .. ${id - 1}); pass the ids returned by earlier start() calls.`,
          { context: { nodeId: componentId, simTimeNs: tNs } },
        );
      }
    }
    const record = {
      id,
      t_start: tNs,
      t_end: OPEN,
      component_id: componentId,
      op_kind: opKind,
      op_name: opName,
      params,
      dependency_ids: dependencies,
    } as OpRecord;
    if (this.validate) this.check(record);
    if (id - this.head > this.mask) this.grow();
    this.ring[id & this.mask] = record;
    this.nextId = id + 1;
    this.lastStart = tNs;
    this.open++;
    return id;
  }

  /**
   * Ends op `id`: its component finished servicing it at `tNs` (simulated ns, >= its t_start).
   * Writes every record that is now complete with all earlier ones to the sink.
   */
  end(id: number, tNs: number): void {
    if (!(id >= this.head && id < this.nextId) || this.state !== "open") this.rejectEnd(id, tNs);
    const record = this.ring[id & this.mask] as OpRecord;
    // NaN marks an open op.
    if (!Number.isNaN(record.t_end) || !Number.isInteger(id)) this.rejectEnd(id, tNs);
    if (!(tNs >= record.t_start && tNs < Number.POSITIVE_INFINITY)) {
      throw new KbError(
        "OPLOG_MISUSE",
        `end(${id}) of ${record.op_name} at t=${tNs} ns, before its t_start ${record.t_start} ns; an op ends at or after it starts (pass the simulated time when the service completed).`,
        { context: { nodeId: record.component_id, simTimeNs: tNs } },
      );
    }
    record.t_end = tNs;
    this.open--;
    if (id === this.head) this.drain();
  }

  /**
   * Marks the records started on `componentId` from id `fromId` on, still held (not yet written),
   * as serving the kernel line `site` (`file:line`; the record's `site`), unless one already has
   * a site. `@kb/runtime`'s per-line tally calls it right after a component started a message's
   * records, with the id the log was at before.
   */
  annotate(fromId: number, componentId: string, site: string): void {
    for (let id = Math.max(fromId, this.head); id < this.nextId; id++) {
      const record = this.ring[id & this.mask] as OpRecord;
      if (record.component_id === componentId && record.site === undefined) record.site = site;
    }
  }

  /**
   * Ends the log after the run: checks every op ended, then closes the sink (returning what its
   * `close` returns: await it for file sinks). Throws `OPLOG_MISUSE` naming up to 5 open ops if
   * some never ended (the logger stays open then, so they can still be ended, or {@link abort}
   * called). A second `close` does nothing.
   */
  close(): void | Promise<void> {
    if (this.state === "closed") return;
    if (this.state === "aborted") {
      throw new KbError("OPLOG_MISUSE", "close() after abort(): the op log was discarded.");
    }
    if (this.open > 0) {
      const listed: string[] = [];
      for (let id = this.head; id < this.nextId && listed.length < 5; id++) {
        const record = this.ring[id & this.mask] as OpRecord;
        if (Number.isNaN(record.t_end)) {
          listed.push(
            `#${record.id} ${record.op_name} on ${record.component_id} (t_start ${record.t_start} ns)`,
          );
        }
      }
      const more = this.open > listed.length ? `, and ${this.open - listed.length} more` : "";
      throw new KbError(
        "OPLOG_MISUSE",
        `close() with ${this.open} op(s) never ended: ${listed.join(", ")}${more}. Every start() needs an end(id, tNs) when its component finishes the op: run the simulation until these ops complete before closing, or call abort() to discard the log of a run that stopped early.`,
      );
    }
    this.state = "closed";
    return this.sink.close?.();
  }

  /** Discards the log (an interrupted run): drops pending records and calls the sink's `abort`. */
  abort(): void {
    if (this.state !== "open") return;
    this.state = "aborted";
    this.ring = [];
    this.head = this.nextId;
    this.open = 0;
    this.sink.abort?.();
  }

  /** Writes records from `head` while they are complete. */
  private drain(): void {
    const ring = this.ring;
    const mask = this.mask;
    const sink = this.sink;
    let head = this.head;
    const end = this.nextId;
    while (head < end) {
      const record = ring[head & mask] as OpRecord;
      if (Number.isNaN(record.t_end)) break;
      ring[head & mask] = undefined;
      head++;
      this.head = head;
      sink.write(record);
    }
  }

  /** Doubles the ring, keeping every record at `id & mask`. */
  private grow(): void {
    const capacity = (this.mask + 1) * 2;
    const mask = capacity - 1;
    const ring = new Array<OpRecord | undefined>(capacity).fill(undefined);
    for (let id = this.head; id < this.nextId; id++) ring[id & mask] = this.ring[id & this.mask];
    this.ring = ring;
    this.mask = mask;
  }

  private check(record: OpRecord): void {
    const result = opRecordSchema.safeParse({ ...record, t_end: record.t_start }, { reportInput: true });
    if (!result.success) {
      throw new KbError(
        "OPLOG_INVALID",
        `start(${record.op_name}) would log an invalid ${record.op_kind} record: ${describeIssues(result.error.issues, record)}.`,
        { context: { nodeId: record.component_id, simTimeNs: record.t_start } },
      );
    }
  }

  private rejectStart(tNs: number, componentId: string, opName: string): never {
    const context = { context: { nodeId: componentId, simTimeNs: tNs } };
    if (this.state !== "open") {
      throw new KbError(
        "OPLOG_MISUSE",
        `start(${opName}) after the op log was ${this.state}; nothing can be logged after close() or abort(). Close the logger only when the run is over.`,
        context,
      );
    }
    throw new KbError(
      "OPLOG_MISUSE",
      `start(${opName}) at t=${tNs} ns, but ${
        Number.isFinite(tNs) ? `the previous start was at t=${this.lastStart} ns` : "a time must be finite"
      }; start() takes the current simulated time, which never goes backwards (records are in t_start order).`,
      context,
    );
  }

  private rejectEnd(id: number, tNs: number): never {
    const context = { context: { simTimeNs: tNs } };
    if (this.state !== "open") {
      throw new KbError(
        "OPLOG_MISUSE",
        `end(${id}) after the op log was ${this.state}; end every op before close().`,
        context,
      );
    }
    if (Number.isInteger(id) && id >= 0 && id < this.nextId) {
      throw new KbError(
        "OPLOG_MISUSE",
        `end(${id}) of an op that has already ended; call end() once per id returned by start().`,
        context,
      );
    }
    throw new KbError(
      "OPLOG_MISUSE",
      `end(${String(id)}) of an unknown op: ids are the values start() returned (0 .. ${this.nextId - 1} so far).`,
      context,
    );
  }
}

/**
 * A sink that keeps every record in memory, in id order ({@link records}). For tests and small
 * runs; use `JsonlSink` from `@kb/oplog/node` for big ones.
 */
export class MemorySink implements OpLogSink {
  private readonly list: OpRecord[] = [];
  private isClosed = false;

  /** The records written so far, in id order (the logger's objects, not copies). */
  get records(): readonly OpRecord[] {
    return this.list;
  }

  /** Appends a record; `OPLOG_MISUSE` after {@link close}. */
  write(record: OpRecord): void {
    if (this.isClosed) {
      throw new KbError(
        "OPLOG_MISUSE",
        `write of record ${record.id} after the MemorySink was closed; nothing can be appended after close().`,
      );
    }
    this.list.push(record);
  }

  /** Marks the sink complete; later writes are `OPLOG_MISUSE`. The records stay readable. */
  close(): void {
    this.isClosed = true;
  }
}
