import { describe, expect, it } from "vitest";
import { JsonEventSplitter, SplitterError } from "./web-json-events.js";

// The splitter kb web reads traces with: the same events and frame whatever the layout and
// wherever the chunks are cut, and refusals located at the line.

const LIMITS = { maxEventBytes: 1024, maxFrameBytes: 4096 };

/** Splits `text` cut into chunks of `size` bytes: the events parsed, their lines, and the frame. */
function split(text: string, size: number, limits = LIMITS) {
  const events: { event: unknown; index: number; line: number }[] = [];
  const splitter = new JsonEventSplitter(limits, (eventText, index, line) => {
    events.push({ event: JSON.parse(eventText), index, line });
  });
  const bytes = Buffer.from(text, "utf8");
  for (let at = 0; at < bytes.length; at += size) splitter.push(bytes.subarray(at, at + size));
  return { events, frame: splitter.finish(), hasEvents: splitter.hasEvents };
}

/** The error `split` throws. */
function refusal(text: string, size = 3, limits = LIMITS): SplitterError {
  try {
    split(text, size, limits);
  } catch (error) {
    if (error instanceof SplitterError) return error;
    throw error;
  }
  throw new Error(`no error for ${text}`);
}

const events = [
  { name: "thread_name", ph: "M", pid: 1, tid: 1, args: { name: 'quote " and \\ backslash \\"' } },
  { name: "a]}[{,", ph: "X", ts: 1, dur: 2, pid: 1, tid: 1 },
  { name: "ünïcödé 🚀", ph: "X", ts: 3, dur: 1, pid: 1, tid: 1, args: { nested: [[1, { a: [] }], {}] } },
];

const layouts: [string, string, string][] = [
  [
    "kb run --trace's (one event per line)",
    `{"traceEvents":[\n${events.map((event) => JSON.stringify(event)).join(",\n")}\n],"displayTimeUnit":"ns"}\n`,
    '{"traceEvents":[],"displayTimeUnit":"ns"}',
  ],
  ["Chrome's array form, on one line", JSON.stringify(events), "[]"],
  [
    "an object on one line, members around the events",
    JSON.stringify({ a: [1, { traceEvents: [2] }], traceEvents: events, z: "]" }),
    '{"a":[1,{"traceEvents":[2]}],"traceEvents":[],"z":"]"}',
  ],
  ["pretty-printed", JSON.stringify({ traceEvents: events }, null, 2), '{"traceEvents":[]}'],
];

describe("JsonEventSplitter", () => {
  for (const [layout, text, frame] of layouts) {
    it(`hands over each event of ${layout}, wherever the chunks are cut`, () => {
      for (const size of [1, 2, 3, 5, 7, 64, 100_000]) {
        const result = split(text, size);
        expect(
          result.events.map((entry) => entry.event),
          `chunks of ${size}`,
        ).toEqual(events);
        expect(result.events.map((entry) => entry.index)).toEqual([0, 1, 2]);
        expect(JSON.parse(result.frame)).toEqual(JSON.parse(frame));
        expect(result.hasEvents).toBe(true);
      }
    });
  }

  it("gives the line each event starts on", () => {
    const text = `{"traceEvents":[\n${events.map((event) => JSON.stringify(event)).join(",\n")}\n]}`;
    expect(split(text, 4).events.map((entry) => entry.line)).toEqual([2, 3, 4]);
  });

  it("keeps all of a JSON text without an events array as the frame", () => {
    const results = { schema: "kb.results/1", launches: [{ name: "x" }], note: "[{" };
    for (const size of [1, 3, 1000]) {
      const result = split(JSON.stringify(results), size);
      expect(result.events).toEqual([]);
      expect(result.hasEvents).toBe(false);
      expect(JSON.parse(result.frame)).toEqual(results);
    }
  });

  it("reads empty events arrays", () => {
    expect(split('{"traceEvents":[ ]}', 1)).toMatchObject({ events: [], frame: '{"traceEvents":[]}' });
    expect(split("[]", 1)).toMatchObject({ events: [], frame: "[]" });
  });

  it("refuses what does not begin as an object or an array at once, at its line", () => {
    expect(refusal("\n\naaaa")).toMatchObject({ kind: "not-object-or-array", where: { line: 3 } });
  });

  it("refuses an event or a frame over its limit, without reading on", () => {
    const long = `[{"name":"${"a".repeat(2000)}"}]`;
    expect(refusal(long)).toMatchObject({ kind: "event-size", where: { event: 0, line: 1 } });
    expect(refusal(long, 100_000)).toMatchObject({ kind: "event-size" });
    expect(refusal(`{"x":"${"a".repeat(5000)}"}`)).toMatchObject({ kind: "frame-size" });
  });

  it("refuses a stray comma, text after the end, brackets that do not balance, a cut-short array", () => {
    expect(refusal('[{"ph":"M"},,{"ph":"M"}]')).toMatchObject({ kind: "syntax", where: { event: 1 } });
    expect(refusal("[] x").message).toBe("more text after the end of the JSON value");
    expect(refusal('{"traceEvents":[{"ph":"M"}}').message).toBe("a } closes the events array, ] expected");
    expect(refusal("{}}").message).toBe("more text after the end of the JSON value");
    expect(refusal('{"traceEvents":[\n{"ph":"M"},\n').message).toMatch(
      /^the text ends inside the events array, after 1 event\(s\): cut short/,
    );
  });
});
