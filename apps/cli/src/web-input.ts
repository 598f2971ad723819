import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import { KbError } from "@kb/errors";
import { type RunResults, RunResultsSchema } from "@kb/runtime";
import {
  isRecord,
  TimelineBuilder,
  type TraceTimeline,
  timelineOfTrace,
  WHAT_KB_WEB_READS,
} from "./web-timeline.js";

// Reading one file given to `kb web`: a results file or a trace, gzip-compressed or not. A trace as
// kb run --trace writes it (one event per line) is read as a stream, line by line: no string of
// the whole file, no array of its events, so a trace of millions of slices fits in memory.

/** A file given to kb web, read. */
export type WebInput =
  | { readonly kind: "results"; readonly results: RunResults }
  | { readonly kind: "trace"; readonly trace: TraceTimeline };

/** The first line of a trace as kb run --trace writes it. */
const KB_TRACE_HEADER = '{"traceEvents":[';

/**
 * Reads `file` (gunzipped when it starts with gzip's magic bytes 0x1f 0x8b, whatever its name):
 * results (`"schema": "kb.results/1"`) or a trace (`"traceEvents"`, or an array of events).
 *
 * Throws a `KbError` naming the file when it cannot be read, does not decompress, is not JSON, is
 * neither kind, or is a results file that does not match `RunResultsSchema`.
 */
export async function readWebInput(file: string, label: string): Promise<WebInput> {
  const gzip = await startsWithGzipMagic(file);
  const lines = createInterface({ input: source(file, gzip), crlfDelay: Number.POSITIVE_INFINITY });
  let builder: TimelineBuilder | null = null;
  let first = true;
  let index = 0;
  let footer: string | null = null;
  let broken = false;
  const text: string[] = [];
  try {
    for await (const raw of lines) {
      if (first) {
        first = false;
        if (raw.trim() === KB_TRACE_HEADER) {
          builder = new TimelineBuilder(file);
          continue;
        }
      }
      if (builder === null) {
        text.push(raw);
        continue;
      }
      const line = raw.trim();
      if (line === "") continue;
      if (footer !== null || line.startsWith("]")) {
        if (footer !== null) broken = true;
        footer = line;
        if (broken) break;
        continue;
      }
      let event: unknown;
      try {
        event = JSON.parse(line.endsWith(",") ? line.slice(0, -1) : line);
      } catch {
        broken = true;
        break;
      }
      builder.add(event, index++);
    }
  } catch (error) {
    throw readError(file, error);
  } finally {
    lines.close();
  }
  if (builder !== null && !broken && footer !== null && closes(footer)) {
    return { kind: "trace", trace: builder.finish(label) };
  }
  // Not (or not wholly) in kb's line form: parse the whole text, for JSON's own error message.
  return interpret(builder === null ? text.join("\n") : await wholeText(file, gzip), file, label);
}

/** Whether `footer` (the line after the last event) closes kb's header into JSON. */
function closes(footer: string): boolean {
  try {
    JSON.parse(`${KB_TRACE_HEADER}${footer}`);
    return true;
  } catch {
    return false;
  }
}

async function startsWithGzipMagic(file: string): Promise<boolean> {
  try {
    const handle = await open(file, "r");
    try {
      const head = Buffer.alloc(2);
      const { bytesRead } = await handle.read(head, 0, 2, 0);
      return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw readError(file, error);
  }
}

function source(file: string, gzip: boolean): NodeJS.ReadableStream {
  const stream = createReadStream(file);
  if (!gzip) return stream;
  const gunzip = createGunzip();
  stream.on("error", (error) => gunzip.destroy(error));
  return stream.pipe(gunzip);
}

async function wholeText(file: string, gzip: boolean): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of source(file, gzip)) chunks.push(chunk as Buffer);
  } catch (error) {
    throw readError(file, error);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A read or decompression error as kb web reports it. */
function readError(file: string, error: unknown): KbError {
  if (error instanceof KbError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? "";
  const message = (error as Error).message;
  if (code.startsWith("Z_") || /unexpected end of file|incorrect header check|invalid/i.test(message)) {
    return new KbError(
      "CLI_USAGE",
      `a gzip file that does not decompress (${message}): truncated or damaged? Write it again with kb run --trace.`,
      { context: { file }, cause: error },
    );
  }
  return new KbError("CLI_USAGE", `cannot read the file: ${message}`, { context: { file }, cause: error });
}

/** A whole JSON text as results or a trace. */
function interpret(text: string, file: string, label: string): WebInput {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new KbError("CLI_USAGE", `not JSON: ${(error as Error).message}. ${WHAT_KB_WEB_READS}`, {
      context: { file },
      cause: error,
    });
  }
  if (isRecord(json) && "schema" in json) {
    if (json.schema !== "kb.results/1") {
      throw new KbError(
        "CLI_USAGE",
        `a file of schema ${JSON.stringify(json.schema)}, expected "kb.results/1". ${WHAT_KB_WEB_READS}`,
        { context: { file } },
      );
    }
    const parsed = RunResultsSchema.safeParse(json);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join(".") || "(top)"}: ${issue.message}`)
        .join("; ");
      throw new KbError(
        "CLI_USAGE",
        `not a valid results file (schema "kb.results/1"): ${problems}. Write it again with kb run --json.`,
        { context: { file } },
      );
    }
    return { kind: "results", results: parsed.data };
  }
  if (isRecord(json) && Array.isArray(json.traceEvents)) {
    return { kind: "trace", trace: timelineOfTrace(json.traceEvents, file, label) };
  }
  // Chrome's other trace form: a bare array of events.
  if (Array.isArray(json) && json.every((event) => isRecord(event) && typeof event.ph === "string")) {
    return { kind: "trace", trace: timelineOfTrace(json, file, label) };
  }
  throw new KbError("CLI_USAGE", `neither a results file nor a trace. ${WHAT_KB_WEB_READS}`, {
    context: { file },
  });
}
