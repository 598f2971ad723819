import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, deflateRawSync, constants as zlib } from "node:zlib";
import { loadSweepSource, loadWebData, startWebServer } from "@kb/web-ui/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topologyLookup } from "./bench-files.js";
import { kb, type Run } from "./test-support.js";

// kb web on hostile and unlucky inputs: a gzip that inflates to gigabytes on one line, a large
// trace in Chrome's array form, a FIFO, a device, a folder given as a file; each is read in
// bounded memory or refused at once with exit 1 and a message naming the file, never a stack.

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const defaultYaml = repo("topologies/default.yaml");
const scratch = mkdtempSync(join(tmpdir(), "kb-cli-web-faults-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const MiB = 1024 ** 2;

/**
 * A gzip file of `head`, then `body` `times` times, then `tail`, made without compressing the
 * whole: each part is deflated on its own with a full flush, so the repeats are copies of one
 * compressed block (a 600 MiB text takes about 1 MB and a second to make).
 */
function gzipOfRepeats(name: string, head: string, body: Buffer, times: number, tail: string): string {
  const flush = { finishFlush: zlib.Z_FULL_FLUSH };
  const bodyBlock = deflateRawSync(body, flush);
  const parts = [Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), deflateRawSync(Buffer.from(head), flush)];
  let crc = crc32(Buffer.from(head));
  for (let i = 0; i < times; i++) {
    parts.push(bodyBlock);
    crc = crc32(body, crc);
  }
  parts.push(deflateRawSync(Buffer.from(tail)));
  crc = crc32(Buffer.from(tail), crc);
  const size = (Buffer.byteLength(head) + body.length * times + Buffer.byteLength(tail)) % 2 ** 32;
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size, 4);
  parts.push(trailer);
  const path = join(scratch, name);
  writeFileSync(path, Buffer.concat(parts));
  return path;
}

/** kb web on `files`, expected to stop before serving. */
const web = (...args: string[]): Promise<Run> => kb("web", ...args, "--topology", defaultYaml, "--port", "0");

/** A user error as kb prints it: exit 1, one message line, no stack, nothing served. */
function expectRefusal(run: Run, message: RegExp): void {
  expect(run.stderr).toMatch(message);
  expect(run.code).toBe(1);
  expect(run.stdout).toBe("");
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stderr).not.toContain("internal error");
}

describe("fault: kb web on a gzip that inflates to one very long line", () => {
  // 640 MiB on one line: longer than the longest string JavaScript can hold (~512 MiB).
  const lineOfA = Buffer.alloc(MiB, "a");

  it("an event longer than 16 MiB is refused at its line, after reading 16 MiB", async () => {
    const bomb = gzipOfRepeats("event-bomb.json.gz", '{"traceEvents":[{"name":"', lineOfA, 640, '"}]}');
    expectRefusal(
      await web(bomb),
      /^\[CLI_USAGE\] .*event-bomb\.json\.gz:1: traceEvents\[0\] is longer than 16 MiB, the most kb web reads of one trace event/,
    );
  }, 60_000);

  it("text that is not JSON is refused at its first byte", async () => {
    const bomb = gzipOfRepeats("text-bomb.gz", "", lineOfA, 640, "\n");
    expectRefusal(
      await web(bomb),
      /^\[CLI_USAGE\] .*text-bomb\.gz:1: not JSON, or JSON that is neither an object nor an array: neither a results file nor a trace/,
    );
  }, 60_000);

  it("a JSON object of one long string is refused past 256 MiB", async () => {
    const bomb = gzipOfRepeats("object-bomb.json.gz", '{"schema":"', lineOfA, 640, '"}');
    expectRefusal(
      await web(bomb),
      /object-bomb\.json\.gz:1: more than 256 MiB of JSON that is not a trace's events, the most kb web parses as one text/,
    );
  }, 60_000);

  it("a gzip that inflates past --max-input-size is refused, saying how to read it", async () => {
    const blanks = gzipOfRepeats("blanks.json.gz", '{"traceEvents":[', Buffer.alloc(MiB, " "), 100, "]}");
    expectRefusal(
      await web(blanks, "--max-input-size", "64MiB"),
      /blanks\.json\.gz: more than 64 MiB once decompressed, the most kb web reads of one file: a gzip bomb, or a larger trace than the default\? To read it, pass --max-input-size with a larger size\./,
    );
    // Raised, it is read: an empty trace.
    const { data } = await loadWebData([blanks], {
      topologies: topologyLookup,
      topology: defaultYaml,
      maxInputBytes: 128 * MiB,
    });
    expect(data.timelines[0]?.totalSlices).toBe(0);
  }, 60_000);

  it("a file larger than --max-input-size on disk is refused before it is read", async () => {
    const file = join(scratch, "results-1k.json");
    writeFileSync(file, `{"schema":"kb.results/1","pad":"${"x".repeat(2000)}"}`);
    expectRefusal(
      await web(file, "--max-input-size", "1KiB"),
      /results-1k\.json: a file of 1\.986 KiB, more than kb web reads of one file \(1 KiB\)\. To read it, pass --max-input-size with a larger size, such as --max-input-size 2KiB\./,
    );
  });

  it("--max-input-size takes sizes with units, and refuses what is not one", async () => {
    const run = await kb("web", "--max-input-size", "lots");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('expected a size such as 512MiB, 16GiB or 1000000 (bytes); got "lots"');
  });
});

