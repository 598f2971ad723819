import { MemorySink, OpLogger } from "@kb/oplog";
import { type DeviceTensor, Simulator } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { TopologyInput } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { initProcessGroup, type ProcessGroup, type ProcessGroupOptions } from "./process-group.js";
import { phase2 } from "./test-support.js";

// All-to-all (and -v), reduce, gather, scatter and point-to-point on the simulator: phase 1 runs
// the kernels on the machine's queues, phase 2 replays the op log and every rank's result is
// checked against a host reference. Inputs are small integers: exact in every dtype.

async function setUp(
  options: Omit<ProcessGroupOptions, "backend">,
  topology: Partial<TopologyInput> = {},
): Promise<{ sim: Simulator; sink: MemorySink; pg: ProcessGroup }> {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(
    { name: "ccl-more", ...topology },
    { opLogger: new OpLogger(sink) },
  );
  return { sim, sink, pg: initProcessGroup(sim, { backend: "ahbm", ...options }) };
}

const valueAt = (rank: number, i: number) => ((rank * 5 + i * 3) % 15) - 7;

function inputOf(rank: number, count: number, dtype: Dtype): Tensor {
  return Tensor.fromArray(
    Array.from({ length: count }, (_, i) => valueAt(rank, i)),
    [count],
    dtype,
  );
}

/** Where rank `rank`'s tensors live. */
function placeOf(pg: ProcessGroup, rank: number): { sip?: number; cube?: number } {
  const member = pg.group.members[rank] as number;
  return pg.scope === "sips" ? { sip: member } : pg.scope === "cubes" ? { cube: member } : {};
}

async function up(sim: Simulator, pg: ProcessGroup, rank: number, tensor: Tensor, name: string) {
  return sim.toDevice(tensor, { ...placeOf(pg, rank), name });
}

const concat = (parts: readonly Tensor[], dtype: Dtype) =>
  Tensor.fromArray(
    parts.flatMap((t) => Array.from({ length: t.size }, (_, i) => t.getFlat(i))),
    [parts.reduce((sum, t) => sum + t.size, 0)],
    dtype,
  );
const slice = (t: Tensor, start: number, count: number) =>
  Tensor.fromArray(
    Array.from({ length: count }, (_, i) => t.getFlat(start + i)),
    [count],
    t.dtype,
  );

