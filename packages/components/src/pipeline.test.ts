import { KbError } from "@kb/errors";
import { MemorySink, OpLogger } from "@kb/oplog";
import type { PeCommand } from "@kb/spec";
import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { PipelineContext } from "./message.js";
import { machineOf } from "./test-support.js";
import { TraceRecorder } from "./trace.js";

const MIB = 2 ** 20;
const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });

/**
 * default.yaml with round numbers that make every stage hand-computable: HBM interleaved in 1 MiB
 * units (A at 0 is in ch0.pc0, B at 1 MiB in ch1.pc0, C at 2 MiB in ch2.pc0), PE_GEMM slowed to
 * 0.01 GHz so it is the slowest stage, no MMU, TCM or dispatch overheads.
 */
function pipelineTopology(params: { gemmQueue?: number; buffers?: number } = {}) {
  const buffers = params.buffers ?? 4;
  return {
    cube: { hbm: { pc_bw_gbs: 25.6, interleave_bytes: MIB }, noc: { rows: 2, cols: 4 } },
    pe_template: {
      components: {
        pe_cpu: { params: { dispatch_ns: 0 } },
        pe_mmu: { params: { hit_ns: 0, miss_ns: 0 } },
        pe_tcm: { params: { latency_ns: 0 } },
        pe_gemm: { params: { freq_ghz: 0.01, queue_depth: params.gemmQueue ?? 4 } },
        pe_scheduler: { params: { tile_buffers: buffers, acc_buffers: buffers } },
      },
    },
  };
}

/** C (32 x 32T) = A (32 x 32) @ B (32 x 32T), f16, 32 x 32 x 32 tiles: T tiles of one K step. */
function gemmOfTiles(tiles: number): PeCommand {
  return {
    kind: "composite_gemm",
    a: hbm(0),
    b: hbm(MIB),
    c: hbm(2 * MIB),
    m: 32,
    n: 32 * tiles,
    k: 32,
    dtype: "f16",
    tile: { m: 32, n: 32, k: 32 },
  };
}

describe("composite GEMM pipeline timing", () => {
  // Stage times of one tile (default.yaml links: pe_dma<->xbar0 128 GB/s 0.02 ns, xbar0<->ch
  // 64 GB/s 0.01 ns, xbar first flit 1 ns, PC 25.6 GB/s, access 40 ns, TCM 512 GB/s):
  // DMA_READ: A req reaches ch0.pc0 at 1.03, B req (behind A at xbar0's serial worker) at 2.03;
  //   A streams 2048 B from 41.03 to 121.03, tail at pe_dma 121.03 + 0.01 + 1 + 0.02 = 122.06;
  //   B from 42.03, waits for xbar0 until 42.04 (A's first flit), tail 122.03 + 0.01 + 1 + 0.02
  //   = 123.06, then its PE_TCM write of A and B (4096 B / 512 = 8 ns) -> 131.06.
  //   FETCH: (32*32 + 32*32) * 2 B / 512 = 8 ns. So fill = 131.06 + 8 = 139.06.
  // GEMM: (ceil(32/32) * ceil(32/32) * 32 + 8 cycles) / 0.01 GHz = 4000 ns (the slowest).
  // STORE: 32*32*2 B / 512 = 4 ns. DMA_WRITE of C: its PE_TCM read, 2048 B / 512 = 4 ns, then
  //   the 2048 B to ch2.pc0: head leaves pe_dma at
  //   +0, xbar0 1 ns, reaches the PC at +1.03; the tail is held by pe_dma -> xbar0 (16 ns) then
  //   xbar0 -> ch2 (32 ns): arrives +33.03; the PC bus takes 80 ns from +1.03 -> +81.03;
  //   committed +81.03 + 40 = +121.03. So drain = 4 + 4 + 121.03 = 129.03.
  const fill = 139.06;
  const slowest = 4000;
  const drain = 129.03;

  for (const tiles of [1, 2, 5, 12]) {
    it(`${tiles} tile(s) take fill + ${tiles} x slowest + drain`, () => {
      const machine = machineOf(pipelineTopology());
      const done = machine.submit("sip0.cube0.pe0", [gemmOfTiles(tiles)]);
      machine.run(done);
      expect(machine.env.now).toBeCloseTo(fill + tiles * slowest + drain, 6);
    });
  }

  it("queue depth 1 vs 4 in front of PE_GEMM: stalls = tiles - 1 - depth, same end time", () => {
    // Eight tiles in flight (8 buffer sets): DMA and FETCH finish every tile long before GEMM
    // (4000 ns) frees up, so tiles pile up at PE_GEMM's inbox. GEMM holds tile 0; its inbox
    // takes `depth` more; each further tile's put finds it full: 8 - 1 - depth stalls.
    const results = [1, 4].map((depth) => {
      const machine = machineOf(pipelineTopology({ gemmQueue: depth, buffers: 8 }));
      machine.run(machine.submit("sip0.cube0.pe0", [gemmOfTiles(8)]));
      const gemm = machine.stats().components.find((c) => c.id === "sip0.cube0.pe0.pe_gemm");
      return { end: machine.env.now, stalls: gemm?.queueFullStalls };
    });
    expect(results[0]?.stalls).toBe(6);
    expect(results[1]?.stalls).toBe(3);
    expect(results[0]?.end).toBeCloseTo(fill + 8 * slowest + drain, 6);
    expect(results[1]?.end).toBeCloseTo(fill + 8 * slowest + drain, 6);
  });
});

