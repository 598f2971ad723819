import { formatIssuePath, KbError, schemaIssueText } from "@kb/errors";
import type * as z from "zod";
import { type EpilogueStep, type OpRecord, opRecordSchema } from "./schema.js";

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
export function opRecordToJson(record: OpRecord): string {
  return (
    `{"id":${JSON.stringify(record.id)},"t_start":${JSON.stringify(record.t_start)}` +
    `,"t_end":${JSON.stringify(record.t_end)},"component_id":${JSON.stringify(record.component_id)}` +
    `,"op_kind":${JSON.stringify(record.op_kind)},"op_name":${JSON.stringify(record.op_name)}` +
    `,"params":${paramsToJson(record)},"dependency_ids":${JSON.stringify(record.dependency_ids)}` +
    `${record.site === undefined ? "" : `,"site":${JSON.stringify(record.site)}`}}`
  );
}

/** True for the floats JSON cannot write as a number that reads back the same: NaN, ±Infinity, -0. */
function needsText(value: unknown): value is number | bigint {
  if (typeof value === "bigint") return true; // JSON has no BigInt: its decimal digits in a string
  return typeof value === "number" && (value === 0 ? 1 / value < 0 : !Number.isFinite(value));
}

/** `value` as the format writes a float: one of the strings of `FLOAT_TEXTS`, or the number. */
function floatToJson(value: unknown): unknown {
  if (!needsText(value)) return value;
  if (typeof value === "bigint") return String(value);
  if (value === 0) return "-0";
  return String(value); // "NaN", "Infinity", "-Infinity"
}

/** Whether a gemm epilogue step has an argument (other than `op`) that needs its text form. */
function stepNeedsText(step: EpilogueStep): boolean {
  for (const key in step) if (key !== "op" && needsText(step[key])) return true;
  return false;
}

/** A copy of `step` (same key order) with its numeric arguments in their JSONL form. */
function stepToJson(step: EpilogueStep): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key in step) copy[key] = key === "op" ? step[key] : floatToJson(step[key]);
  return copy;
}

/**
 * `JSON.stringify(record.params)`, except that a record whose float fields hold NaN, ±Infinity or
 * -0 is written from a copy with those in their text form. The common record costs a scan of its
 * few scalars and allocates nothing more.
 */
function paramsToJson(record: OpRecord): string {
  if (record.op_kind === "math") {
    const scalars = record.params.scalars;
    if (scalars !== undefined) {
      for (let index = 0; index < scalars.length; index++) {
        if (needsText(scalars[index])) {
          return JSON.stringify({ ...record.params, scalars: scalars.map(floatToJson) });
        }
      }
    }
  } else if (record.op_kind === "gemm") {
    const epilogue = record.params.epilogue;
    if (epilogue !== undefined) {
      for (let index = 0; index < epilogue.length; index++) {
        if (stepNeedsText(epilogue[index] as EpilogueStep)) {
          return JSON.stringify({ ...record.params, epilogue: epilogue.map(stepToJson) });
        }
      }
    }
  }
  return JSON.stringify(record.params);
}

/**
 * Validates op-log JSONL one line at a time, for readers that get lines from a stream. Each
 * non-blank line must be a record matching {@link opRecordSchema}; across lines, ids must count
 * 0, 1, 2, ..., `t_start` must not decrease, and `dependency_ids` must name earlier records.
 * Any problem is a `KbError` `OPLOG_INVALID` whose message starts with `file:line: path:`.
 */
export class OpLogJsonlParser {
  private lineNumber = 0;
  private records = 0;
  private lastStart = 0;

  /** @param file the name used in error messages (a path, or `"<oplog>"`). */
  constructor(readonly file = "<oplog>") {}

  /** Lines seen so far (1-based number of the last line given to {@link parseLine}). */
  get line(): number {
    return this.lineNumber;
  }

  /** Records returned so far (= the id the next record must have). */
  get count(): number {
    return this.records;
  }