describe("fault: kb web on a large trace in Chrome's array form", () => {
  it("reads 300,000 events on one line of 540 MiB (gzip), in bounded memory", async () => {
    // 1,000 events of ~1.8 KB (a padding arg) on distinct ts, repeated 300 times.
    const pad = "p".repeat(1800);
    const events = Array.from(
      { length: 1000 },
      (_, i) => `{"name":"w","ph":"X","ts":${i},"dur":0.5,"pid":1,"tid":1,"args":{"pad":"${pad}"}},`,
    ).join("");
    const meta = '{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"sip0.io_cpu"}}';
    const trace = gzipOfRepeats("array.json.gz", "[", Buffer.from(events), 300, `${meta}]`);
    const { data, slices } = await loadWebData([trace], {
      topologies: topologyLookup,
      topology: defaultYaml,
    });
    expect(data.timelines[0]?.totalSlices).toBe(300_000);
    expect(data.timelines[0]?.tracks).toEqual([{ name: "sip0.io_cpu", group: "pid 1" }]);
    expect(slices[0]?.size).toBe(300_000);
  }, 120_000);
});

describe("fault: kb web on a trace of very many tracks", () => {
  /** A trace in kb's line form with one slice on each of `tracks` tracks (pid 1, tid i). */
  function manyTracks(name: string, tracks: number): string {
    const lines = Array.from(
      { length: tracks },
      (_, tid) => `{"name":"w","ph":"X","ts":0,"dur":1,"pid":1,"tid":${tid}}`,
    );
    const path = join(scratch, name);
    writeFileSync(path, `{"traceEvents":[\n${lines.join(",\n")}\n]}\n`);
    return path;
  }

  it("a trace of 100,000 tracks is refused at the track past 65,536, not built into bins for each", async () => {
    expectRefusal(
      await web(manyTracks("many-tracks-100k.json", 100_000)),
      /many-tracks-100k\.json:65538: a trace of more than 65,536 tracks \(distinct pid, tid pairs\), the most kb web draws/,
    );
  }, 60_000);

  it("a window of a trace of 20,000 tracks has at most 4 Mi cells, whatever width is asked for", async () => {
    const { slices } = await loadWebData([manyTracks("many-tracks.json", 20_000)], {
      topologies: topologyLookup,
      topology: defaultYaml,
    });
    const index = slices[0];
    expect(index?.tracks).toBe(20_000);
    const window = index?.window(0, 1000, 4096);
    expect(window?.width).toBe(Math.floor((4 * MiB) / 20_000));
    expect(Buffer.from(window?.busy ?? "", "base64")).toHaveLength(20_000 * (window?.width ?? 0));
  }, 60_000);
});