describe("tile completion", () => {
  it("every tile of a K-accumulating GEMM completes exactly once", () => {
    const tracer = new TraceRecorder();
    const machine = machineOf("default", { tracer });
    const command: PeCommand = {
      kind: "composite_gemm",
      a: hbm(0),
      b: hbm(MIB),
      c: hbm(2 * MIB),
      m: 96,
      n: 64,
      k: 160,
      dtype: "bf16",
      tile: { m: 32, n: 32, k: 64 },
    };
    machine.run(machine.submit("sip0.cube0.pe3", [command]));
    // 3 x 2 output tiles x 3 K tiles (64, 64, 32) = 18 tiles.
    const ready = tracer.events.filter((event) => event.type === "tile_ready").map((event) => event.label);
    expect(ready).toHaveLength(18);
    expect(new Set(ready).size).toBe(18);
    expect(tracer.events.filter((event) => event.type === "command_complete")).toHaveLength(1);
  });

  it("PipelineContext refuses a second completion of a tile", () => {
    const machine = machineOf("default");
    const context = new PipelineContext("cmd", 2, machine.env.event());
    context.completeTile(0);
    expect(() => context.completeTile(0)).toThrow(KbError);
    expect(() => context.completeTile(2)).toThrow(/only 2 tiles/);
    context.completeTile(1);
    expect(context.done.triggered).toBe(true);
  });
});

describe("HBM bandwidth", () => {
  const peak = 8 * 2 * 25.6; // default.yaml: 8 channels x 2 PCs x 25.6 GB/s = 409.6 GB/s

  it("traffic spread over every pseudo-channel reaches >= 95% of the stack's peak", () => {
    const machine = machineOf("default");
    const perRead = 256 * 1024;
    const reads = 16;
    const pes = machine.graph.pesOfCube(0, 0).map((pe) => pe.id);
    const done = pes.map((pe, p) => {
      const node = machine.graph.node(pe);
      const tcm = encodeAddress({ sip: 0, cube: 0, space: "tcm", offset: (node.pe as number) * 2 ** 28 });
      const commands: PeCommand[] = Array.from({ length: reads }, (_, i) => ({
        kind: "dma",
        src: hbm((p * reads + i) * perRead),
        dst: tcm,
        bytes: perRead,
      }));
      return machine.submit(pe, commands);
    });
    machine.run(machine.env.allOf(done));
    const bytes = pes.length * reads * perRead;
    const achieved = bytes / machine.env.now;
    expect(achieved).toBeLessThanOrEqual(peak);
    expect(achieved / peak).toBeGreaterThanOrEqual(0.95);
  });

  it("traffic to one hot pseudo-channel caps at that PC's 25.6 GB/s", () => {
    const machine = machineOf("default");
    const pes = machine.graph.pesOfCube(0, 0).map((pe) => pe.id);
    // 256 B rows every 4096 B: interleave 256 over 8 channels x 2 PCs puts all of them in ch0.pc0.
    const done = pes.map((pe, p) => {
      const tcm = encodeAddress({ sip: 0, cube: 0, space: "tcm", offset: p * 2 ** 28 });
      return machine.submit(pe, [
        {
          kind: "dma",
          src: hbm(p * 64 * 4096),
          dst: tcm,
          bytes: 256,
          rows: 64,
          srcStride: 4096,
          dstStride: 256,
        },
      ]);
    });
    machine.run(machine.env.allOf(done));
    const achieved = (pes.length * 64 * 256) / machine.env.now;
    expect(achieved).toBeLessThanOrEqual(25.6);
    expect(achieved).toBeGreaterThan(25.6 * 0.9);
    const hbmStats = machine
      .stats()
      .components.find((c) => c.kind === "hbm_ctrl" && c.id.startsWith("sip0.cube0"));
    expect(hbmStats?.bytes).toBe(pes.length * 64 * 256);
  });
});