  /** Parses the next line (without its newline); returns null for a blank line. */
  parseLine(text: string): OpRecord | null {
    this.lineNumber += 1;
    if (text.trim() === "") return null;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw this.invalid(
        `not valid JSON (${(error as Error).message}); each line must be one JSON object (an OpRecord).`,
        error,
      );
    }
    const result = opRecordSchema.safeParse(value, { reportInput: true });
    if (!result.success) {
      throw this.invalid(`${describeIssues(result.error.issues, value)}.`);
    }
    const record = result.data as OpRecord;
    if (record.id !== this.records) {
      throw this.invalid(
        `id: expected ${this.records}, got ${record.id}; ids number the records 0, 1, 2, ... in line order.`,
      );
    }
    if (record.t_start < this.lastStart) {
      throw this.invalid(
        `t_start: expected >= ${this.lastStart} (the previous record's t_start; records are in t_start order), got ${record.t_start}.`,
      );
    }
    if (record.t_end < record.t_start) {
      throw this.invalid(`t_end: expected >= t_start (${record.t_start} ns), got ${record.t_end}.`);
    }
    const dependencies = record.dependency_ids;
    for (let index = 0; index < dependencies.length; index++) {
      const dependency = dependencies[index] as number;
      if (dependency >= record.id) {
        throw this.invalid(
          `dependency_ids[${index}]: expected the id of an earlier record (< ${record.id}), got ${dependency}.`,
        );
      }
    }
    this.lastStart = record.t_start;
    this.records += 1;
    return record;
  }

  private invalid(detail: string, cause?: unknown): KbError {
    return new KbError(
      "OPLOG_INVALID",
      detail,
      cause === undefined
        ? { context: { file: this.file, line: this.lineNumber } }
        : { context: { file: this.file, line: this.lineNumber }, cause },
    );
  }
}

/**
 * Parses an op-log JSONL text (one record per line, blank lines allowed) into records, validating
 * as {@link OpLogJsonlParser} does. Throws `OPLOG_INVALID` naming `file:line`, the field path and
 * what was expected, such as `ops.jsonl:3: params.nbytes: expected a number, got "x".`
 * @param file the name used in error messages.
 */
export function parseOpLogJsonl(text: string, file = "<oplog>"): OpRecord[] {
  const parser = new OpLogJsonlParser(file);
  const records: OpRecord[] = [];
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    const record = parser.parseLine(text.slice(start, end));
    if (record !== null) records.push(record);
    start = end + 1;
  }
  return records;
}

/**
 * Up to 5 zod issues as `path: what was expected, got what; ...` (no final period).
 * @internal
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root: unknown): string {
  const shown = issues.slice(0, 5).map((issue) => describeIssue(issue, root));
  if (issues.length > 5) shown.push(`and ${issues.length - 5} more problem(s)`);
  return shown.join("; ");
}

/** `path: what was expected, what was found` for one zod issue. `root` is the whole line's value. */
function describeIssue(issue: z.core.$ZodIssue, root: unknown): string {
  const path = issue.path;
  const where = formatIssuePath(path, "<record>");
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined && path.length > 0) {
        return `${where}: missing (expected ${expectedText(issue.expected)})`;
      }
      return `${where}: expected ${expectedText(issue.expected)}, got ${describeInput(issue.input)}`;
    case "invalid_union": {
      const actual = valueAt(root, path);
      const options =
        "options" in issue && Array.isArray(issue.options)
          ? (issue.options as unknown[]).map((option) => JSON.stringify(option)).join(", ")
          : "";
      if (actual === undefined) return `${where}: missing (expected one of ${options})`;
      return `${where}: expected one of ${options}, got ${describeInput(actual)}`;
    }
    case "invalid_value": {
      const options = issue.values.map((value) => JSON.stringify(value));
      if (issue.input === undefined && path.length > 0) {
        return `${where}: missing (expected ${options.length === 1 ? options[0] : `one of ${options.join(", ")}`})`;
      }
      return `${where}: expected ${options.length === 1 ? options[0] : `one of ${options.join(", ")}`}, got ${describeInput(issue.input)}`;
    }
    case "unrecognized_keys":
      return `${where}: ${schemaIssueText(issue)} (not in the OpRecord format)`;
    case "too_small":
    case "too_big": {
      const bound = Number(issue.code === "too_small" ? issue.minimum : issue.maximum);
      const relation =
        issue.code === "too_small" ? (issue.inclusive ? ">=" : ">") : issue.inclusive ? "<=" : "<";
      const what =
        issue.origin === "array" ? "a length" : issue.origin === "string" ? "a string length" : "a value";
      return `${where}: expected ${what} ${relation} ${bound}, got ${describeInput(issue.input)}`;
    }
    default:
      return `${where}: ${issue.message}`;
  }
}

function expectedText(expected: string): string {
  switch (expected) {
    case "int":
      return "an integer";
    case "array":
    case "object":
      return `an ${expected}`;
    default:
      return `a ${expected}`;
  }
}

function describeInput(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "an array";
  if (typeof input === "object") return "an object";
  if (typeof input === "string") return JSON.stringify(input);
  return String(input);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}
