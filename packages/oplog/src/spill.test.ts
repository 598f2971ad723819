import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isKbError, type KbError } from "@kb/errors";
import { afterAll, describe, expect, it } from "vitest";
import { MemorySink, OpLogger, type OpLogSink, type OpRecord } from "./index.js";
import { SpillFile, SpillSink } from "./node.js";
import { gemmParams, mathParams, memoryParams } from "./test-support.js";

const dir = mkdtempSync(join(tmpdir(), "kb-spill-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh empty directory for one test's temporary files. */
function scratchDir(name: string): string {
  return mkdtempSync(join(dir, `${name}-`));
}

function thrown(run: () => unknown): KbError {
  try {
    run();
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError, nothing was thrown");
}

/** `count` records of all three kinds, ending out of start order, with NaN, ±Infinity and -0 among the floats. */
function log(sinks: OpLogSink[], count: number): void {
  const logger = new OpLogger({
    write: (record) => {
      for (const sink of sinks) sink.write(record);
    },
    close: () => {
      for (const sink of sinks) sink.close?.();
    },
  });
  const special = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 1.5];
  const open: number[] = [];
  for (let index = 0; index < count; index++) {
    const t = index * 2;
    const component = `sip0.cube0.pe${index % 8}`;
    const kind = index % 3;
    const id =
      kind === 0
        ? logger.start(t, `${component}.pe_dma`, "memory", "dma_read", memoryParams(index * 64, 4096))
        : kind === 1
          ? logger.start(
              t,
              `${component}.pe_gemm`,
              "gemm",
              "gemm_f16",
              {
                ...gemmParams(index * 128),
                epilogue: [{ op: "scale", scalar: special[index % 5] as number }],
              },
              [index - 1],
            )
          : logger.start(t, `${component}.pe_math`, "math", "add", {
              ...mathParams(),
              scalars: [special[index % 5] as number, index],
            });
    open.push(id);
    // End the previous op after this one started: records wait for their predecessors.
    if (open.length === 2) logger.end(open.shift() as number, t + 1);
  }
  for (const id of open) logger.end(id, count * 2);
  logger.close();
}

/** Records compared with Object.is on every number (NaN and -0 included). */
function expectSameRecords(actual: readonly OpRecord[], expected: readonly OpRecord[]): void {
  expect(actual.length).toBe(expected.length);
  const text = (records: readonly OpRecord[]) =>
    JSON.stringify(records, (_key, value) =>
      typeof value === "number" && (Number.isNaN(value) || !Number.isFinite(value) || Object.is(value, -0))
        ? `number:${Object.is(value, -0) ? "-0" : String(value)}`
        : value,
    );
  expect(text(actual)).toBe(text(expected));
}

describe("SpillFile", () => {
  it("gives back what was appended, and is never left in its directory", () => {
    const directory = scratchDir("file");
    const file = new SpillFile({ directory, what: "test bytes" });
    const first = file.append(new Uint8Array([1, 2, 3]));
    const second = file.append(new Uint8Array(100_000).fill(7));
    expect([first, second, file.size]).toEqual([0, 3, 100_003]);
    expect(file.read(1, 4)).toEqual(new Uint8Array([2, 3, 7, 7]));
    if (process.platform !== "win32") expect(readdirSync(directory)).toEqual([]); // unlinked at once
    file.close();
    file.close();
    expect(file.closed).toBe(true);
    expect(readdirSync(directory)).toEqual([]);
    const error = thrown(() => file.read(0, 1));
    expect(error.code).toBe("OPLOG_MISUSE");
    expect(error.message).toContain("temporary file for test bytes: it was closed");
    expect(thrown(() => new SpillFile().read(0, 1)).message).toContain("holds 0 bytes");
  });

  it("names the directory when the file cannot be created", () => {
    const error = thrown(
      () => new SpillFile({ directory: join(dir, "missing", "deeper"), what: "the op log" }),
    );
    expect(error.code).toBe("OPLOG_MISUSE");
    expect(error.message).toContain("cannot create a temporary file for the op log in");
    expect(error.message).toContain("TMPDIR");
  });
});

describe("SpillSink", () => {
  it("replays the same records in the same order as a MemorySink, spilled or not", () => {
    const memory = new MemorySink();
    const kept = new SpillSink({ memoryRecords: 10_000 });
    const spilled = new SpillSink({ memoryRecords: 100, chunkRecords: 64, directory: scratchDir("same") });
    log([memory, kept, spilled], 5000);
    expect(kept.spilled).toBe(false);
    expect(spilled.spilled).toBe(true);
    expect(spilled.recordCount).toBe(5000);
    expect(spilled.spilledBytes).toBeGreaterThan(5000 * 100);
    expectSameRecords([...kept.records()], memory.records);
    expectSameRecords([...spilled.records()], memory.records);
    // A second pass reads the file again.
    expect([...spilled.records()].map((record) => record.id)).toEqual(
      memory.records.map((record) => record.id),
    );
    spilled.dispose();
    kept.dispose();
  });

  it("leaves no temporary file after a run, nor after a run that failed", () => {
    const directory = scratchDir("cleanup");
    const done = new SpillSink({ memoryRecords: 0, directory });
    log([done], 300);
    expect([...done.records()]).toHaveLength(300);
    done.dispose();
    expect(readdirSync(directory)).toEqual([]);
    expect(thrown(() => [...done.records()]).message).toContain("after dispose()");

    const failed = new SpillSink({ memoryRecords: 0, directory });
    const logger = new OpLogger(failed);
    logger.start(0, "sip0.cube0.pe0.pe_dma", "memory", "dma_read", memoryParams());
    const id = logger.start(1, "sip0.cube0.pe0.pe_dma", "memory", "dma_read", memoryParams());
    logger.end(0, 2);
    expect(failed.spilled).toBe(true);
    logger.abort(); // the run stopped with op `id` still open
    expect(id).toBe(1);
    expect(readdirSync(directory)).toEqual([]);
    expect(existsSync(directory)).toBe(true);
  });

  it("refuses records() before close and writes after it", () => {
    const sink = new SpillSink({ memoryRecords: 0, directory: scratchDir("misuse") });
    const record = {
      id: 0,
      t_start: 0,
      t_end: 1,
      component_id: "sip0.cube0.pe0.pe_dma",
      op_kind: "memory",
      op_name: "dma_read",
      params: memoryParams(),
      dependency_ids: [],
    } as OpRecord;
    sink.write(record);
    expect(thrown(() => [...sink.records()]).message).toContain("before close()");
    sink.close();
    expect(thrown(() => sink.write({ ...record, id: 1 })).code).toBe("OPLOG_MISUSE");
    expectSameRecords([...sink.records()], [record]);
    sink.dispose();
    expect(thrown(() => new SpillSink({ memoryRecords: -1 })).message).toContain("memoryRecords");
  });
});
