import { type Machine, tcmAddress } from "@kb/components";
import type { PeCommand } from "@kb/spec";
import { describe, expect, it } from "vitest";
import { machineOf } from "../../components/src/test-support.js";

// Every byte moved inside the PE is charged (ADR-0021 D5, docs/latency-model.md "pe_tcm_v1"):
// a simple GEMM or MATH command fetches its operands through PE_FETCH_STORE and PE_TCM before it
// computes and stores its result after; a DMA fill writes PE_TCM after its last response, a
// drain reads PE_TCM before its first packet. The schema's PE_TCM (as default.yaml's): latency_ns 1,
// bw_gbs 512;
// each PE_TCM request takes latency_ns + bytes / bw_gbs, one at a time.

const PE = "sip0.cube0.pe0";
const tcm = (offset: number) => tcmAddress(0, 0, 0, offset);

/** The schema's default machine with no PE_CPU dispatch time: a lone command ends when its last stage does. */
function run(commands: PeCommand[], pe: Record<string, unknown> = {}): Machine {
  const machine = machineOf({
    pe_template: { components: { pe_cpu: { params: { dispatch_ns: 0 } }, ...pe } },
  });
  machine.run(machine.submit(PE, commands));
  return machine;
}

const component = (machine: Machine, name: string) => machine.component(`${PE}.${name}`);

describe("TCM and fetch/store traffic of simple commands", () => {
  it("a 128^3 f16 dot: fetch 64 KiB (129 ns), GEMM 2056 ns, store 32 KiB (65 ns): ends at 2250 ns", () => {
    // fetch = A 128 x 128 x 2 + B 128 x 128 x 2 = 65536 B: 1 + 65536 / 512 = 129 ns.
    // pe_gemm_v1 (32 x 32, overhead 8): 4 x 4 x 128 + 8 = 2056 ns.
    // store = out 128 x 128 x 2 (dtypeOut = f16) = 32768 B: 1 + 32768 / 512 = 65 ns.
    const machine = run([
      { kind: "gemm", a: tcm(0), b: tcm(65536), out: tcm(131072), m: 128, n: 128, k: 128, dtype: "f16" },
    ]);
    expect(machine.env.now).toBe(129 + 2056 + 65);
    expect(component(machine, "pe_gemm").stats.busyNs).toBe(2056);
    expect(component(machine, "pe_fetch_store").stats.bytes).toBe(65536 + 32768);
    expect([...component(machine, "pe_fetch_store").laneBusyNs]).toEqual([129, 65]);
    expect(component(machine, "pe_tcm").stats.bytes).toBe(65536 + 32768);
    expect(component(machine, "pe_tcm").stats.busyNs).toBe(129 + 65);
  });

  it("an accumulating dot also fetches the accumulator it adds to (f32 out)", () => {
    // fetch = 2 x 64 x 64 x 2 + 64 x 64 x 4 = 32768 B (65 ns); GEMM 2 x 2 x 64 + 8 = 264 ns;
    // store = 64 x 64 x 4 = 16384 B (33 ns).
    const machine = run([
      {
        kind: "gemm",
        a: tcm(0),
        b: tcm(65536),
        out: tcm(131072),
        m: 64,
        n: 64,
        k: 64,
        dtype: "f16",
        dtypeOut: "f32",
        accumulate: true,
      },
    ]);
    expect(component(machine, "pe_tcm").stats.bytes).toBe(32768 + 16384);
    expect(machine.env.now).toBe(65 + 264 + 33);
  });

  it("a math add of two [64, 64] f32: fetch 32 KiB (65 ns), 68 ns on PE_MATH, store 16 KiB (33 ns)", () => {
    const machine = run([
      {
        kind: "math",
        op: "add",
        inputs: [tcm(0), tcm(16384)],
        out: tcm(32768),
        shape: [64, 64],
        dtype: "f32",
      },
    ]);
    expect(machine.env.now).toBe(65 + 68 + 33);
    expect(component(machine, "pe_fetch_store").stats.bytes).toBe(32768 + 16384);
  });

  it("a broadcast operand is fetched once at its own shape; a reduction stores its reduced shape", () => {
    // add([64, 1], [1, 128]) in f32: fetch (64 + 128) x 4 = 768 B (2.5 ns), 8192 elements = 132 ns,
    // store 64 x 128 x 4 = 32768 B (65 ns).
    const broadcast = run([
      {
        kind: "math",
        op: "add",
        inputs: [tcm(0), tcm(1024)],
        inputShapes: [
          [64, 1],
          [1, 128],
        ],
        out: tcm(4096),
        shape: [64, 128],
        dtype: "f32",
      },
    ]);
    expect(broadcast.env.now).toBe(2.5 + 132 + 65);
    // sum over [8, 128] f32 along the last axis: fetch 4096 B (9 ns), 16 + 8 x 6 + 4 = 68 ns, store 8 x 4 = 32 B (1.0625 ns).
    const sum = run([
      { kind: "math", op: "sum", inputs: [tcm(0)], out: tcm(8192), shape: [8, 128], dtype: "f32" },
    ]);
    expect(component(sum, "pe_tcm").stats.bytes).toBe(4096 + 32);
    expect(sum.env.now).toBe(9 + 68 + 1.0625);
  });
});

