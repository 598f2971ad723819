import { MemorySink, OpLogger } from "@kb/oplog";
import { type DeviceTensor, Simulator } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TopologyInput } from "@kb/topology";
import { describe, expect, it } from "vitest";
import type { CclConfigInput } from "./config.js";
import { initProcessGroup, type ProcessGroup, type ProcessGroupOptions } from "./process-group.js";
import { phase2 } from "./test-support.js";

// End to end on the simulator: collectives launched by a process group run on the machine's
// inter-PE queues in phase 1; phase 2 replays the op log with real arithmetic, and the results
// are checked against a host reference. The inputs are small integers, so sums are exact in
// f16 and bf16 whatever order the ring adds them in.

/** A simulator recording its op log, and a process group on it. */
async function setUp(
  options: Omit<ProcessGroupOptions, "backend"> & { cclConfig?: CclConfigInput },
  topology: Partial<TopologyInput> = {},
): Promise<{ sim: Simulator; sink: MemorySink; pg: ProcessGroup }> {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(
    { name: "ccl-e2e", ...topology },
    { opLogger: new OpLogger(sink) },
  );
  return { sim, sink, pg: initProcessGroup(sim, { backend: "ahbm", ...options }) };
}

/** Rank `rank`'s input: small integers, different on every rank and element. */
function inputOf(rank: number, count: number, dtype: Dtype): Tensor {
  return Tensor.fromArray(
    Array.from({ length: count }, (_, i) => ((rank * 7 + i * 3) % 17) - 8),
    [count],
    dtype,
  );
}

/** Uploads every rank's input to the rank's memory (its SIP / cube). */
async function upload(sim: Simulator, pg: ProcessGroup, inputs: readonly Tensor[]): Promise<DeviceTensor[]> {
  const out: DeviceTensor[] = [];
  for (const [rank, tensor] of inputs.entries()) {
    const member = pg.group.members[rank] as number;
    const where = pg.scope === "sips" ? { sip: member } : pg.scope === "cubes" ? { cube: member } : {};
    out.push(await sim.toDevice(tensor, { ...where, name: `x${rank}` }));
  }
  return out;
}

const REDUCE = {
  sum: (a: number, b: number) => a + b,
  max: Math.max,
  min: Math.min,
} as const;

/** Every rank's expected all-reduce output. */
function allReduced(inputs: readonly Tensor[], op: keyof typeof REDUCE): Tensor {
  const first = inputs[0] as Tensor;
  const values = Array.from({ length: first.size }, (_, i) =>
    inputs.map((t) => t.getFlat(i)).reduce((a, b) => REDUCE[op](a, b)),
  );
  return Tensor.fromArray(values, first.shape, first.dtype);
}

