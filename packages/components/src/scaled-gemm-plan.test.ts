import { describe, expect, it } from "vitest";
import { tcmAddress } from "./machine.js";
import { machineOf } from "./test-support.js";

// A scaled GEMM command's timing on default.yaml's pe_gemm_v1 (32 x 32 MACs, overhead 8 cycles,
// 1 GHz, f4e2m1 0.5 cycles) and dispatch 2 ns: 128^3 is 16 passes of k + ceil(k / block) steps,
// block 32 for e8m0 scales and 16 for nvfp4's f8e4m3 (docs/latency-model.md, "Scaled GEMM").
// Around the GEMM, the fetch of A, B and both scales and the store of the f32 result through
// PE_TCM (latency_ns 1, 512 GB/s; ADR-0021 D5): one byte per f4e2m1 element and per scale.
describe("scaled GEMM commands (tl.dotScaled)", () => {
  const tcm = (offset: number) => tcmAddress(0, 0, 0, offset);
  const scaled = {
    kind: "gemm",
    a: tcm(0),
    b: tcm(32768),
    out: tcm(65536),
    m: 128,
    n: 128,
    k: 128,
    dtype: "f4e2m1",
    dtypeAcc: "f32",
    dtypeOut: "f32",
    aScale: tcm(131072),
    bScale: tcm(135168),
  } as const;
  const run = (command: Record<string, unknown>) => {
    const machine = machineOf("default");
    const done = machine.submit("sip0.cube0.pe0", [command as never]);
    machine.run(done);
    return done.value;
  };

  it("e8m0 scales: 2 + 16 x (128 + 4) x 0.5 + 8 = 1066 ns; nvfp4's f8e4m3: 2 + 16 x (128 + 8) x 0.5 + 8 = 1098 ns", () => {
    // Fetch: A and B 2 x 16384 B, scales 2 x 128 x 128 / block B; store 128 x 128 x 4 = 65536 B
    // (1 + 128 = 129 ns).
    // e8m0: fetch 32768 + 1024 = 33792 B, 1 + 66 = 67 ns: 1066 + 67 + 129 = 1262 ns.
    expect(run(scaled)).toBeCloseTo(1066 + 67 + 129, 6);
    // nvfp4: fetch 32768 + 2048 = 34816 B (twice the scales of e8m0), 1 + 68 = 69 ns: 1296 ns.
    expect(run({ ...scaled, scaleDtype: "f8e4m3" })).toBeCloseTo(1098 + 69 + 129, 6);
  });

  it("refuses a scaleDtype other than f8e4m3, and one without scales (MACHINE_INVALID_COMMAND naming the PE)", () => {
    expect(() => run({ ...scaled, scaleDtype: "e4m3" })).toThrow(
      /sip0\.cube0\.pe0 command .*\(gemm\): scaleDtype "e4m3" must be "f8e4m3" \(nvfp4's scales\); omit it for e8m0 scales/,
    );
    const { aScale: _a, bScale: _b, ...plain } = scaled;
    expect(() => run({ ...plain, scaleDtype: "f8e4m3" })).toThrow(
      /scaleDtype "f8e4m3" names the scales of a scaled GEMM: give aScale or bScale/,
    );
  });
});
