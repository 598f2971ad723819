import type * as z from "zod";
import { type OpRecord } from "./schema.js";
/**
 * One record as one line of JSON (no newline), keys in the fixed order `id, t_start, t_end,
 * component_id, op_kind, op_name, params, dependency_ids`, so identical records always give
 * identical bytes. `params` keeps its own key order.
 *
 * In the float fields (math `scalars`, the numeric arguments of gemm `epilogue` steps) NaN,
 * Infinity, -Infinity and -0 are written as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`,
 * `"-0"` (`FLOAT_TEXTS`), which the reader turns back into the numbers; a record without such a
 * value is written by plain `JSON.stringify`. Other number fields are integers or finite times.
 */
export declare function opRecordToJson(record: OpRecord): string;
/**
 * Validates op-log JSONL one line at a time, for readers that get lines from a stream. Each
 * non-blank line must be a record matching {@link opRecordSchema}; across lines, ids must count
 * 0, 1, 2, ..., `t_start` must not decrease, and `dependency_ids` must name earlier records.
 * Any problem is a `KbError` `OPLOG_INVALID` whose message starts with `file:line: path:`.
 */
export declare class OpLogJsonlParser {
    readonly file: string;
    private lineNumber;
    private records;
    private lastStart;
    /** @param file the name used in error messages (a path, or `"<oplog>"`). */
    constructor(file?: string);
    /** Lines seen so far (1-based number of the last line given to {@link parseLine}). */
    get line(): number;
    /** Records returned so far (= the id the next record must have). */
    get count(): number;
    /** Parses the next line (without its newline); returns null for a blank line. */
    parseLine(text: string): OpRecord | null;
    private invalid;
}
/**
 * Parses an op-log JSONL text (one record per line, blank lines allowed) into records, validating
 * as {@link OpLogJsonlParser} does. Throws `OPLOG_INVALID` naming `file:line`, the field path and
 * what was expected, such as `ops.jsonl:3: params.nbytes: expected a number, got "x".`
 * @param file the name used in error messages.
 */
export declare function parseOpLogJsonl(text: string, file?: string): OpRecord[];
/**
 * Up to 5 zod issues as `path: what was expected, got what; ...` (no final period).
 * @internal
 */
export declare function describeIssues(issues: readonly z.core.$ZodIssue[], root: unknown): string;