describe("collectives on the simulator (IPCQ)", () => {
  for (const dtype of ["f32", "f16", "bf16"] as const) {
    for (const op of ["sum", "max", "min"] as const) {
      it(`ring all-reduce over the 8 PEs of a cube: ${op} in ${dtype}`, async () => {
        const { sim, sink, pg } = await setUp({
          scope: "pes",
          // Small slots: each segment moves as a stream of several pieces.
          cclConfig: { allReduce: [{ algorithm: "ring" }], defaults: { slotBytes: 128 } },
        });
        expect(pg.getWorldSize()).toBe(8);
        const inputs = Array.from({ length: 8 }, (_, rank) => inputOf(rank, 8 * 3 * 64 + 5, dtype));
        const tensors = await upload(sim, pg, inputs);
        const result = await pg.allReduce(tensors, op);
        expect(result).toMatchObject({ collective: "allReduce", algorithm: "ring", worldSize: 8 });
        expect(result.launch.pes).toBe(8);
        expect(result.launch.endNs).toBeGreaterThan(result.launch.startNs);
        const expected = allReduced(inputs, op);
        await phase2(
          sim,
          sink,
          tensors.map((t) => [t, expected]),
        );
        const sends = sink.records.filter((r) => r.op_name === "ipcq_send").length;
        // Every step, the 8 ranks send each of the 8 segments once, in pieces of one slot: 1541
        // elements are 5 segments of 193 and 3 of 192; 2 (n - 1) = 14 steps.
        const slot = 128 / (dtype === "f32" ? 4 : 2);
        const pieces = 5 * Math.ceil(193 / slot) + 3 * Math.ceil(192 / slot);
        expect(sends).toBe(14 * pieces);
      });
    }
  }

  it("tree all-reduce (the default for small messages) sums over the PEs of a cube", async () => {
    const { sim, sink, pg } = await setUp({ scope: "pes", cclConfig: { defaults: { slotBytes: 256 } } });
    const inputs = Array.from({ length: 8 }, (_, rank) => inputOf(rank, 1000, "f16"));
    const tensors = await upload(sim, pg, inputs);
    const result = await pg.allReduce(tensors, "sum");
    expect(result.algorithm).toBe("tree");
    await phase2(
      sim,
      sink,
      tensors.map((t) => [t, allReduced(inputs, "sum")]),
    );
  });

  it("reduce-scatter, all-gather and broadcast over the PEs of a cube", async () => {
    const { sim, sink, pg } = await setUp({ scope: "pes", cclConfig: { defaults: { slotBytes: 256 } } });
    const n = 8;
    const segment = 100;
    const inputs = Array.from({ length: n }, (_, rank) => inputOf(rank, n * segment, "f32"));
    const tensors = await upload(sim, pg, inputs);
    const outputs = Array.from({ length: n }, (_, rank) =>
      sim.empty([segment], "f32", { name: `rs${rank}` }),
    );
    await pg.reduceScatter(outputs, tensors, "sum");
    const reduced = allReduced(inputs, "sum");
    const segmentOf = (t: Tensor, k: number) =>
      Tensor.fromArray(
        Array.from({ length: segment }, (_, i) => t.getFlat(k * segment + i)),
        [segment],
        t.dtype,
      );
    // All-gather the reduced segments back into full buffers: an all-reduce in two collectives.
    const gathered = Array.from({ length: n }, (_, rank) =>
      sim.empty([n * segment], "f32", { name: `ag${rank}` }),
    );
    await pg.allGather(gathered, outputs);
    // Broadcast rank 3's original input.
    const copies = await upload(sim, pg, inputs);
    const result = await pg.broadcast(copies, 3);
    expect(result.algorithm).toBe("chain");
    // A broadcast computes nothing: its bytes are right already in phase 1.
    expect((await sim.fromDevice(copies[6] as DeviceTensor)).equals(inputs[3] as Tensor)).toBe(true);
    await phase2(sim, sink, [
      ...outputs.map((t, rank) => [t, segmentOf(reduced, rank)] as const),
      ...gathered.map((t) => [t, reduced] as const),
      ...copies.map((t) => [t, inputs[3] as Tensor] as const),
    ]);
  });

  it("ranks cubes with several PEs each (lanes), and the barrier", async () => {
    const { sim, sink, pg } = await setUp(
      { scope: "cubes", lanes: 4, cclConfig: { allReduce: [{ algorithm: "ring" }] } },
      { sip: { cubes: 4 } },
    );
    expect(pg.getWorldSize()).toBe(4);
    const inputs = Array.from({ length: 4 }, (_, rank) => inputOf(rank, 4 * 4 * 300, "bf16"));
    const tensors = await upload(sim, pg, inputs);
    const result = await pg.allReduce(tensors, "max");
    expect(result.launch.pes).toBe(16);
    const barrier = await pg.barrier();
    expect(barrier.launch.pes).toBe(4);
    await phase2(
      sim,
      sink,
      tensors.map((t) => [t, allReduced(inputs, "max")]),
    );
  });

  it("takes the slot size from the topology and holds with one-slot queues", async () => {
    for (const algorithm of ["ring", "tree"]) {
      const { sim, sink, pg } = await setUp(
        { scope: "pes", cclConfig: { allReduce: [{ algorithm }] } },
        { pe_template: { components: { pe_cpu: { params: { ipcq_slots: 1, ipcq_slot_bytes: 256 } } } } },
      );
      expect(pg.slotBytes).toBe(256);
      const inputs = Array.from({ length: 8 }, (_, rank) => inputOf(rank, 8 * 64 * 3, "f32"));
      const tensors = await upload(sim, pg, inputs);
      await pg.allReduce(tensors, "sum");
      await phase2(
        sim,
        sink,
        tensors.map((t) => [t, allReduced(inputs, "sum")]),
      );
    }
  });

  it("ring all-reduce in rounds when a segment does not fit the TCM scratch, 8 slots deep", async () => {
    // TCM of 1 MiB (scheduler) + 8 directions x 8 slots x 1 KiB (queues) + 40 KiB of scratch: a
    // segment of at most 38 KiB fits next to the kernel's 2 pieces, so 512 KiB f32 per rank on
    // 8 ranks (64 KiB segments) go in 2 rounds of 32 KiB segments.
    const { sim, sink, pg } = await setUp(
      { scope: "pes", cclConfig: { allReduce: [{ algorithm: "ring" }] } },
      {
        pe_template: {
          components: {
            pe_cpu: { params: { ipcq_slots: 8, ipcq_slot_bytes: 1024 } },
            pe_tcm: { params: { capacity_bytes: 2 ** 20 + 64 * 1024 + 40 * 1024 } },
          },
        },
      },
    );
    expect(pg.queueSlots).toBe(8);
    const inputs = Array.from({ length: 8 }, (_, rank) => inputOf(rank, 128 * 1024, "f32"));
    const tensors = await upload(sim, pg, inputs);
    await pg.allReduce(tensors, "sum");
    await phase2(
      sim,
      sink,
      tensors.map((t) => [t, allReduced(inputs, "sum")]),
    );
    // 2 rounds x 14 steps x 8 segments of 32 pieces of 1 KiB.
    expect(sink.records.filter((r) => r.op_name === "ipcq_send")).toHaveLength(2 * 14 * 8 * 32);
    // 7,168 sends take about 6 s of wall clock at load 1: more than vitest's 5 s default.
  }, 60_000);

  it("ranks SIPs (the default scope)", async () => {
    const { sim, sink, pg } = await setUp({ lanes: 2 }, { system: { sips: 2 } });
    expect(pg.getWorldSize()).toBe(2);
    const inputs = Array.from({ length: 2 }, (_, rank) => inputOf(rank, 3000, "f32"));
    const tensors = await upload(sim, pg, inputs);
    expect(tensors.map((t) => t.placement.sip)).toEqual([0, 1]);
    await pg.allReduce(tensors, "sum");
    await phase2(
      sim,
      sink,
      tensors.map((t) => [t, allReduced(inputs, "sum")]),
    );
  });
});
