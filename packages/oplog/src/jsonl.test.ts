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

describe("non-finite numbers and -0", () => {
  const special = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 1.5];

  /** Each value as text that tells -0 from 0 (`String(-0)` is "0"). */
  function spelled(values: readonly unknown[]): string[] {
    return values.map((value) => (Object.is(value, -0) ? "-0" : String(value)));
  }

  const fill: OpRecord = {
    id: 0,
    t_start: 0,
    t_end: 4,
    component_id: "sip0.cube0.pe0.pe_math",
    op_kind: "math",
    op_name: "fill",
    params: { ...mathParams(), op: "fill", input_addrs: [], input_shapes: [], axis: null, scalars: special },
    dependency_ids: [],
  };
  const gemm: OpRecord = {
    id: 1,
    t_start: 4,
    t_end: 9,
    component_id: "sip0.cube0.pe0.pe_gemm",
    op_kind: "gemm",
    op_name: "gemm_f32",
    params: {
      ...gemmParams(),
      epilogue: [
        { op: "maximum", scalar: Number.NEGATIVE_INFINITY },
        { op: "mul", scalar: -0 },
        { op: "add", scalar: Number.NaN },
        { op: "clamp", min: Number.NEGATIVE_INFINITY, max: Number.POSITIVE_INFINITY, mode: "same" },
        { op: "mul", scalar: 0.5 },
      ],
    },
    dependency_ids: [0],
  };

  it("writes NaN, Infinity, -Infinity and -0 in math scalars as strings", () => {
    const line = opRecordToJson(fill);
    expect(line).toContain('"scalars":["NaN","Infinity","-Infinity","-0",1.5]');
    expect(line).not.toMatch(/"scalars":\[[^\]]*null/);
  });

  it("reads math scalars back as the same numbers (Object.is: NaN and -0 too)", () => {
    const [record] = parseOpLogJsonl(opRecordToJson(fill));
    const scalars = (record as OpRecord & { op_kind: "math" }).params.scalars as number[];
    expect(spelled(scalars)).toEqual(["NaN", "Infinity", "-Infinity", "-0", "1.5"]);
    special.forEach((value, index) => {
      expect(Object.is(scalars[index], value)).toBe(true);
    });
    expect(opRecordToJson(record as OpRecord)).toBe(opRecordToJson(fill));
  });

  it("writes an exact 64-bit scalar past 2^53 as its digits and reads the same BigInt back", () => {
    // 2^60 + 3 = 1152921504606846979; as a double it would be 1152921504606846976.
    const exact: OpRecord = {
      ...fill,
      params: {
        ...mathParams(),
        op: "add",
        dtype: "i64",
        axis: null,
        scalars: [2n ** 60n + 3n, -(2n ** 63n)],
      },
    };
    const line = opRecordToJson(exact);
    expect(line).toContain('"scalars":["1152921504606846979","-9223372036854775808"]');
    const [record] = parseOpLogJsonl(line);
    expect((record as OpRecord & { op_kind: "math" }).params.scalars).toEqual([2n ** 60n + 3n, -(2n ** 63n)]);
    // Digits within 2^53 are not a scalar's spelling (JSON writes those as numbers).
    expect(() => parseOpLogJsonl(line.replace("1152921504606846979", "12"))).toThrow(/got "12"/);
  });

  it("round-trips epilogue scalars and other numeric step arguments", () => {
    const line = opRecordToJson(gemm);
    expect(line).toContain(
      '"epilogue":[{"op":"maximum","scalar":"-Infinity"},{"op":"mul","scalar":"-0"},{"op":"add","scalar":"NaN"},' +
        '{"op":"clamp","min":"-Infinity","max":"Infinity","mode":"same"},{"op":"mul","scalar":0.5}]',
    );
    const [, record] = parseOpLogJsonl(`${opRecordToJson(fill)}\n${line}\n`);
    const epilogue = (record as OpRecord & { op_kind: "gemm" }).params.epilogue ?? [];
    expect(spelled(epilogue.map((step) => step.scalar))).toEqual([
      "-Infinity",
      "-0",
      "NaN",
      "undefined",
      "0.5",
    ]);
    expect(epilogue[3]).toEqual({
      op: "clamp",
      min: Number.NEGATIVE_INFINITY,
      max: Number.POSITIVE_INFINITY,
      mode: "same",
    });
    expect(Object.keys(epilogue[3] as object)).toEqual(["op", "min", "max", "mode"]);
    expect(opRecordToJson(record as OpRecord)).toBe(line);
  });

  it("parses a line written by hand with the string encoding", () => {
    const line =
      '{"id":0,"t_start":0,"t_end":1,"component_id":"pe0.pe_math","op_kind":"math","op_name":"clamp",' +
      '"params":{"op":"clamp","input_addrs":[0],"input_shapes":[[4]],"dst_addr":64,"shape_out":[4],' +
      '"dtype":"f32","axis":null,"addr_space":"tcm","scalars":["-Infinity",-0,"-0","NaN",0]},"dependency_ids":[]}';
    const [record] = parseOpLogJsonl(line, "hand.jsonl");
    const scalars = (record as OpRecord & { op_kind: "math" }).params.scalars as number[];
    expect(spelled(scalars)).toEqual(["-Infinity", "-0", "-0", "NaN", "0"]);
  });

  it("leaves lines without such values byte-identical (and -0 in an integer field is 0)", () => {
    expect(lines[1]).toBe(
      '{"id":1,"t_start":10.5,"t_end":40,"component_id":"sip0.cube0.pe0.pe_gemm","op_kind":"gemm","op_name":"gemm_f16",' +
        '"params":{"src_a_addr":0,"src_b_addr":65536,"dst_addr":0,"shape_a":[128,256],"shape_b":[256,128],' +
        '"shape_out":[128,128],"dtype_in":"f16","dtype_acc":"f32","dtype_out":"f16","transpose_a":false,' +
        '"transpose_b":false,"layout_a":"row_major","layout_b":"row_major","layout_out":"row_major",' +
        '"addr_space":"tcm","accumulate":true,"epilogue":[{"op":"relu"},{"op":"scale","factor":0.5}]},"dependency_ids":[0]}',
    );
    expect(lines[2]).toContain('"axis":null,"addr_space":"tcm","scalars":[2]}');
    const zeroAddress = {
      ...fill,
      params: { ...mathParams(), dst_addr: -0, scalars: [0, 1e-7, 1e21] },
    } as OpRecord;
    expect(opRecordToJson(zeroAddress)).toContain('"dst_addr":0,');
    expect(opRecordToJson(zeroAddress)).toContain('"scalars":[0,1e-7,1e+21]');
  });

  it("rejects null in scalars at its line, saying what to write instead", () => {
    const line = opRecordToJson(fill).replace('"scalars":["NaN"', '"scalars":[null');
    const error = invalid(`${lines[0]}\n${line.replace('"id":0', '"id":1')}\n`);
    expect(error.context.line).toBe(2);
    expect(error.message).toContain(
      'ops.jsonl:2: params.scalars[0]: expected a number or one of the strings "NaN", "Infinity", "-Infinity", "-0", got null',
    );
    expect(error.message).toContain('write NaN as "NaN"');
  });

  it("rejects other strings and null where a float is expected", () => {
    expect(
      invalid(
        edited(2, (value) => {
          value.params.scalars = ["inf"];
        }),
      ).message,
    ).toContain(
      'ops.jsonl:3: params.scalars[0]: expected a number or one of the strings "NaN", "Infinity", "-Infinity", "-0", got "inf"',
    );
    expect(
      invalid(
        edited(1, (value) => {
          value.params.epilogue = [{ op: "mul", scalar: null }];
        }),
      ).message,
    ).toContain("ops.jsonl:2: params.epilogue[0].scalar: expected a number or one of the strings");
  });

  it("keeps the encoding to float fields: an integer field holding one of the strings is an error", () => {
    expect(
      invalid(
        edited(0, (value) => {
          value.params.nbytes = "Infinity";
        }),
      ).message,
    ).toContain('ops.jsonl:1: params.nbytes: expected a number, got "Infinity"');
  });
});
