import { isKbError, type KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { MemorySink, OpLogger, type OpLogSink, type OpRecord } from "./index.js";
import { gemmParams, mathParams, memoryParams } from "./test-support.js";

function thrown(action: () => unknown): KbError {
  try {
    action();
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError, nothing was thrown");
}

function setup(): { logger: OpLogger; sink: MemorySink } {
  const sink = new MemorySink();
  return { logger: new OpLogger(sink), sink };
}

describe("OpLogger ordering", () => {
  it("assigns ids in start order and writes records in id order when ended out of order", () => {
    const { logger, sink } = setup();
    const a = logger.start(0, "pe0.pe_dma", "memory", "dma_read", memoryParams());
    const b = logger.start(5, "pe0.pe_gemm", "gemm", "gemm_f16", gemmParams());
    const c = logger.start(7, "pe0.pe_math", "math", "sum", mathParams(), [b]);
    expect([a, b, c]).toEqual([0, 1, 2]);
    logger.end(c, 9);
    logger.end(b, 20);
    expect(sink.records).toEqual([]);
    logger.end(a, 30);
    expect(sink.records.map((record) => record.id)).toEqual([0, 1, 2]);
    expect(sink.records[0]).toEqual({
      id: 0,
      t_start: 0,
      t_end: 30,
      component_id: "pe0.pe_dma",
      op_kind: "memory",
      op_name: "dma_read",
      params: memoryParams(),
      dependency_ids: [],
    });
    expect(sink.records[2]?.dependency_ids).toEqual([1]);
    expect(sink.records.map((record) => record.t_end)).toEqual([30, 20, 9]);
  });

  it("keeps insertion order for records with the same t_start", () => {
    const { logger, sink } = setup();
    const names = ["first", "second", "third", "fourth"];
    const ids = names.map((name) => logger.start(10, `pe.${name}`, "math", name, mathParams()));
    for (const id of [...ids].reverse()) logger.end(id, 12);
    expect(sink.records.map((record) => record.op_name)).toEqual(names);
    expect(sink.records.map((record) => record.id)).toEqual([0, 1, 2, 3]);
  });

  it("lets a long-running op hold back later records, then releases them and shrinks the window", () => {
    const { logger, sink } = setup();
    const long = logger.start(0, "pe0.pe_gemm", "gemm", "gemm_f16", gemmParams());
    for (let index = 1; index <= 1000; index++) {
      const id = logger.start(index, "pe0.pe_dma", "memory", "dma_read", memoryParams(index));
      logger.end(id, index + 1);
    }
    expect(sink.records).toHaveLength(0);
    expect(logger.pendingCount).toBe(1001);
    expect(logger.openCount).toBe(1);
    logger.end(long, 5000);
    expect(logger.pendingCount).toBe(0);
    expect(logger.emittedCount).toBe(1001);
    expect(sink.records.map((record) => record.id)).toEqual(Array.from({ length: 1001 }, (_, i) => i));
    // The window stays small once ops end promptly.
    for (let index = 0; index < 100; index++) {
      const id = logger.start(6000 + index, "pe0.pe_dma", "memory", "dma_read", memoryParams());
      expect(logger.pendingCount).toBe(1);
      logger.end(id, 6000 + index);
      expect(logger.pendingCount).toBe(0);
    }
    expect(logger.recordCount).toBe(1101);
  });

  it("writes each record as soon as it and all earlier ones have ended", () => {
    const { logger, sink } = setup();
    const ids = [0, 1, 2, 3].map((t) => logger.start(t, "c", "math", "exp", mathParams()));
    logger.end(ids[1] as number, 5);
    logger.end(ids[0] as number, 5);
    expect(sink.records.map((record) => record.id)).toEqual([0, 1]);
    logger.end(ids[3] as number, 5);
    expect(sink.records.map((record) => record.id)).toEqual([0, 1]);
    logger.end(ids[2] as number, 5);
    expect(sink.records.map((record) => record.id)).toEqual([0, 1, 2, 3]);
  });

  it("keeps records across ring growth with a wrapped head", () => {
    const { logger, sink } = setup();
    // Move the head to the middle of the ring, then hold 300 records open across two growths.
    for (let index = 0; index < 40; index++)
      logger.end(logger.start(index, "c", "math", "exp", mathParams()), index);
    const open = Array.from({ length: 300 }, (_, index) =>
      logger.start(100 + index, "c", "math", "exp", mathParams()),
    );
    for (const id of [...open].reverse()) logger.end(id, 1000);
    expect(sink.records.map((record) => record.id)).toEqual(Array.from({ length: 340 }, (_, i) => i));
    expect(sink.records.map((record) => record.t_start)).toEqual([
      ...Array.from({ length: 40 }, (_, i) => i),
      ...Array.from({ length: 300 }, (_, i) => 100 + i),
    ]);
  });

  it("closes the sink on close() and returns what the sink's close returns", async () => {
    const calls: string[] = [];
    const sink: OpLogSink = {
      write: (record: OpRecord) => calls.push(`write ${record.id}`),
      close: async () => {
        calls.push("close");
      },
    };
    const logger = new OpLogger(sink);
    logger.end(logger.start(0, "c", "math", "exp", mathParams()), 1);
    await logger.close();
    expect(calls).toEqual(["write 0", "close"]);
    expect(logger.closed).toBe(true);
    await logger.close(); // a second close does nothing
    expect(calls).toEqual(["write 0", "close"]);
  });

  it("abort() drops pending records and calls the sink's abort", () => {
    const calls: string[] = [];
    const logger = new OpLogger({ write: () => calls.push("write"), abort: () => calls.push("abort") });
    logger.start(0, "c", "math", "exp", mathParams());
    logger.abort();
    expect(calls).toEqual(["abort"]);
    expect(logger.pendingCount).toBe(0);
    expect(thrown(() => logger.close()).code).toBe("OPLOG_MISUSE");
  });
});

describe("OpLogger misuse", () => {
  it("rejects a start earlier than the previous start, naming both times", () => {
    const { logger } = setup();
    logger.start(10, "c", "math", "exp", mathParams());
    const error = thrown(() => logger.start(9, "pe3.pe_math", "math", "exp", mathParams()));
    expect(error.code).toBe("OPLOG_MISUSE");
    expect(error.message).toContain("t=9 ns");
    expect(error.message).toContain("previous start was at t=10 ns");
    expect(error.context.nodeId).toBe("pe3.pe_math");
    expect(logger.recordCount).toBe(1);
  });

  it("rejects negative, NaN and infinite start times", () => {
    const { logger } = setup();
    for (const t of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(thrown(() => logger.start(t, "c", "math", "exp", mathParams())).code).toBe("OPLOG_MISUSE");
    }
    expect(logger.recordCount).toBe(0);
  });

  it("rejects ending an unknown op", () => {
    const { logger } = setup();
    logger.start(0, "c", "math", "exp", mathParams());
    for (const id of [1, -1, 0.5, 99]) {
      const error = thrown(() => logger.end(id, 1));
      expect(error.code).toBe("OPLOG_MISUSE");
      expect(error.message).toContain("unknown op");
    }
  });

  it("rejects ending an op twice, whether or not it was already written", () => {
    const { logger } = setup();
    const a = logger.start(0, "c", "math", "exp", mathParams());
    const b = logger.start(0, "c", "math", "exp", mathParams());
    logger.end(b, 1); // held back behind a
    expect(thrown(() => logger.end(b, 2)).message).toContain("already ended");
    logger.end(a, 1); // both written now
    const error = thrown(() => logger.end(a, 3));
    expect(error.code).toBe("OPLOG_MISUSE");
    expect(error.message).toContain("already ended");
  });

  it("rejects an end before the op's t_start", () => {
    const { logger } = setup();
    const id = logger.start(50, "pe0.pe_gemm", "gemm", "gemm_f16", gemmParams());
    const error = thrown(() => logger.end(id, 49));
    expect(error.code).toBe("OPLOG_MISUSE");
    expect(error.message).toContain("before its t_start 50 ns");
    expect(logger.openCount).toBe(1);
  });

  it("rejects dependencies on ops not started yet", () => {
    const { logger } = setup();
    logger.start(0, "c", "math", "exp", mathParams());
    const error = thrown(() => logger.start(1, "c", "math", "exp", mathParams(), [0, 1]));
    expect(error.code).toBe("OPLOG_MISUSE");
    expect(error.message).toContain("dependencyIds[1] is 1");
  });

  it("rejects start, end and sink writes after close", () => {
    const { logger, sink } = setup();
    const id = logger.start(0, "c", "math", "exp", mathParams());
    logger.end(id, 1);
    logger.close();
    expect(thrown(() => logger.start(2, "c", "math", "exp", mathParams())).message).toContain(
      "after the op log was closed",
    );
    expect(thrown(() => logger.end(id, 2)).code).toBe("OPLOG_MISUSE");
    expect(thrown(() => sink.write(sink.records[0] as OpRecord)).code).toBe("OPLOG_MISUSE");
  });

  it("close() with open ops names up to five of them and says what to do", () => {
    const { logger, sink } = setup();
    const ids: number[] = [];
    for (let index = 0; index < 8; index++) {
      ids.push(
        logger.start(index * 10, `sip0.cube0.pe${index}.pe_dma`, "memory", `dma_read`, memoryParams()),
      );
    }
    logger.end(ids[0] as number, 100);
    logger.end(ids[2] as number, 100);
    const error = thrown(() => logger.close());
    expect(error.code).toBe("OPLOG_MISUSE");
    expect(error.message).toContain("6 op(s) never ended");
    expect(error.message).toContain("#1 dma_read on sip0.cube0.pe1.pe_dma (t_start 10 ns)");
    expect(error.message).toContain("#6 dma_read on sip0.cube0.pe6.pe_dma (t_start 60 ns)");
    expect(error.message).not.toContain("#7 ");
    expect(error.message).not.toContain("#2 ");
    expect(error.message).toContain("and 1 more");
    expect(error.message).toContain("end(id, tNs)");
    // The logger stays usable: end the rest, then close.
    for (const id of ids.slice(1)) if (id !== 2) logger.end(id, 200);
    logger.close();
    expect(sink.records).toHaveLength(8);
  });
});

describe("OpLogger validate option", () => {
  it("rejects bad params at start() with the field path", () => {
    const logger = new OpLogger(new MemorySink(), { validate: true });
    const params = { ...memoryParams(), nbytes: "x" } as never;
    const error = thrown(() => logger.start(0, "pe0.pe_dma", "memory", "dma_read", params));
    expect(error.code).toBe("OPLOG_INVALID");
    expect(error.message).toContain('params.nbytes: expected a number, got "x"');
    expect(logger.recordCount).toBe(0);
    expect(logger.start(0, "pe0.pe_dma", "memory", "dma_read", memoryParams())).toBe(0);
  });
});

describe("OpLogger validate option with non-finite scalars", () => {
  it("accepts NaN, -Infinity and -0 in math scalars and epilogue scalars", () => {
    const logger = new OpLogger(new MemorySink(), { validate: true });
    const scalars = [Number.NEGATIVE_INFINITY, Number.NaN, -0];
    expect(logger.start(0, "pe0.pe_math", "math", "fill", { ...mathParams(), op: "fill", scalars })).toBe(0);
    const epilogue = [{ op: "maximum", scalar: Number.NEGATIVE_INFINITY }];
    expect(logger.start(0, "pe0.pe_gemm", "gemm", "gemm_f16", { ...gemmParams(), epilogue })).toBe(1);
  });
});
