import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isKbError } from "@kb/errors";
import { afterAll, describe, expect, it } from "vitest";
import { MemorySink, OpLogger, type OpLogSink, type OpRecord, opRecordToJson } from "./index.js";
import { JsonlSink, readOpLog, streamOpLog } from "./node.js";
import { gemmParams, mathParams, memoryParams } from "./test-support.js";

const dir = mkdtempSync(join(tmpdir(), "kb-oplog-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A deterministic run of `count` ops on 16 components: each op lasts a pseudo-random time, so
 * they end out of start order and the logger must hold records back.
 */
function simulate(sink: OpLogSink, count: number): OpLogger {
  const logger = new OpLogger(sink);
  const open: { id: number; end: number }[] = [];
  let seed = 12345;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  for (let index = 0; index < count; index++) {
    const t = Math.floor(index / 3) * 2.5;
    for (let k = open.length - 1; k >= 0; k--) {
      const entry = open[k] as { id: number; end: number };
      if (entry.end <= t) {
        logger.end(entry.id, entry.end);
        open.splice(k, 1);
      }
    }
    const component = `sip0.cube0.pe${index % 16}`;
    let id: number;
    if (index % 3 === 0) {
      id = logger.start(t, `${component}.pe_dma`, "memory", "dma_read", memoryParams(index * 64, 4096));
    } else if (index % 3 === 1) {
      id = logger.start(t, `${component}.pe_gemm`, "gemm", "gemm_f16", gemmParams(index * 128), [index - 1]);
    } else {
      id = logger.start(t, `${component}.pe_math`, "math", "sum", { ...mathParams(), scalars: [index] });
    }
    open.push({ id, end: t + Math.floor(random() * 40) / 4 });
  }
  for (const entry of open) logger.end(entry.id, entry.end);
  return logger;
}

describe("JsonlSink", () => {
  it("round-trips 10 000 records through a file, which appears at its path only on close", async () => {
    const path = join(dir, "ops.jsonl");
    const sink = new JsonlSink(path);
    const memory = new MemorySink();
    const logger = simulate(
      {
        write(record) {
          memory.write(record);
          sink.write(record);
        },
        close: () => sink.close(),
      },
      10_000,
    );
    expect(memory.records).toHaveLength(10_000);
    expect(sink.recordCount).toBe(10_000);
    expect(existsSync(path)).toBe(false);
    expect(existsSync(sink.tempPath)).toBe(true);
    expect(sink.tempPath).toBe(`${path}.tmp-${process.pid}`);
    // Bounded memory: full 1 MiB chunks are already in the temporary file, the rest is buffered.
    const written = statSync(sink.tempPath).size;
    expect(written).toBeGreaterThanOrEqual(1 << 20);
    await logger.close();
    expect(existsSync(path)).toBe(true);
    expect(existsSync(sink.tempPath)).toBe(false);
    expect(readFileSync(path).length - written).toBeLessThan(1 << 20);
    expect(readOpLog(path)).toEqual(memory.records);
    const streamed: OpRecord[] = [];
    for await (const record of streamOpLog(path)) streamed.push(record);
    expect(streamed).toEqual(memory.records);
  });

  it("writes byte-identical files for identical runs", () => {
    const paths = [join(dir, "a.jsonl"), join(dir, "b.jsonl")];
    for (const path of paths) {
      const logger = simulate(new JsonlSink(path, { chunkBytes: 4096 }), 2000);
      logger.close();
    }
    const [a, b] = paths.map((path) => readFileSync(path));
    expect(a?.length).toBeGreaterThan(0);
    expect(a?.equals(b as Buffer)).toBe(true);
  });

  it("writes one line per record in the fixed key order", () => {
    const path = join(dir, "lines.jsonl");
    const memory = new MemorySink();
    const sink = new JsonlSink(path);
    simulate(
      {
        write(record) {
          memory.write(record);
          sink.write(record);
        },
      },
      30,
    );
    sink.close();
    const text = readFileSync(path, "utf8");
    expect(text).toBe(memory.records.map((record) => `${opRecordToJson(record)}\n`).join(""));
    expect(text.split("\n")[0]).toMatch(
      /^\{"id":0,"t_start":0,"t_end":[\d.]+,"component_id":"sip0\.cube0\.pe0\.pe_dma"/,
    );
  });

  it("abort() removes the temporary file and leaves no file at the target", () => {
    const path = join(dir, "aborted.jsonl");
    const sink = new JsonlSink(path, { chunkBytes: 1024 });
    const logger = simulate(sink, 500);
    expect(existsSync(sink.tempPath)).toBe(true);
    logger.abort();
    expect(existsSync(sink.tempPath)).toBe(false);
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dir).filter((name) => name.startsWith("aborted"))).toEqual([]);
  });

  it("abort() leaves an earlier file at the target untouched", () => {
    const path = join(dir, "kept.jsonl");
    writeFileSync(path, "old\n");
    const sink = new JsonlSink(path);
    simulate(sink, 10);
    sink.abort();
    expect(readFileSync(path, "utf8")).toBe("old\n");
  });

  it("rejects writes after close or abort, and close after abort", () => {
    const closed = new JsonlSink(join(dir, "closed.jsonl"));
    closed.close();
    closed.close();
    const record = { id: 0 } as OpRecord;
    expect(() => closed.write(record)).toThrow(/OPLOG_MISUSE.*after the JsonlSink was closed/);
    const aborted = new JsonlSink(join(dir, "aborted2.jsonl"));
    aborted.abort();
    expect(() => aborted.write(record)).toThrow(/OPLOG_MISUSE/);
    expect(() => aborted.close()).toThrow(/OPLOG_MISUSE/);
  });

  it("reports a directory that does not exist", () => {
    expect(() => new JsonlSink(join(dir, "missing", "ops.jsonl"))).toThrow(/OPLOG_MISUSE.*cannot create/);
  });
});

describe("readOpLog and streamOpLog", () => {
  const badPath = join(dir, "bad.jsonl");
  const good = {
    id: 0,
    t_start: 0,
    t_end: 1,
    component_id: "c",
    op_kind: "memory",
    op_name: "dma_read",
    params: memoryParams(),
    dependency_ids: [],
  } as OpRecord;

  it("name the file and line of a bad record", async () => {
    writeFileSync(
      badPath,
      `${opRecordToJson(good)}\n\n${opRecordToJson({ ...good, id: 1, dependency_ids: [3] })}\n`,
    );
    expect(() => readOpLog(badPath)).toThrow(`${badPath}:3: dependency_ids[0]`);
    const seen: number[] = [];
    await expect(async () => {
      for await (const record of streamOpLog(badPath)) seen.push(record.id);
    }).rejects.toThrow(`${badPath}:3: dependency_ids[0]`);
    expect(seen).toEqual([0]);
  });

  it("report a file that cannot be read", async () => {
    const missing = join(dir, "nope.jsonl");
    try {
      readOpLog(missing);
      expect.unreachable();
    } catch (error) {
      expect(isKbError(error, "OPLOG_MISUSE")).toBe(true);
      expect((error as Error).message).toContain(`cannot read the op log file ${missing}`);
    }
    await expect(async () => {
      for await (const _ of streamOpLog(missing)) {
        // nothing
      }
    }).rejects.toThrow(/OPLOG_MISUSE.*cannot read/);
  });

  it("stream stops early without leaking when the consumer breaks", async () => {
    const path = join(dir, "early.jsonl");
    simulate(new JsonlSink(path), 100).close();
    let count = 0;
    for await (const _ of streamOpLog(path)) {
      count++;
      if (count === 5) break;
    }
    expect(count).toBe(5);
  });
});

describe("non-finite numbers through a file", () => {
  it("JsonlSink writes them and readOpLog / streamOpLog read back the same numbers", async () => {
    const path = join(dir, "non-finite.jsonl");
    const memory = new MemorySink();
    const sink = new JsonlSink(path);
    const logger = new OpLogger({
      write(record) {
        memory.write(record);
        sink.write(record);
      },
      close: () => sink.close(),
    });
    const running = [Number.NEGATIVE_INFINITY];
    const fill = logger.start(0, "pe0.pe_math", "math", "fill", {
      ...mathParams(),
      op: "fill",
      scalars: running,
    });
    logger.end(fill, 2);
    const clamp = logger.start(2, "pe0.pe_math", "math", "clamp", {
      ...mathParams(),
      op: "clamp",
      scalars: [Number.NaN, -0, Number.POSITIVE_INFINITY],
    });
    logger.end(clamp, 3);
    const gemm = logger.start(3, "pe0.pe_gemm", "gemm", "gemm_f16", {
      ...gemmParams(),
      epilogue: [{ op: "mul", scalar: -0 }],
    });
    logger.end(gemm, 9);
    await logger.close();
    const text = readFileSync(path, "utf8");
    expect(text).toContain('"scalars":["-Infinity"]');
    expect(text).toContain('"scalars":["NaN","-0","Infinity"]');
    expect(text).toContain('"epilogue":[{"op":"mul","scalar":"-0"}]');
    const fromFile = readOpLog(path);
    const streamed: OpRecord[] = [];
    for await (const record of streamOpLog(path)) streamed.push(record);
    for (const records of [fromFile, streamed]) {
      // Same numbers (toEqual tells -0 from 0 and NaN equals NaN) and the same bytes when written again.
      expect(records).toEqual(memory.records);
      expect(records.map(opRecordToJson)).toEqual(memory.records.map(opRecordToJson));
      const scalars = (records[1] as OpRecord & { op_kind: "math" }).params.scalars ?? [];
      expect(
        Number.isNaN(scalars[0]) && Object.is(scalars[1], -0) && scalars[2] === Number.POSITIVE_INFINITY,
      ).toBe(true);
    }
  });
});

describe("entry points", () => {
  it("keeps node: imports out of the main entry (it runs in a browser)", () => {
    const src = new URL(".", import.meta.url);
    const files = readdirSync(src).filter(
      (name) => name.endsWith(".ts") && !name.endsWith(".test.ts") && name !== "node.ts",
    );
    expect(files).toContain("index.ts");
    for (const name of files) {
      const text = readFileSync(new URL(name, src), "utf8");
      expect(text, name).not.toMatch(/from "node:|from "\.\/node\.js"|process\.|Buffer\./);
    }
  });
});