describe("op-log hooks and determinism", () => {
  function runWorkload(logger: OpLogger | null, tracer: TraceRecorder | null) {
    const machine = machineOf("default", { opLogger: logger, tracer });
    const launch = machine.launch({
      pes: ["sip0.cube0.pe0", "sip0.cube0.pe5", "sip0.cube1.pe2"],
      program: (_pe, index) => [
        {
          kind: "composite_gemm",
          a: hbm(index * 4 * MIB),
          b: hbm(index * 4 * MIB + MIB),
          c: hbm(index * 4 * MIB + 2 * MIB),
          m: 128,
          n: 128,
          k: 256,
          dtype: "f16",
          epilogue: [{ op: "relu" }, { op: "mul", scalar: 0.5, scope: "k_tile" }],
        },
        {
          kind: "composite_math",
          op: "softmax",
          inputs: [hbm(index * 4 * MIB + 3 * MIB)],
          out: hbm(index * 4 * MIB + 3 * MIB + 65536),
          rows: 64,
          cols: 128,
          dtype: "f16",
        },
      ],
    });
    machine.run(launch);
    return machine;
  }

  it("records only data ops, from the engines that service them", () => {
    const sink = new MemorySink();
    // validate: every record is checked against @kb/oplog's OpRecord schema as it is started.
    const logger = new OpLogger(sink, { validate: true });
    runWorkload(logger, null);
    logger.close();
    const records = sink.records;
    const kinds = new Set(records.map((record) => record.component_id.split(".").at(-1)));
    expect([...kinds].sort()).toEqual(["pe_dma", "pe_fetch_store", "pe_gemm", "pe_math"]);
    // Per PE: GEMM 128x128x256 with 128^3 tiles = 2 K tiles: 2 x (2 dma_read + gemm + k_tile mul)
    // + output relu + cast + dma_write = 11; softmax 64 x 128 f16 in one tile: dma_read, softmax,
    // dma_write = 3. Three PEs: 42.
    expect(records).toHaveLength(42);
    expect(records.filter((record) => record.op_kind === "gemm")).toHaveLength(6);
  });

  it("two runs give identical statistics and traces", () => {
    const first = new TraceRecorder();
    const second = new TraceRecorder();
    const a = runWorkload(null, first);
    const b = runWorkload(null, second);
    expect(JSON.stringify(b.stats())).toBe(JSON.stringify(a.stats()));
    expect(JSON.stringify(second.toChromeTrace())).toBe(JSON.stringify(first.toChromeTrace()));
    expect(first.events.length).toBeGreaterThan(100);
  });
});

/** The op-log records of one command run alone on PE 0 of default.yaml (validated as logged). */
function recordsOf(command: PeCommand) {
  const sink = new MemorySink();
  const logger = new OpLogger(sink, { validate: true });
  const machine = machineOf("default", { opLogger: logger });
  machine.run(machine.submit("sip0.cube0.pe0", [command]));
  logger.close();
  return sink.records;
}

