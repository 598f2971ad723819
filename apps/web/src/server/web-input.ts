import { formatByteCount, formatSchemaIssues, KbError } from "@kb/errors";
import { type RunResults, RunResultsSchema } from "@kb/runtime";
import { cacheEntryResults } from "@kb/runtime/node";
import {
  isRecord,
  TimelineBuilder,
  type TraceTimeline,
  timelineOfTrace,
  WHAT_KB_WEB_READS,
} from "../trace-timeline.js";
import { inputChunks } from "./web-file.js";
import { JsonEventSplitter, SplitterError } from "./web-json-events.js";

// Reading one file given to `kb web`: a results file or a trace, gzip-compressed or not. A trace is
// read as a stream, event by event, whatever its layout (kb run --trace's one event per line,
// Chrome's array form, all on one line): no string of the whole file, no array of its events, so
// a trace of millions of slices fits in memory, and a file that is not one is refused as soon as
// that shows.

/** The longest JSON text of one trace event kb web reads (kb run --trace writes ~100 bytes). */
export const MAX_TRACE_EVENT_BYTES = 16 * 1024 ** 2;

/** The most JSON kb web parses as one text: a results file, or a trace object besides its events. */
export const MAX_JSON_TEXT_BYTES = 256 * 1024 ** 2;

/** A file given to kb web, read. */
export type WebInput =
  | { readonly kind: "results"; readonly results: RunResults }
  | { readonly kind: "trace"; readonly trace: TraceTimeline };

/**
 * Reads `file` (gunzipped when it starts with gzip's magic bytes 0x1f 0x8b, whatever its name):
 * results (`"schema": "kb.results/1"`) or a trace (`"traceEvents"`, or an array of events), of at
 * most `maxBytes` on disk and decompressed.
 *
 * Throws a `KbError` naming the file (and the line, for a trace's event) when it cannot be read
 * (see `inputChunks`), does not decompress, is not JSON, is neither kind, has an event longer than
 * {@link MAX_TRACE_EVENT_BYTES} or more than {@link MAX_JSON_TEXT_BYTES} of other JSON, or is a
 * results file that does not match `RunResultsSchema`.
 */
export async function readWebInput(file: string, label: string, maxBytes: number): Promise<WebInput> {
  const builder = new TimelineBuilder(file);
  const splitter = new JsonEventSplitter(
    { maxEventBytes: MAX_TRACE_EVENT_BYTES, maxFrameBytes: MAX_JSON_TEXT_BYTES },
    (text, index, line) => addEvent(builder, text, index, { file, line }),
  );
  let frame: string;
  try {
    for await (const chunk of inputChunks(file, maxBytes)) splitter.push(chunk);
    frame = splitter.finish();
  } catch (error) {
    if (error instanceof SplitterError) throw splitterError(file, error);
    throw error;
  }
  return interpret(frame, file, label, splitter.hasEvents ? builder : null);
}

/** Parses one event's text and adds it; errors located at the event's line. */
function addEvent(
  builder: TimelineBuilder,
  text: string,
  index: number,
  where: { file: string; line: number },
): void {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch (error) {
    throw new KbError(
      "CLI_USAGE",
      `traceEvents[${index}] is not JSON: ${(error as Error).message}. ${WHAT_KB_WEB_READS}`,
      { context: where, cause: error },
    );
  }
  try {
    builder.add(event, index);
  } catch (error) {
    if (!(error instanceof KbError)) throw error;
    throw new KbError(error.code, error.detail, { context: { ...error.context, ...where }, cause: error });
  }
}

/** A problem the splitter found, as kb web reports it. */
function splitterError(file: string, error: SplitterError): KbError {
  const context = { file, line: error.where.line };
  switch (error.kind) {
    case "event-size":
      return new KbError(
        "CLI_USAGE",
        `traceEvents[${error.where.event}] is longer than ${formatByteCount(MAX_TRACE_EVENT_BYTES)}, the most kb web reads of one trace event (kb run --trace writes about 100 bytes each): not a trace kb web can read. ${WHAT_KB_WEB_READS}`,
        { context },
      );
    case "frame-size":
      return new KbError(
        "CLI_USAGE",
        `more than ${formatByteCount(MAX_JSON_TEXT_BYTES)} of JSON that is not a trace's events, the most kb web parses as one text (a results file of kb run --json is far smaller). ${WHAT_KB_WEB_READS}`,
        { context },
      );
    case "not-object-or-array":
      return new KbError(
        "CLI_USAGE",
        `not JSON, or JSON that is neither an object nor an array: neither a results file nor a trace. ${WHAT_KB_WEB_READS}`,
        { context },
      );
    default:
      return new KbError("CLI_USAGE", `not JSON: ${error.message}. ${WHAT_KB_WEB_READS}`, { context });
  }
}

/**
 * A whole JSON text as results or a trace; `builder` holds the events of a trace read as a stream,
 * whose text here has an empty events array.
 */
function interpret(text: string, file: string, label: string, builder: TimelineBuilder | null): WebInput {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new KbError("CLI_USAGE", `not JSON: ${(error as Error).message}. ${WHAT_KB_WEB_READS}`, {
      context: { file },
      cause: error,
    });
  }
  // A run of a results cache (kb run --cache, kb sweep --cache): its results, once their sha256 holds.
  const cached = cacheEntryResults(json);
  if (cached !== null) {
    if ("damaged" in cached) {
      throw new KbError(
        "CLI_USAGE",
        `a results cache entry whose ${cached.damaged.replace(/^its /, "")}: kb web shows only what a run wrote. Run the point again (kb run --cache, or kb sweep --cache) to cache it anew.`,
        { context: { file } },
      );
    }
    json = cached.results;
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
      const problems = formatSchemaIssues(parsed.error.issues.slice(0, 3), { root: "(top)" }).join("; ");
      throw new KbError(
        "CLI_USAGE",
        `not a valid results file (schema "kb.results/1"): ${problems}. Write it again with kb run --json.`,
        { context: { file } },
      );
    }
    return { kind: "results", results: parsed.data };
  }
  if (builder !== null) return { kind: "trace", trace: builder.finish(label) };
  if (isRecord(json) && Array.isArray(json.traceEvents)) {
    return { kind: "trace", trace: timelineOfTrace(json.traceEvents, file, label) };
  }
  throw new KbError("CLI_USAGE", `neither a results file nor a trace. ${WHAT_KB_WEB_READS}`, {
    context: { file },
  });
}