describe("TCM traffic of DMA fills and drains", () => {
  const load = { kind: "dma", src: 0, dst: tcm(0), bytes: 1024 } as const;
  const store = { kind: "dma", src: tcm(0), dst: 0, bytes: 1024 } as const;

  /** The same commands with PE_TCM 10^4 x faster and no latency: only bytes / 5120000 ns remain. */
  const fastTcm = { pe_tcm: { params: { latency_ns: 0, bw_gbs: 5_120_000 } } };

  it("a 1 KiB load writes PE_TCM after its last response: 1 + 1024 / 512 = 3 ns more", () => {
    const slow = run([load]);
    const fast = run([load], fastTcm);
    expect(slow.env.now - fast.env.now).toBeCloseTo(3 - 1024 / 5_120_000, 9);
    expect(component(slow, "pe_tcm").stats.bytes).toBe(1024);
    expect(component(slow, "pe_tcm").stats.busyNs).toBe(3);
    expect(component(slow, "pe_fetch_store").stats.bytes).toBe(0);
  });

  it("a 1 KiB store reads PE_TCM before its first packet: the write ends 3 ns later", () => {
    const slow = run([store]);
    const fast = run([store], fastTcm);
    expect(slow.env.now - fast.env.now).toBeCloseTo(3 - 1024 / 5_120_000, 9);
    expect(component(slow, "pe_tcm").stats.bytes).toBe(1024);
  });

  it("a drain and a math command contend on PE_TCM, one request at a time", () => {
    // An async 64 KiB store, then a [64, 64] f32 add, both dispatched at 0:
    //   add's fetch (32 KiB)   PE_TCM 0 .. 65
    //   store's TCM read       after its PE_MMU miss (0 .. 50), queued behind the fetch: 65 .. 194
    //   add on PE_MATH         65 .. 133
    //   add's store (16 KiB)   queued at 133 behind the drain's read: 194 .. 227 (94 ns in its lane)
    const machine = run([
      { ...store, bytes: 65536, async: true },
      {
        kind: "math",
        op: "add",
        inputs: [tcm(65536), tcm(81920)],
        out: tcm(98304),
        shape: [64, 64],
        dtype: "f32",
      },
    ]);
    const tcmEngine = component(machine, "pe_tcm");
    expect(tcmEngine.stats.bytes).toBe(65536 + 32768 + 16384);
    expect(tcmEngine.stats.busyNs).toBe(65 + 129 + 33);
    expect([...component(machine, "pe_fetch_store").laneBusyNs]).toEqual([65, 94]);
  });
});
