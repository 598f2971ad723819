import { isKbError, type KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import {
  gemmParamsSchema,
  OpLogJsonlParser,
  type OpRecord,
  opRecordSchema,
  opRecordToJson,
  parseOpLogJsonl,
  stripTimes,
} from "./index.js";
import { gemmParams, mathParams, memoryParams } from "./test-support.js";

function invalid(text: string, file = "ops.jsonl"): KbError {
  try {
    parseOpLogJsonl(text, file);
  } catch (error) {
    if (isKbError(error, "OPLOG_INVALID")) return error;
    throw error;
  }
  throw new Error("expected OPLOG_INVALID, the text parsed");
}

const records: OpRecord[] = [
  {
    id: 0,
    t_start: 0,
    t_end: 10.5,
    component_id: "sip0.cube0.pe0.pe_dma",
    op_kind: "memory",
    op_name: "dma_read",
    params: memoryParams(),
    dependency_ids: [],
  },
  {
    id: 1,
    t_start: 10.5,
    t_end: 40,
    component_id: "sip0.cube0.pe0.pe_gemm",
    op_kind: "gemm",
    op_name: "gemm_f16",
    params: { ...gemmParams(), accumulate: true, epilogue: [{ op: "relu" }, { op: "scale", factor: 0.5 }] },
    dependency_ids: [0],
  },
  {
    id: 2,
    t_start: 10.5,
    t_end: 12,
    component_id: "sip0.cube0.pe0.pe_math",
    op_kind: "math",
    op_name: "add",
    params: { ...mathParams(), op: "add", axis: null, scalars: [2] },
    dependency_ids: [0, 1],
  },
];
const lines = records.map(opRecordToJson);

/** The records as JSONL with line `index` (0-based) replaced by `line`. */
function withLine(index: number, line: string): string {
  const copy = [...lines];
  copy[index] = line;
  return `${copy.join("\n")}\n`;
}

/** Line `index` with its JSON object changed by `edit`. */
function edited(index: number, edit: (value: any) => void): string {
  const value = JSON.parse(lines[index] as string);
  edit(value);
  return withLine(index, JSON.stringify(value));
}

describe("opRecordToJson", () => {
  it("writes the keys in the fixed record order", () => {
    const shuffled = {
      dependency_ids: [],
      params: memoryParams(),
      op_name: "dma_read",
      op_kind: "memory",
      component_id: "c",
      t_end: 2,
      t_start: 1,
      id: 0,
    } as OpRecord;
    expect(Object.keys(JSON.parse(opRecordToJson(shuffled)))).toEqual([
      "id",
      "t_start",
      "t_end",
      "component_id",
      "op_kind",
      "op_name",
      "params",
      "dependency_ids",
    ]);
  });
});

describe("parseOpLogJsonl", () => {
  it("reads back what opRecordToJson wrote, skipping blank lines and CRLF endings", () => {
    expect(parseOpLogJsonl(`${lines.join("\n")}\n`)).toEqual(records);
    expect(parseOpLogJsonl(`\n${lines[0]}\r\n\n  \n${lines[1]}\r\n${lines[2]}`)).toEqual(records);
    expect(parseOpLogJsonl("")).toEqual([]);
  });

  it("rejects a line that is not JSON, naming file:line", () => {
    const error = invalid(withLine(1, '{"id": 1, '));
    expect(error.message).toMatch(/^\[OPLOG_INVALID\] ops\.jsonl:2: not valid JSON/);
    expect(error.context.line).toBe(2);
  });

  it("counts blank lines in line numbers", () => {
    expect(invalid(`${lines[0]}\n\n\nnot json\n`).message).toContain("ops.jsonl:4: not valid JSON");
  });

  it("rejects a field of the wrong type with its path, what was expected and what was found", () => {
    const error = invalid(
      edited(0, (value) => {
        value.params.nbytes = "x";
      }),
    );
    expect(error.message).toBe('[OPLOG_INVALID] ops.jsonl:1: params.nbytes: expected a number, got "x".');
    expect(
      invalid(
        edited(2, (value) => {
          value.params.input_shapes[0][1] = 1.5;
        }),
      ).message,
    ).toContain("ops.jsonl:3: params.input_shapes[0][1]: expected an integer, got 1.5");
  });

  it("rejects a missing field", () => {
    const error = invalid(
      edited(1, (value) => {
        delete value.params.dtype_acc;
      }),
    );
    expect(error.message).toContain("ops.jsonl:2: params.dtype_acc: missing (expected");
    expect(
      invalid(
        edited(0, (value) => {
          delete value.component_id;
        }),
      ).message,
    ).toContain("ops.jsonl:1: component_id: missing (expected a string)");
  });

  it("rejects an unknown key and a value outside an enum", () => {
    expect(
      invalid(
        edited(0, (value) => {
          value.params.stride = 4;
        }),
      ).message,
    ).toContain('ops.jsonl:1: params: unknown key(s) "stride"');
    expect(
      invalid(
        edited(0, (value) => {
          value.params.src_space = "dram";
        }),
      ).message,
    ).toContain('ops.jsonl:1: params.src_space: expected one of "hbm", "tcm", "sram", got "dram"');
  });

  it("rejects an unknown op_kind", () => {
    const error = invalid(
      edited(2, (value) => {
        value.op_kind = "conv";
      }),
    );
    expect(error.message).toContain(
      'ops.jsonl:3: op_kind: expected one of "memory", "gemm", "math", got "conv"',
    );
  });

  it("rejects ids that do not count 0, 1, 2, ...", () => {
    const error = invalid(
      edited(1, (value) => {
        value.id = 2;
      }),
    );
    expect(error.message).toContain("ops.jsonl:2: id: expected 1, got 2");
    expect(invalid(`${lines[1]}\n`).message).toContain("ops.jsonl:1: id: expected 0, got 1");
  });

  it("rejects a dependency on the record itself or a later one", () => {
    const error = invalid(
      edited(1, (value) => {
        value.dependency_ids = [0, 2];
      }),
    );
    expect(error.message).toContain(
      "ops.jsonl:2: dependency_ids[1]: expected the id of an earlier record (< 1), got 2",
    );
    expect(
      invalid(
        edited(1, (value) => {
          value.dependency_ids = [1];
        }),
      ).message,
    ).toContain("ops.jsonl:2: dependency_ids[0]");
  });

  it("rejects t_start going backwards and t_end before t_start", () => {
    expect(
      invalid(
        edited(2, (value) => {
          value.t_start = 5;
          value.t_end = 6;
        }),
      ).message,
    ).toContain("ops.jsonl:3: t_start: expected >= 10.5");
    expect(
      invalid(
        edited(0, (value) => {
          value.t_end = -0.5;
        }),
      ).message,
    ).toContain("ops.jsonl:1: t_end:");
    expect(
      invalid(
        edited(1, (value) => {
          value.t_end = 10;
        }),
      ).message,
    ).toContain("ops.jsonl:2: t_end: expected >= t_start (10.5 ns), got 10");
  });

  it("names <oplog> when no file is given", () => {
    try {
      parseOpLogJsonl("[]");
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toContain("<oplog>:1: <record>: expected an object, got an array");
    }
  });
});

describe("OpLogJsonlParser", () => {
  it("validates line by line and counts lines and records", () => {
    const parser = new OpLogJsonlParser("stream.jsonl");
    expect(parser.parseLine(lines[0] as string)).toEqual(records[0]);
    expect(parser.parseLine("")).toBeNull();
    expect(parser.parseLine(lines[1] as string)).toEqual(records[1]);
    expect(parser.line).toBe(3);
    expect(parser.count).toBe(2);
    expect(() => parser.parseLine(lines[1] as string)).toThrow("stream.jsonl:4: id: expected 2, got 1");
  });
});

describe("schemas", () => {
  it("rejects an unknown op_kind and accepts the three known ones", () => {
    expect(opRecordSchema.safeParse({ ...records[0], op_kind: "conv" }).success).toBe(false);
    for (const record of records) expect(opRecordSchema.parse(record)).toEqual(record);
  });

  it("does not accept the params of another kind", () => {
    expect(opRecordSchema.safeParse({ ...records[0], params: gemmParams() }).success).toBe(false);
  });

  it("allows the GEMM extensions only with their types", () => {
    expect(gemmParamsSchema.safeParse({ ...gemmParams(), accumulate: true }).success).toBe(true);
    expect(gemmParamsSchema.safeParse({ ...gemmParams(), accumulate: "yes" }).success).toBe(false);
    expect(gemmParamsSchema.safeParse({ ...gemmParams(), epilogue: [{ bias: 1 }] }).success).toBe(false);
  });
});

describe("stripTimes", () => {
  it("removes t_start and t_end and keeps everything else", () => {
    const record = records[1] as OpRecord;
    const timeless = stripTimes(record);
    expect(timeless).toEqual({
      id: 1,
      component_id: "sip0.cube0.pe0.pe_gemm",
      op_kind: "gemm",
      op_name: "gemm_f16",
      params: record.params,
      dependency_ids: [0],
    });
    expect("t_start" in timeless || "t_end" in timeless).toBe(false);
    expect(stripTimes({ ...record, t_start: 99, t_end: 1000 })).toEqual(timeless);
  });
});