describe("fault: kb web on what is not a regular file", () => {
  it("a FIFO is refused at once, not waited on", async () => {
    const fifo = join(scratch, "trace.fifo");
    execFileSync("mkfifo", [fifo]);
    expectRefusal(
      await web(fifo),
      /trace\.fifo: a FIFO \(named pipe\): kb web reads only regular files \(results, traces, a sweep's results\.jsonl\)/,
    );
    // Also named as a sweep's table (read by its own reader).
    const table = join(scratch, "results.jsonl");
    symlinkSync(fifo, table);
    expectRefusal(await kb("web", table, "--port", "0"), /results\.jsonl: a FIFO \(named pipe\)/);
  });

  it("/dev/zero is refused at once, not read for ever", async () => {
    expectRefusal(await web("/dev/zero"), /\/dev\/zero: a character device: kb web reads only regular files/);
    const table = join(scratch, "zero.jsonl");
    symlinkSync("/dev/zero", table);
    expectRefusal(await kb("web", table, "--port", "0"), /zero\.jsonl: a character device/);
  });

  it("a folder is refused", async () => {
    const folder = join(scratch, "folder.json");
    mkdirSync(folder);
    expectRefusal(await web(folder), /folder\.json: a folder: kb web reads only regular files/);
  });
});

describe("fault: kb web on a hostile sweep table and results cache", () => {
  const key = (hex: string) => hex.repeat(64 / hex.length);
  const row = (fields: Record<string, unknown>) =>
    JSON.stringify({
      point: 0,
      key: key("a"),
      status: "ok",
      reason: null,
      digest: null,
      values: { n: 1 },
      metrics: { time: 1 },
      ...fields,
    });
  let results = "";
  beforeAll(async () => {
    const copyBench = fileURLToPath(new URL("__fixtures__/copy-bench.ts", import.meta.url));
    const run = await kb("run", copyBench, "--topology", defaultYaml, "--json");
    expect(run.code).toBe(0);
    results = run.stdout;
  });

  /** A sweep folder: `out/results.jsonl` of `rows`, and `cache/`. */
  function sweepDir(name: string, rows: readonly string[]): { table: string; cache: string } {
    const dir = join(scratch, name);
    mkdirSync(join(dir, "out"), { recursive: true });
    mkdirSync(join(dir, "cache"));
    const table = join(dir, "out", "results.jsonl");
    writeFileSync(table, `${rows.join("\n")}\n`);
    return { table, cache: join(dir, "cache") };
  }

  it("a row longer than 16 MiB is refused at its line, not read whole", async () => {
    const { table } = sweepDir("long-row", [
      row({}),
      row({ point: 1, key: key("b"), reason: "x".repeat(17 * MiB) }),
    ]);
    expectRefusal(
      await kb("web", table, "--port", "0"),
      /results\.jsonl:2: a line longer than 16 MiB, the most kb web reads of one line/,
    );
  }, 60_000);

  it("--cache that is a file, not a folder, is refused", async () => {
    const { table } = sweepDir("cache-file", [row({})]);
    expectRefusal(
      await kb("web", table, "--cache", table, "--port", "0"),
      /--cache .*results\.jsonl: not a folder\. Pass the folder given to kb sweep --cache/,
    );
  });

  it("a cached run that is a FIFO answers 500 saying so, at once", async () => {
    const digest = key("c");
    const { table, cache } = sweepDir("cache-fifo", [row({ digest })]);
    execFileSync("mkfifo", [join(cache, `${digest}.json`)]);
    const server = await startWebServer({
      sweep: await loadSweepSource(table, { topologies: topologyLookup, cacheDir: cache }),
      pageDir: scratch,
      port: 0,
    });
    try {
      const response = await fetch(new URL(`/api/data?run=${digest}`, server.url));
      expect(response.status).toBe(500);
      expect(await response.text()).toMatch(/a FIFO \(named pipe\): kb web reads only regular files/);
    } finally {
      await server.close();
    }
  });

  it("a row's key or digest never names a path: no topology or cached file outside their folders", async () => {
    const digest = key("d");
    // The first 16 characters of the key, as a topology's name, would be out/evil/xxxxxxxx.yaml.
    const { table, cache } = sweepDir("paths", [
      row({ key: `../evil/xxxxxxxx${"e".repeat(48)}`, digest }),
      row({ point: 1, key: key("f"), digest: "../../../../outside" }),
    ]);
    mkdirSync(join(table, "..", "evil"));
    writeFileSync(join(table, "..", "evil", "xxxxxxxx.yaml"), "not: [a topology\n");
    writeFileSync(join(cache, `${digest}.json`), results);
    writeFileSync(join(cache, "..", "outside.json"), results);
    const sweep = await loadSweepSource(table, {
      topologies: topologyLookup,
      cacheDir: cache,
      cwd: repo("."),
    });
    expect(sweep.data.rows.map((entry) => entry.cached)).toEqual([true, false]);
    const run = await sweep.run(digest);
    expect(run?.topology.file).toBe(defaultYaml);
    expect(run?.warnings[0]).toMatch(/^point 0 has a key that does not start with 16 hex digits/);
  });
});

// Opened for writing, a FIFO still being waited on by a reader (the code before the fix) lets go.
afterAll(() => {
  for (const fifo of ["trace.fifo", `cache-fifo/cache/${"c".repeat(64)}.json`]) {
    try {
      closeSync(openSync(join(scratch, fifo), constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // no reader: nothing waits
    }
  }
});
