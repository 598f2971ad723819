import { type OpKind, type OpParamsByKind, type OpRecord } from "./schema.js";
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
export declare class OpLogger {
    /** The sink completed records go to. */
    readonly sink: OpLogSink;
    private readonly validate;
    /** Records `head .. nextId-1` at index `id & mask`. */
    private ring;
    private mask;
    private head;
    private nextId;
    private lastStart;
    private open;
    private state;
    constructor(sink: OpLogSink, options?: OpLoggerOptions);
    /** Records started so far (= the id the next `start` returns). */
    get recordCount(): number;
    /** Ops started and not ended yet. */
    get openCount(): number;
    /** Records held in memory: started but not yet written to the sink (open ones, and ended ones behind an open one). */
    get pendingCount(): number;
    /** Records written to the sink so far (ids `0 .. emittedCount-1`). */
    get emittedCount(): number;
    /** True after {@link close} or {@link abort}. */
    get closed(): boolean;
    /**
     * Starts an op: its component began servicing it at `tNs` (simulated ns, nondecreasing across
     * calls). Returns the record's id. The logger keeps `params` and `dependencyIds` as given (no
     * copy): do not change them afterwards. `dependencyIds` must be ids of ops already started;
     * records started without them share one frozen empty array.
     */
    start<K extends OpKind>(tNs: number, componentId: string, opKind: K, opName: string, params: OpParamsByKind[K], dependencyIds?: number[]): number;
    /**
     * Ends op `id`: its component finished servicing it at `tNs` (simulated ns, >= its t_start).
     * Writes every record that is now complete with all earlier ones to the sink.
     */
    end(id: number, tNs: number): void;
    /**
     * Ends the log after the run: checks every op ended, then closes the sink (returning what its
     * `close` returns: await it for file sinks). Throws `OPLOG_MISUSE` naming up to 5 open ops if
     * some never ended (the logger stays open then, so they can still be ended, or {@link abort}
     * called). A second `close` does nothing.
     */
    close(): void | Promise<void>;
    /** Discards the log (an interrupted run): drops pending records and calls the sink's `abort`. */
    abort(): void;
    /** Writes records from `head` while they are complete. */
    private drain;
    /** Doubles the ring, keeping every record at `id & mask`. */
    private grow;
    private check;
    private rejectStart;
    private rejectEnd;
}
/**
 * A sink that keeps every record in memory, in id order ({@link records}). For tests and small
 * runs; use `JsonlSink` from `@kb/oplog/node` for big ones.
 */
export declare class MemorySink implements OpLogSink {
    private readonly list;
    private isClosed;
    /** The records written so far, in id order (the logger's objects, not copies). */
    get records(): readonly OpRecord[];
    /** Appends a record; `OPLOG_MISUSE` after {@link close}. */
    write(record: OpRecord): void;
    /** Marks the sink complete; later writes are `OPLOG_MISUSE`. The records stay readable. */
    close(): void;
}
