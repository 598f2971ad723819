import { gemmTimingOf, tcmAddress } from "@kb/components";
import { describe, expect, it } from "vitest";
import { machineOf } from "../../components/src/test-support.js";
import { gemmMapping, type PeGemmV2Params, peGemmV2Cycles, peGemmV2Params } from "./pe-gemm-v2.js";

const params = (input: Record<string, unknown> = {}): PeGemmV2Params => peGemmV2Params.parse(input);
const cycles = (input: Record<string, unknown>, m: number, n: number, k: number, dtype = "f16") =>
  peGemmV2Cycles(params(input), m, n, k, dtype);

// Every expected value below is computed by hand from docs/latency-model.md (pe_gemm_v2):
//   folds = ceil(rows / R) x ceil(cols / C); preload = 0 (os) | R (ws, is);
//   fold = preload + stream x dtype_cycles + R + C - 2;
//   back to back: folds x fold; overlapped: fold + (folds - 1) x max(stream x dtype_cycles, preload).
describe("pe_gemm_v2 cycles, by hand", () => {
  it("defaults: 32 x 32, output stationary, folds back to back, no overhead, 1 GHz", () => {
    expect(params()).toMatchObject({
      mac_rows: 32,
      mac_cols: 32,
      dataflow: "os",
      fold_overlap: false,
      overhead_cycles: 0,
      freq_ghz: 1,
      dtype_cycles: { f16: 1, bf16: 1, f32: 4, i8: 0.5, i32: 4 },
    });
  });

  it("os, 128^3 on 32 x 32: 4 x 4 folds of 128 + 32 + 32 - 2 = 190 -> 3040 (SCALE-Sim's count)", () => {
    expect(cycles({}, 128, 128, 128)).toBe(3040);
  });

  // A 16 x 8 array, so that putting a dimension on the wrong side changes the answer.
  it("os on 16 x 8, m 40 n 20 k 10: M on rows ceil(40/16) = 3, N on columns ceil(20/8) = 3, K streamed: 9 x (10 + 22) = 288", () => {
    // With M on the columns it would be ceil(40/8) x ceil(20/16) = 10 folds: 320.
    expect(cycles({ mac_rows: 16, mac_cols: 8 }, 40, 20, 10)).toBe(288);
  });

  it("ws on 16 x 8, m 10 n 20 k 40: K on rows ceil(40/16) = 3, N on columns ceil(20/8) = 3, M streamed: 9 x (16 + 10 + 22) = 432", () => {
    // Preload 16 (the weights enter through the rows), stream 10, fill and drain 16 + 8 - 2 = 22.
    // With K on the columns: ceil(40/8) x ceil(20/16) = 10 folds: 480.
    expect(cycles({ mac_rows: 16, mac_cols: 8, dataflow: "ws" }, 10, 20, 40)).toBe(432);
  });

  it("is on 16 x 8, m 20 n 10 k 40: K on rows ceil(40/16) = 3, M on columns ceil(20/8) = 3, N streamed: 9 x (16 + 10 + 22) = 432", () => {
    // With M on the rows: ceil(20/16) x ceil(40/8) = 10 folds: 480.
    expect(cycles({ mac_rows: 16, mac_cols: 8, dataflow: "is" }, 20, 10, 40)).toBe(432);
  });

  it("ws and is on 32 x 32 (m 64 n 96 k 128 / m 96 n 50 k 64)", () => {
    // ws: K 128 -> 4 row folds, N 96 -> 3 column folds; 12 x (32 + 64 + 62) = 12 x 158 = 1896.
    expect(cycles({ dataflow: "ws" }, 64, 96, 128)).toBe(1896);
    // is: K 64 -> 2, M 96 -> 3; 6 x (32 + 50 + 62) = 6 x 144 = 864.
    expect(cycles({ dataflow: "is" }, 96, 50, 64)).toBe(864);
  });

  it("a partial fold costs a full one: os 33 x 40 x 16 on 32 x 32 is 2 x 2 folds of 16 + 62 = 78 -> 312", () => {
    // The second row fold holds 1 of 33 rows, the second column fold 8 of 40 columns, and each
    // still streams all 16 K steps through the whole skew: 4 x 78 = 312 cycles for 21120 MACs,
    // an array utilisation of 33 x 40 x 16 / (312 x 32 x 32) = 6.6%.
    expect(cycles({}, 33, 40, 16)).toBe(312);
    expect((33 * 40 * 16) / (312 * 32 * 32)).toBeCloseTo(0.066, 3);
    // One more row or column inside the same folds costs nothing.
    expect(cycles({}, 64, 64, 16)).toBe(312);
  });

  it("fold_overlap: the first fold in full, each later one max(stream, preload)", () => {
    // os 128^3 on 32 x 32: 190 + 15 x max(128, 0) = 2110 (back to back: 3040).
    expect(cycles({ fold_overlap: true }, 128, 128, 128)).toBe(2110);
    // ws, m 8 n 64 k 64: 2 x 2 folds of 32 + 8 + 62 = 102; the 8-row stream is shorter than
    // the 32-cycle preload of the next weights, so later folds cost 32: 102 + 3 x 32 = 198
    // (back to back: 4 x 102 = 408).
    expect(cycles({ dataflow: "ws", fold_overlap: true }, 8, 64, 64)).toBe(198);
    expect(cycles({ dataflow: "ws" }, 8, 64, 64)).toBe(408);
    // One fold: nothing to overlap.
    expect(cycles({ dataflow: "is", fold_overlap: true }, 32, 32, 32)).toBe(
      cycles({ dataflow: "is" }, 32, 32, 32),
    );
  });

  it("dtype_cycles scales the streamed dimension only", () => {
    // os 32^3: K streams at 4 cycles a step in f32: 32 x 4 + 62 = 190; i8 at 0.5: 16 + 62 = 78.
    expect(cycles({}, 32, 32, 32, "f32")).toBe(190);
    expect(cycles({}, 32, 32, 32, "i8")).toBe(78);
    // ws streams M: 32 + 32 x 4 + 62 = 222 (the preload and the skew do not scale).
    expect(cycles({ dataflow: "ws" }, 32, 32, 32, "f32")).toBe(222);
    // A dtype the map does not list counts 1; the map can be replaced.
    expect(cycles({}, 32, 32, 32, "f64")).toBe(94);
    expect(cycles({ dtype_cycles: { f16: 2 } }, 32, 32, 32)).toBe(126);
  });

  it("overhead_cycles is added once per GEMM", () => {
    expect(cycles({ overhead_cycles: 8 }, 128, 128, 128)).toBe(3048);
    expect(cycles({ overhead_cycles: 8, fold_overlap: true }, 128, 128, 128)).toBe(2118);
  });

  it("gemmMapping says which dimension goes where", () => {
    expect(gemmMapping("os", 1, 2, 3)).toEqual({ rows: 1, cols: 2, stream: 3 });
    expect(gemmMapping("ws", 1, 2, 3)).toEqual({ rows: 3, cols: 2, stream: 1 });
    expect(gemmMapping("is", 1, 2, 3)).toEqual({ rows: 3, cols: 1, stream: 2 });
  });

  it("rejects a dataflow it does not know", () => {
    expect(peGemmV2Params.safeParse({ dataflow: "rs" }).success).toBe(false);
  });
});

