import { readFileSync } from "node:fs";
import { buildMachine } from "@kb/components";
import { MemorySink, OpLogger, type OpRecord } from "@kb/oplog";
import type { PeCommand } from "@kb/spec";
import { expandTopology, parseTopology, tcmAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { topologyPath } from "../../components/src/test-support.js";
import { defaultRegistry } from "./default-registry.js";
import { simdNs } from "./pe-impls.js";

const tcm = (offset: number) => tcmAddress(0, 0, 0, offset);

/** Runs `commands` on PE 0 of default.yaml; returns the math records. */
function mathRecords(commands: readonly PeCommand[]): OpRecord[] {
  const sink = new MemorySink();
  const opLogger = new OpLogger(sink);
  const path = topologyPath("default");
  const machine = buildMachine(expandTopology(parseTopology(readFileSync(path, "utf8"), path)), {
    registry: defaultRegistry(),
    opLogger,
  });
  machine.run(machine.submit("sip0.cube0.pe0", commands));
  opLogger.close();
  return sink.records.filter((record) => record.op_kind === "math");
}

describe("pe_math_v1 with broadcasting: output elements are charged", () => {
  it("a [64, 1] + [1, 128] add costs what a [64, 128] add costs, and its record carries both shapes", () => {
    const [record] = mathRecords([
      {
        kind: "math",
        op: "add",
        inputs: [tcm(0), tcm(4096)],
        shape: [64, 128],
        inputShapes: [
          [64, 1],
          [1, 128],
        ],
        out: tcm(8192),
        dtype: "f16",
      },
    ]);
    // 64 x 128 = 8192 output elements = 128 vectors of 64 lanes x 1 cycle + 4 overhead = 132 ns at 1 GHz.
    expect((record?.t_end ?? 0) - (record?.t_start ?? 0)).toBeCloseTo(132, 9);
    expect(record?.params).toMatchObject({
      input_shapes: [
        [64, 1],
        [1, 128],
      ],
      shape_out: [64, 128],
    });
  });

  it("a scalar first and an i1 cond are recorded for phase 2", () => {
    const [sub, where] = mathRecords([
      {
        kind: "math",
        op: "sub",
        inputs: [tcm(0)],
        shape: [8],
        out: tcm(64),
        dtype: "f32",
        scalars: [0],
        scalarIndex: 0,
      },
      {
        kind: "math",
        op: "where",
        inputs: [tcm(128), tcm(0), tcm(256)],
        shape: [8],
        inputShapes: [[8], [8], [1]],
        inputDtypes: ["i1", "f32", "f32"],
        out: tcm(320),
        dtype: "f32",
      },
    ]);
    expect(sub?.params).toMatchObject({ scalars: [0], scalar_index: 0 });
    expect(where?.params).toMatchObject({
      input_shapes: [[8], [8], [1]],
      input_dtypes: ["i1", "f32", "f32"],
    });
  });

  it("refuses shapes that do not broadcast to the command's shape", () => {
    expect(() =>
      mathRecords([
        {
          kind: "math",
          op: "add",
          inputs: [tcm(0), tcm(4096)],
          shape: [4, 8],
          inputShapes: [
            [4, 8],
            [3, 8],
          ],
          out: tcm(8192),
          dtype: "f32",
        },
      ]),
    ).toThrow(/inputShapes \[4, 8\], \[3, 8\] do not broadcast to shape \[4, 8\]/);
  });
});

describe("pe_math_v1 timing of the new ops (simdNs), by hand", () => {
  const params = { freq_ghz: 1, lanes: 64, op_cycles: {}, overhead_cycles: 4, queue_depth: 4 };

  it("unary and binary ops: vectors x the table's cycles + overhead", () => {
    // 4096 elements = 64 vectors.
    expect(simdNs(params, "lt", 4096, 0)).toBe(64 * 1 + 4); // 68
    expect(simdNs(params, "rsqrt", 4096, 0)).toBe(64 * 4 + 4); // 260
    expect(simdNs(params, "gelu", 4096, 0)).toBe(64 * 8 + 4); // 516
    expect(simdNs(params, "silu", 4096, 0)).toBe(64 * 7 + 4); // 452
    expect(simdNs(params, "pow", 4096, 0)).toBe(64 * 9 + 4); // 580
    expect(simdNs(params, "copy", 4096, 0)).toBe(64 + 4); // broadcastTo: 68
    expect(simdNs(params, "transpose", 4096, 32)).toBe(64 + 4); // swapAxes: no lane tree
  });

  it("argmax and cumsum along rows: a lane tree per row, cumsum's twice", () => {
    // [8, 128] along the last axis: 16 vectors, 8 rows, tree ceil(log2(min(128, 64))) = 6 cycles.
    expect(simdNs(params, "argmax", 1024, 128)).toBe(16 * 2 + 8 * 6 * 1 + 4); // 84
    expect(simdNs(params, "cumsum", 1024, 128)).toBe(16 * 1 + 8 * 6 * 2 + 4); // 116
    expect(simdNs(params, "cumprod", 1024, 128)).toBe(16 * 1 + 8 * 6 * 2 + 4); // 116
  });
});