describe("allToAll on the simulator", () => {
  it("allToAllSingle over the 8 PEs of a cube: block d of rank s lands in block s of rank d", async () => {
    const { sim, sink, pg } = await setUp({ scope: "pes", cclConfig: { defaults: { slotBytes: 128 } } });
    const n = 8;
    const block = 37;
    const inputs = Array.from({ length: n }, (_, r) => inputOf(r, n * block, "f32"));
    const ins: DeviceTensor[] = [];
    const outs: DeviceTensor[] = [];
    for (let r = 0; r < n; r++) {
      ins.push(await up(sim, pg, r, inputs[r] as Tensor, `in${r}`));
      outs.push(sim.empty([n * block], "f32", { name: `out${r}` }));
    }
    const result = await pg.allToAllSingle(outs, ins);
    expect(result).toMatchObject({
      collective: "allToAll",
      algorithm: "ring",
      worldSize: 8,
      bytes: n * block * 4,
    });
    // Step s sends 7 - s blocks of 37 f32 (2 slots of 32 each): 28 blocks x 2 pieces per rank.
    expect(sink.records.filter((r) => r.op_name === "ipcq_send").length).toBe(8 * 28 * 2);
    await phase2(
      sim,
      sink,
      outs.map((out, d) => [
        out,
        concat(
          inputs.map((input) => slice(input, d * block, block)),
          "f32",
        ),
      ]),
    );
  });

  it("all-to-all-v over 4 cubes with 2 lanes each (one lane backwards), bf16 rows of 3", async () => {
    const { sim, sink, pg } = await setUp(
      { scope: "cubes", lanes: 2, cclConfig: { defaults: { slotBytes: 64 } } },
      { sip: { cubes: 4 } },
    );
    const n = 4;
    const row = 3;
    // inputSplitSizes[s][d]: rows rank s sends rank d (one pair sends nothing).
    const splits = [
      [1, 0, 7, 2],
      [3, 1, 1, 40],
      [0, 5, 2, 1],
      [9, 2, 0, 4],
    ];
    const rowsIn = splits.map((r) => r.reduce((a, b) => a + b, 0));
    const rowsOut = splits[0]?.map((_, d) =>
      splits.reduce((sum, r) => sum + (r[d] as number), 0),
    ) as number[];
    const inputs = rowsIn.map((rows, r) => inputOf(r, rows * row, "bf16").reshape([rows, row]));
    const ins: DeviceTensor[] = [];
    const outs: DeviceTensor[] = [];
    for (let r = 0; r < n; r++) {
      ins.push(await up(sim, pg, r, inputs[r] as Tensor, `in${r}`));
      outs.push(await up(sim, pg, r, Tensor.zeros([rowsOut[r] as number, row], "bf16"), `out${r}`));
    }
    await pg.allToAllSingle(outs, ins, undefined, splits);
    const expected = Array.from({ length: n }, (_, d) =>
      concat(
        inputs.map((input, s) => {
          const start = (splits[s] as number[]).slice(0, d).reduce((a, b) => a + b, 0) * row;
          return slice(input, start, (splits[s]?.[d] as number) * row);
        }),
        "bf16",
      ).reshape([rowsOut[d] as number, row]),
    );
    await phase2(
      sim,
      sink,
      outs.map((out, d) => [out, expected[d] as Tensor]),
    );
  });

  it("all-to-all-v in rounds: every rank takes as many rounds as the rank with the most to move", async () => {
    // 8 KiB of scratch per PE: two step buffers of at most ~960 f32. Rank 0 sends 3000 to rank 1
    // (4 rounds), the others a few elements each (1 round on their own).
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology(
      { name: "ccl-rounds" },
      { opLogger: new OpLogger(sink), scratchBytes: 8192 },
    );
    const pg = initProcessGroup(sim, {
      backend: "ahbm",
      scope: "pes",
      cclConfig: { defaults: { worldSize: 4, slotBytes: 256 } },
    });
    const splits = [
      [2, 3000, 1, 5],
      [4, 3, 2, 1],
      [1, 1, 1, 1],
      [0, 7, 3, 2],
    ];
    const n = 4;
    const rowsIn = splits.map((r) => r.reduce((a, b) => a + b, 0));
    const rowsOut = splits.map((_, d) => splits.reduce((sum, r) => sum + (r[d] as number), 0));
    const inputs = rowsIn.map((rows, r) => inputOf(r, rows, "f32"));
    const ins: DeviceTensor[] = [];
    const outs: DeviceTensor[] = [];
    for (let r = 0; r < n; r++) {
      ins.push(await sim.toDevice(inputs[r] as Tensor, { name: `in${r}` }));
      outs.push(sim.empty([rowsOut[r] as number], "f32", { name: `out${r}` }));
    }
    await pg.allToAllSingle(outs, ins, undefined, splits);
    const expected = outs.map((_, d) =>
      concat(
        inputs.map((input, s) => {
          const start = (splits[s] as number[]).slice(0, d).reduce((a, b) => a + b, 0);
          return slice(input, start, splits[s]?.[d] as number);
        }),
        "f32",
      ),
    );
    await phase2(
      sim,
      sink,
      outs.map((out, d) => [out, expected[d] as Tensor]),
    );
  });

  it("allToAll (list form) over 4 PEs", async () => {
    const { sim, sink, pg } = await setUp({ scope: "pes", cclConfig: { defaults: { worldSize: 4 } } });
    const n = 4;
    const inputs = Array.from({ length: n }, (_, s) =>
      Array.from({ length: n }, (_, d) => inputOf(s * n + d, 10, "f16")),
    );
    const ins = inputs.map((list, s) => list.map((t, d) => sim.toDevice(t, { name: `i${s}.${d}` })));
    const outs = inputs.map((list, d) => list.map((_, s) => sim.empty([10], "f16", { name: `o${d}.${s}` })));
    const resolved = await Promise.all(ins.map((list) => Promise.all(list)));
    await pg.allToAll(outs, resolved);
    await phase2(
      sim,
      sink,
      outs.flatMap((list, d) => list.map((out, s) => [out, inputs[s]?.[d] as Tensor] as const)),
    );
  });

  it("names the pair whose sizes disagree and the rank whose split sizes do not add up", async () => {
    const { sim, pg } = await setUp({ scope: "pes", cclConfig: { defaults: { worldSize: 2 } } });
    const a = sim.empty([4], "f32");
    const b = sim.empty([6], "f32");
    await expect(
      pg.allToAll(
        [
          [a, a],
          [a, a],
        ],
        [
          [a, b],
          [a, a],
        ],
      ),
    ).rejects.toThrow(
      /allToAll: rank 0 sends 6 x f32 to rank 1 \(inputs\[0\]\[1\]\), which expects 4 x f32 \(outputs\[1\]\[0\]\)/,
    );
    await expect(
      pg.allToAllSingle([a, b], [a, b], undefined, [
        [2, 2],
        [3, 2],
      ]),
    ).rejects.toThrow(/inputSplitSizes\[1\] adds up to 5 rows, but rank 1's tensor .* has 6/);
    await expect(pg.allToAllSingle([a, a], [a, b])).rejects.toThrow(
      /allToAllSingle input: rank 1 has 6 x f32/,
    );
  });
});

describe("reduce, gather and scatter on the simulator", () => {
  for (const [scope, lanes, topology] of [
    ["pes", undefined, {}],
    ["cubes", 3, { sip: { cubes: 4 } }],
  ] as const) {
    it(`over ${scope}${lanes ? ` with ${lanes} lanes` : ""}: root 2 gets the max, the gathered buffers; every rank its piece`, async () => {
      const { sim, sink, pg } = await setUp(
        { scope, ...(lanes !== undefined ? { lanes } : {}), cclConfig: { defaults: { slotBytes: 64 } } },
        topology,
      );
      const n = pg.getWorldSize();
      const count = 45;
      const inputs = Array.from({ length: n }, (_, r) => inputOf(r, count, "f32"));
      const reduced: DeviceTensor[] = [];
      const gathered: DeviceTensor[] = [];
      const scattered: DeviceTensor[] = [];
      const pieces: DeviceTensor[] = [];
      const lists: DeviceTensor[] = [];
      for (let r = 0; r < n; r++) {
        reduced.push(await up(sim, pg, r, inputs[r] as Tensor, `red${r}`));
        gathered.push(await up(sim, pg, r, inputs[r] as Tensor, `x${r}`));
        scattered.push(await up(sim, pg, r, Tensor.zeros([count], "f32"), `sc${r}`));
        pieces.push(await up(sim, pg, 2, inputOf(100 + r, count, "f32"), `piece${r}`));
        lists.push(await up(sim, pg, 2, Tensor.zeros([count], "f32"), `g${r}`));
      }
      expect((await pg.reduce(reduced, 2, "max")).algorithm).toBe("chain");
      await pg.gather(gathered, lists, 2);
      await pg.scatter(scattered, pieces, 2);
      const max = Tensor.fromArray(
        Array.from({ length: count }, (_, i) => Math.max(...inputs.map((t) => t.getFlat(i)))),
        [count],
        "f32",
      );
      await phase2(sim, sink, [
        ...reduced.map((t, r) => [t, r === 2 ? max : (inputs[r] as Tensor)] as const),
        ...lists.map((t, r) => [t, inputs[r] as Tensor] as const),
        ...scattered.map((t, r) => [t, inputOf(100 + r, count, "f32")] as const),
      ]);
    });
  }

  it("rejects a root that is not a rank and a gather list of the wrong size", async () => {
    const { sim, pg } = await setUp({ scope: "pes" });
    const xs = Array.from({ length: 8 }, () => sim.empty([4], "f32"));
    await expect(pg.reduce(xs, 8)).rejects.toThrow(/reduce: dst must be a rank 0\.\.7, got 8/);
    await expect(pg.scatter(xs, xs, -1)).rejects.toThrow(/scatter: src must be a rank 0\.\.7, got -1/);
    const big = Array.from({ length: 8 }, () => sim.empty([5], "f32"));
    await expect(pg.gather(xs, big, 0)).rejects.toThrow(
      /gather: each rank's gatherList entry must be the size and dtype of its tensor: got 5 x f32 and 4 x f32/,
    );
  });
});

describe("send, recv, isend, irecv and batchIsendIrecv", () => {
  it("moves a tensor 3 hops round the ring, and an exchange between neighbours in one launch", async () => {
    const { sim, sink, pg } = await setUp({ scope: "pes", cclConfig: { defaults: { slotBytes: 64 } } });
    const x = await up(sim, pg, 0, inputOf(1, 50, "f32"), "x");
    const y = sim.empty([50], "f32", { name: "y" });
    const pending = pg.irecv(y, 0, { rank: 3 });
    expect(pending.isCompleted()).toBe(false);
    const sent = await pg.send(x, 3);
    expect(pending.isCompleted()).toBe(true);
    expect((await pending.wait()).launch).toBe(sent.launch);
    // 50 f32 in 16-element chunks: 4 chunks, each sent by ranks 0, 1 and 2.
    expect(sink.records.filter((r) => r.op_name === "ipcq_send").length).toBe(12);
    const a = await up(sim, pg, 5, inputOf(2, 20, "bf16"), "a");
    const b = await up(sim, pg, 6, inputOf(3, 20, "bf16"), "b");
    const a2 = sim.empty([20], "bf16", { name: "a2" });
    const b2 = sim.empty([20], "bf16", { name: "b2" });
    const works = pg.batchIsendIrecv([
      { op: "isend", tensor: a, peer: 6, rank: 5 },
      { op: "irecv", tensor: b2, peer: 6, rank: 5 },
      { op: "isend", tensor: b, peer: 5, rank: 6 },
      { op: "irecv", tensor: a2, peer: 5, rank: 6 },
    ]);
    const results = await Promise.all(works.map((w) => w.wait()));
    expect(results.map((r) => r.transfers)).toEqual([2, 2, 2, 2]);
    await phase2(sim, sink, [
      [y, inputOf(1, 50, "f32")],
      [a2, inputOf(2, 20, "bf16")],
      [b2, inputOf(3, 20, "bf16")],
    ]);
  });

  it("a wait with no partner is a deadlock that says who waits on whom, and when", async () => {
    const { sim, pg } = await setUp({ scope: "pes" });
    const x = sim.empty([8], "f32");
    await expect(pg.recv(x, 4, { rank: 1 })).rejects.toThrow(
      /deadlock at simulated time 0 ns: rank 1's irecv of 8 x f32 from rank 4 waits for rank 4, which posted no matching isend to rank 1 \(tag 0\)/,
    );
    pg.isend(x, 2, { tag: 7 });
    await expect(pg.send(x, 3)).rejects.toThrow(
      /rank 0's isend of 8 x f32 to rank 3 waits for rank 3, .*Also unmatched: rank 1's irecv of 8 x f32 from rank 4; rank 0's isend of 8 x f32 to rank 2/,
    );
    expect(() => pg.isend(x, 9)).toThrow(/isend: dst must be a rank 0\.\.7, got 9/);
    expect(() => pg.irecv(x, 0)).toThrow(/irecv: rank 0 receives from itself/);
    const y = sim.empty([4], "f32");
    pg.irecv(y, 0, { rank: 5 });
    await expect(pg.send(x, 5)).rejects.toThrow(
      /rank 0's isend of 8 x f32 to rank 5 does not fit rank 5's irecv of 4 x f32 from rank 0/,
    );
  });
});