describe("pe_gemm_v2 on a machine", () => {
  /** default.yaml with pe_gemm_v2 and no dispatch time, so a lone `gemm` command ends when its stage does. */
  function machineWith(gemm: Record<string, unknown>) {
    return machineOf({
      pe_template: {
        components: {
          pe_cpu: { params: { dispatch_ns: 0 } },
          pe_gemm: { impl: "pe_gemm_v2", params: gemm },
        },
      },
    });
  }
  const tcm = (offset: number) => tcmAddress(0, 0, 0, offset);
  const gemm = (m: number, n: number, k: number, dtype: "f16" | "f32" = "f16") =>
    ({ kind: "gemm", a: tcm(0), b: tcm(65536), out: tcm(131072), m, n, k, dtype }) as const;

  it("a GEMM stage takes (cycles + overhead_cycles) / freq_ghz on the compute slot", () => {
    // ws, m 64 n 96 k 128 on 32 x 32: 1896 cycles (above) + 10 = 1906 cycles at 2 GHz = 953 ns,
    // between the fetch of A and B ((64 x 128 + 128 x 96) x 2 B: 1 + 40960 / 512 = 81 ns) and the
    // store of the result (64 x 96 x 2 B: 1 + 12288 / 512 = 25 ns).
    const machine = machineWith({ dataflow: "ws", overhead_cycles: 10, freq_ghz: 2 });
    machine.run(machine.submit("sip0.cube0.pe0", [gemm(64, 96, 128)]));
    expect(machine.env.now).toBe(81 + 953 + 25);
    const engine = machine.component("sip0.cube0.pe0.pe_gemm");
    expect(engine.stats.flops).toBe(2 * 64 * 96 * 128);
    expect(engine.stats.busyNs).toBe(953);
  });

  it("states its timing (GemmTiming) for kb probe and the results, and counts the cycles it charged", () => {
    const machine = machineWith({ mac_rows: 16, mac_cols: 8, freq_ghz: 2 });
    machine.run(machine.submit("sip0.cube0.pe0", [gemm(40, 20, 10), gemm(32, 32, 32, "f32")]));
    const timing = gemmTimingOf(machine.component("sip0.cube0.pe0.pe_gemm"));
    expect(timing).not.toBeNull();
    expect(timing).toMatchObject({ macRows: 16, macCols: 8, freqGhz: 2 });
    expect(timing?.gemmCycles(40, 20, 10, "f16")).toBe(288);
    // 288 + os f32 32^3 on 16 x 8: 2 x 4 folds of 32 x 4 + 22 = 150 -> 1200; 1488 in all.
    expect(timing?.arrayCycles).toBe(288 + 1200);
    expect(machine.component("sip0.cube0.pe0.pe_gemm").stats.busyNs).toBe(1488 / 2);
    // Each GEMM between its fetch and store (1 + bytes / 512 each): f16 40 x 20 x 10 fetches 1200 B
    // and stores 1600 B, f32 32^3 fetches 8192 B and stores 4096 B.
    expect(machine.env.now).toBe(1488 / 2 + (1 + 1200 / 512) + (1 + 1600 / 512) + 17 + 9);
    expect(gemmTimingOf(machine.component("sip0.cube0.pe0.pe_math"))).toBeNull();
  });

  it("peaks at 2 x R x C x freq_ghz / the fewest cycles per MAC step, as v1", () => {
    const machine = machineWith({ mac_rows: 128, mac_cols: 64, dtype_cycles: { f16: 1, f32: 4 } });
    expect(machine.component("sip0.cube0.pe0.pe_gemm").peak()).toEqual({ flopsPerNs: 2 * 128 * 64 });
  });
});