describe("composite GEMM with transposed operands", () => {
  it("reads the stored blocks of Aᵀ (k x m) and Bᵀ (n x k) and flags the GEMM transposed", () => {
    // C (6 x 10) = A (6 x 8) @ B (8 x 10), f16, tiles 4 x 4 x 4; A stored as Aᵀ (8 x 6), B as
    // Bᵀ (10 x 8). Tile 0 is (mi 0, ni 0, ki 0): m = n = k = 4.
    const records = recordsOf({
      kind: "composite_gemm",
      a: hbm(0),
      b: hbm(MIB),
      c: hbm(2 * MIB),
      m: 6,
      n: 10,
      k: 8,
      dtype: "f16",
      tile: { m: 4, n: 4, k: 4 },
      transposeA: true,
      transposeB: true,
    });
    const reads = records.filter((record) => record.op_name === "dma_read");
    // 2 x 3 output tiles x 2 K tiles, two reads each.
    expect(reads).toHaveLength(24);
    // Tile 0, A: rows ki*4 .. of Aᵀ = 4 rows of m = 4 elements (8 B), row stride M * 2 = 12 B.
    expect(reads[0]?.params).toMatchObject({ src_addr: hbm(0), nbytes: 32, rows: 4, src_stride: 12 });
    // Tile 0, B: rows ni*4 .. of Bᵀ = 4 rows of k = 4 elements (8 B), row stride K * 2 = 16 B.
    expect(reads[1]?.params).toMatchObject({ src_addr: hbm(MIB), nbytes: 32, rows: 4, src_stride: 16 });
    // Tile 1 (ki 1): Aᵀ rows 4..7 start at 4 * 6 * 2 = 48 B; Bᵀ columns 4..7 at 4 * 2 = 8 B.
    expect(reads[2]?.params).toMatchObject({ src_addr: hbm(48), rows: 4, src_stride: 12 });
    expect(reads[3]?.params).toMatchObject({ src_addr: hbm(MIB + 8), rows: 4, src_stride: 16 });
    const gemm = records.find((record) => record.op_kind === "gemm");
    expect(gemm?.params).toMatchObject({
      shape_a: [4, 4],
      shape_b: [4, 4],
      transpose_a: true,
      transpose_b: true,
    });
    // The last output tile (mi 1, ni 2): m = 2, n = 2; its first K tile reads Aᵀ[0..4, 4..6]
    // (4 rows of 2 elements at 4 * 2 = 8 B) and Bᵀ[8..10, 0..4] (2 rows of 4 at 8 * 8 * 2 = 128 B).
    expect(reads[20]?.params).toMatchObject({ src_addr: hbm(8), nbytes: 16, rows: 4, src_stride: 12 });
    expect(reads[21]?.params).toMatchObject({
      src_addr: hbm(MIB + 128),
      nbytes: 16,
      rows: 2,
      src_stride: 16,
    });
  });
});

describe("tile buffers", () => {
  it("start at multiples of 16 B whatever the tile sizes, so an f32 tile never lands misaligned", () => {
    // f32 inputs, f16 output, 1 x 1 x 2 tiles: A 8 B, B 8 B, C 2 B = 18 B a set before rounding,
    // so the second set would start 2 B past a multiple of 4. Rounded: 16 + 16 + 16 = 48 B.
    const records = recordsOf({
      kind: "composite_gemm",
      a: hbm(0),
      b: hbm(MIB),
      c: hbm(2 * MIB),
      m: 4,
      n: 1,
      k: 2,
      dtype: "f32",
      dtypeOut: "f16",
      tile: { m: 1, n: 1, k: 2 },
    });
    const gemms = records.filter((record) => record.op_kind === "gemm");
    expect(gemms).toHaveLength(4);
    const addresses = gemms.flatMap((record) => {
      const p = record.params as { src_a_addr: number; src_b_addr: number };
      return [p.src_a_addr, p.src_b_addr];
    });
    for (const address of addresses) expect(address % 16).toBe(0);
    // Consecutive sets 48 B apart: A of set 1 is 48 B after A of set 0.
    const [first, second] = gemms.map((record) => (record.params as { src_a_addr: number }).src_a_addr);
    expect(Math.abs((second as number) - (first as number)) % 48).toBe(0);
  });
});
