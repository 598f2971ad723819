import { isKbError } from "@kb/errors";
import { commandList } from "@kb/tl";
import { describe, expect, it } from "vitest";
import type { Region } from "../kernel-support.js";
import { commandsOfRanks, ipcqCommands, type PeCommand, rankPlacement, runQueues } from "../queue-check.js";
import { cubeRing, peRing, type RankGroup, sipRing } from "../ranks.js";
import { buffersOf } from "../test-support.js";
import { chainBroadcast } from "./chain-broadcast.js";
import { ringAllGather } from "./ring-all-gather.js";
import { ringAllReduce } from "./ring-all-reduce.js";
import { ringBarrier } from "./ring-barrier.js";
import { ringReduceScatter } from "./ring-reduce-scatter.js";
import { treeAllReduce } from "./tree-all-reduce.js";

// Command-list mode: every rank's kernel runs without a machine, and the tests look at the IPCQ
// commands it issues. `runQueues` then plays all ranks' sends and receives against queues of a
// few slots: every receive must get a payload of the size it expects, nothing may be left over,
// and no set of ranks may wait on each other forever.

const F32_SLOT = 64; // 16 f32 elements per message

const sends = (commands: readonly PeCommand[]) =>
  ipcqCommands(commands).filter((c) => c.kind === "ipcq_send");
const recvs = (commands: readonly PeCommand[]) =>
  ipcqCommands(commands).filter((c) => c.kind === "ipcq_recv");
const mathOps = (commands: readonly PeCommand[], op: string) =>
  commands.filter((c) => c.kind === "math" && c.op === op).length;

/** Checks the lanes' programs against the queue model with 1, 2 and 4 slots; returns messages. */
function playAll(group: RankGroup, programs: PeCommand[][][]): number {
  let messages = 0;
  const lanes = (programs[0] as PeCommand[][]).length;
  for (const slots of [1, 2, 4]) {
    messages = 0;
    for (let lane = 0; lane < lanes; lane++) {
      const outcome = runQueues(
        group,
        programs.map((perLane) => ipcqCommands(perLane[lane] as PeCommand[])),
        slots,
      );
      if ("deadlock" in outcome) throw new Error(`deadlock with ${slots} slot(s): ${outcome.deadlock}`);
      messages += outcome.messages;
    }
  }
  return messages;
}

describe("the queue model of these tests", () => {
  it("finds a deadlock: every rank receives before it sends", () => {
    const group = sipRing(3);
    const program = (rank: number) =>
      [
        {
          kind: "ipcq_recv",
          direction: "sip_prev",
          bytes: 4,
          dtype: "f32",
          mode: "return_slot",
          dst: null,
          consume: true,
        },
        { kind: "ipcq_send", direction: "sip_next", src: rank, bytes: 4, dtype: "f32" },
      ] as const;
    expect(runQueues(group, [0, 1, 2].map(program), 4)).toEqual({
      deadlock: "rank 0: ipcq_recv sip_prev; rank 1: ipcq_recv sip_prev; rank 2: ipcq_recv sip_prev",
    });
  });
});

describe("ringAllReduce", () => {
  it("sends 2 (n - 1) x chunks messages per rank: 4 ranks, 2 chunks per segment", async () => {
    const group = sipRing(4);
    const buffers = buffersOf(group, 4 * 2 * 16); // 4 segments x 2 chunks x 16 elements
    const programs = await commandsOfRanks(
      ringAllReduce,
      { group, buffers, slotBytes: F32_SLOT, op: "sum" },
      group,
    );
    for (const [rank, [commands]] of programs.entries()) {
      const c = commands as PeCommand[];
      expect(sends(c), `rank ${rank}`).toHaveLength(2 * 3 * 2);
      expect(recvs(c)).toHaveLength(2 * 3 * 2);
      expect(new Set(sends(c).map((s) => s.direction))).toEqual(new Set(["sip_next"]));
      expect(new Set(recvs(c).map((r) => r.direction))).toEqual(new Set(["sip_prev"]));
      expect(new Set(ipcqCommands(c).map((m) => m.bytes))).toEqual(new Set([F32_SLOT]));
      // Payloads are copied out of their slots during the receive (recvToScratch).
      expect(recvs(c).every((r) => r.mode === "copy_to_dst" && r.dst !== null)).toBe(true);
      expect(mathOps(c, "add")).toBe(3 * 2); // one per reduce-scatter step and chunk
      // Loads: own data at the first and every later reduce-scatter step; stores: the reduced
      // segment and the n - 1 gathered ones, per chunk.
      const dmas = c.filter((m) => m.kind === "dma").length;
      expect(dmas).toBe(2 * (1 + 3) + 2 * (1 + 3));
    }
    expect(playAll(group, programs)).toBe(4 * 12);
  });

  it("reduces with maximum and minimum for max and min", async () => {
    const group = cubeRing(2);
    const buffers = buffersOf(group, 32);
    for (const [op, math] of [
      ["max", "maximum"],
      ["min", "minimum"],
    ] as const) {
      const programs = await commandsOfRanks(
        ringAllReduce,
        { group, buffers, slotBytes: F32_SLOT, op },
        group,
      );
      const commands = programs[0]?.[0] as PeCommand[];
      expect(mathOps(commands, math)).toBe(1);
      expect(mathOps(commands, "add")).toBe(0);
    }
  });

  it("follows the snake ring over the 2 x 4 PEs of a cube", async () => {
    const group = peRing(2, 4);
    expect(group.members).toEqual([0, 1, 2, 3, 7, 6, 5, 4]);
    const buffers = buffersOf(group, 8 * 16);
    const programs = await commandsOfRanks(
      ringAllReduce,
      { group, buffers, slotBytes: F32_SLOT, op: "sum" },
      group,
    );
    const direction = (rank: number, kind: string) =>
      new Set(
        ipcqCommands(programs[rank]?.[0] as PeCommand[])
          .filter((c) => c.kind === kind)
          .map((c) => c.direction),
      );
    expect(direction(0, "ipcq_send")).toEqual(new Set(["east"])); // pe0 -> pe1
    expect(direction(0, "ipcq_recv")).toEqual(new Set(["south"])); // from pe4
    expect(direction(3, "ipcq_send")).toEqual(new Set(["south"])); // pe3 -> pe7
    expect(direction(4, "ipcq_send")).toEqual(new Set(["west"])); // pe7 -> pe6
    expect(direction(7, "ipcq_send")).toEqual(new Set(["north"])); // pe4 -> pe0
    expect(playAll(group, programs)).toBe(8 * 2 * 7);
  });

  it("agrees on every message with uneven segments, empty ones and several lanes", async () => {
    for (const [n, count, slotBytes, lanes] of [
      [4, 10, F32_SLOT, 1],
      [3, 2, F32_SLOT, 1], // fewer elements than ranks: some segments are empty
      [5, 1000, 40, 1],
      [4, 333, F32_SLOT, 3],
    ] as const) {
      const group = cubeRing(n);
      const args = { group, buffers: buffersOf(group, count), slotBytes, op: "sum" as const };
      const programs = await commandsOfRanks(ringAllReduce, args, group, lanes);
      expect(playAll(group, programs), `n=${n} count=${count}`).toBeGreaterThan(0);
    }
  });

  it("keeps up to queueSlots / 2 pieces ahead and never deadlocks on queues of that many slots", async () => {
    // The streaming ring kernels (all-reduce, reduce-scatter, all-gather) share RingStream; counts
    // divide into n segments for the latter two.
    for (const kernel of [ringAllReduce, ringReduceScatter, ringAllGather] as const) {
      for (const [n, count] of [
        [2, 40 * 16],
        [3, 3 * (7 * 16 + 5)],
        [4, 4 * 9 * 16],
        [9, 9 * (5 * 16 + 7)],
      ] as const) {
        const group = sipRing(n);
        for (const queueSlots of [1, 2, 3, 4, 8]) {
          const args = {
            group,
            buffers: buffersOf(group, count),
            slotBytes: F32_SLOT,
            op: "sum" as const,
            queueSlots,
          };
          const programs = await commandsOfRanks(kernel as typeof ringAllReduce, args, group);
          const outcome = runQueues(
            group,
            programs.map(([commands]) => ipcqCommands(commands as PeCommand[])),
            queueSlots,
          );
          expect(outcome, `${kernel.name} n=${n} count=${count} slots=${queueSlots}`).toHaveProperty(
            "messages",
          );
        }
      }
    }
    // 4 ranks, 9 pieces per segment, 4 slots: the first receive comes after 2 + 1 sends.
    const group = sipRing(4);
    const args = { group, buffers: buffersOf(group, 4 * 9 * 16), slotBytes: F32_SLOT, op: "sum" as const };
    const order = async (queueSlots?: number) => {
      const programs = await commandsOfRanks(
        ringAllReduce,
        queueSlots === undefined ? args : { ...args, queueSlots },
        group,
      );
      return ipcqCommands(programs[0]?.[0] as PeCommand[])
        .map((c) => (c.kind === "ipcq_send" ? "S" : "R"))
        .join("");
    };
    expect((await order(4)).slice(0, 8)).toBe("SSSRSRSR");
    // Without queueSlots a rank sends one piece, then waits for one.
    expect((await order()).slice(0, 6)).toBe("SRSRSR");
    await expect(commandsOfRanks(ringAllReduce, { ...args, queueSlots: 0 }, group)).rejects.toThrow(
      /queueSlots must be a whole number >= 1 \(pe_cpu ipcq_slots\), got 0/,
    );
  });

  it("sends odd lanes round the ring the other way", async () => {
    const group = cubeRing(4);
    const args = { group, buffers: buffersOf(group, 4 * 4 * 16), slotBytes: F32_SLOT, op: "sum" as const };
    const programs = await commandsOfRanks(ringAllReduce, args, group, 2);
    const directions = (lane: number, kind: string) =>
      new Set(
        ipcqCommands(programs[1]?.[lane] as PeCommand[])
          .filter((c) => c.kind === kind)
          .map((c) => c.direction),
      );
    expect(directions(0, "ipcq_send")).toEqual(new Set(["cube_next"]));
    expect(directions(1, "ipcq_send")).toEqual(new Set(["cube_prev"]));
    expect(directions(1, "ipcq_recv")).toEqual(new Set(["cube_next"]));
    playAll(group, programs);
  });

  it("does nothing on one rank", async () => {
    const group = sipRing(1);
    const programs = await commandsOfRanks(
      ringAllReduce,
      { group, buffers: buffersOf(group, 64), slotBytes: F32_SLOT, op: "sum" },
      group,
    );
    expect(programs[0]?.[0]).toEqual([]);
  });

  it("runs in rounds when a segment does not fit its TCM scratch", async () => {
    const group = sipRing(8);
    const args = { group, buffers: buffersOf(group, 8 * 4 * 4096), slotBytes: 16384, op: "sum" as const };
    const run = (bytes: number) =>
      commandList(ringAllReduce, [args], {
        kernel: "ringAllReduce",
        placement: rankPlacement(group, 3),
        scratch: { offset: 2 ** 20, bytes },
      });
    // Segments of 4 x 4096 f32 (64 KiB) and 2 pieces of 16 KiB fit 96 KiB: one round, 4 pieces
    // per step, 14 steps.
    expect(sends(await run(96 * 1024 + 16))).toHaveLength(14 * 4);
    // 64 KiB leaves room for a segment of 8192 elements besides the 2 pieces: 131072 elements
    // go in 2 rounds of 65536, segments of 8192 (2 pieces each).
    expect(sends(await run(64 * 1024))).toHaveLength(2 * 14 * 2);
    // 1 KiB less: 3 rounds of 43691 or 43690 elements, segments of at most 5462 (2 pieces each).
    expect(sends(await run(63 * 1024))).toHaveLength(3 * 14 * 2);
    await expect(run(2 * 16384)).rejects.toThrow(
      /needs TCM scratch for 3 messages of 4096 elements, but 32768 bytes are free/,
    );
  });

  it("checks its arguments", async () => {
    const group = sipRing(4);
    const run = (args: Record<string, unknown>) =>
      commandList(
        ringAllReduce,
        [{ group, buffers: buffersOf(group, 64), slotBytes: F32_SLOT, op: "sum", ...args }],
        {
          kernel: "ringAllReduce",
          placement: rankPlacement(group, 0),
          scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
        },
      );
    await expect(run({ buffers: buffersOf(group, 64).slice(1) })).rejects.toThrow(
      /one buffer per rank \(4\)/,
    );
    await expect(run({ buffers: buffersOf(group, 64, "i32") })).rejects.toThrow(/dtype i32 is not supported/);
    await expect(run({ op: "prod" })).rejects.toThrow(/unknown reduction "prod"/);
    const other: Region[] = buffersOf(group, 64);
    other[2] = { ...(other[2] as Region), count: 63 };
    await expect(run({ buffers: other })).rejects.toThrow(/rank 2 has 63 x f32/);
    const error = await commandList(
      ringAllReduce,
      [{ group: peRing(2, 4), buffers: [], slotBytes: 64, op: "sum" }],
      {
        kernel: "ringAllReduce",
        placement: { ...rankPlacement(group, 0), pe: "sip0.cube0.pe0", peIndex: 9 },
        scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
      },
    ).catch((e: unknown) => e);
    expect(isKbError(error, "RUNTIME_INVALID")).toBe(true);
    expect(String(error)).toMatch(/sip0.cube0.pe0 is not in the 8-rank group over the 2 x 4 PE grid/);
  });
});

describe("treeAllReduce", () => {
  it("sends one message per chunk from a leaf and two from the others, 2 (n - 1) in all", async () => {
    const group = sipRing(8);
    const buffers = buffersOf(group, 2 * 16); // 2 chunks
    const programs = await commandsOfRanks(
      treeAllReduce,
      { group, buffers, slotBytes: F32_SLOT, op: "sum" },
      group,
    );
    const counts = programs.map(([commands]) => sends(commands as PeCommand[]).length);
    // Root 0; branch 1-2-3-4 (sip_next-wards) and 7-6-5 (sip_prev-wards); leaves 4 and 5.
    expect(counts).toEqual([4, 4, 4, 4, 2, 2, 4, 4]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(2 * 7 * 2);
    expect(sends(programs[1]?.[0] as PeCommand[]).map((s) => s.direction)).toEqual([
      "sip_prev", // chunk 0 up to the root
      "sip_prev", // chunk 1 up
      "sip_next", // result chunk 0 down to rank 2
      "sip_next", // result chunk 1 down
    ]);
    expect(mathOps(programs[0]?.[0] as PeCommand[], "add")).toBe(2 * 2); // root: two children
    expect(mathOps(programs[4]?.[0] as PeCommand[], "add")).toBe(0); // leaf
    expect(playAll(group, programs)).toBe(28);
  });

  it("pipelines: a rank at depth k receives result chunk i after reducing chunk i + 2k", async () => {
    const group = sipRing(8);
    const programs = await commandsOfRanks(
      treeAllReduce,
      { group, buffers: buffersOf(group, 10 * 16), slotBytes: F32_SLOT, op: "sum" },
      group,
    );
    // Rank 2 (depth 2): up is sip_prev, results come from sip_prev too; reductions from sip_next.
    const order = ipcqCommands(programs[2]?.[0] as PeCommand[])
      .filter((c) => c.kind === "ipcq_send" && c.direction === "sip_prev")
      .map(() => "up");
    expect(order).toHaveLength(10);
    const sequence = ipcqCommands(programs[2]?.[0] as PeCommand[]).map((c) =>
      c.kind === "ipcq_send"
        ? c.direction === "sip_prev"
          ? "U"
          : "D"
        : c.direction === "sip_next"
          ? "c"
          : "r",
    );
    // c: from the child, U: up, r: result from the parent, D: result down. First result after 4 chunks.
    expect(sequence.join("").slice(0, 16)).toBe("cUcUcUcUcUrDcUrD");
  });

  it("works for every ring size up to 9 and uneven chunks", async () => {
    for (let n = 2; n <= 9; n++) {
      const group = cubeRing(n);
      const programs = await commandsOfRanks(
        treeAllReduce,
        { group, buffers: buffersOf(group, 7 * 16 + 3), slotBytes: F32_SLOT, op: "max" },
        group,
      );
      expect(playAll(group, programs), `n=${n}`).toBe(2 * (n - 1) * 8);
    }
  });
});

describe("ringReduceScatter and ringAllGather", () => {
  it("send (n - 1) x chunks messages per rank", async () => {
    const group = sipRing(4);
    const buffers = buffersOf(group, 4 * 2 * 16);
    const args = { group, buffers, slotBytes: F32_SLOT, op: "sum" as const };
    for (const programs of [
      await commandsOfRanks(ringReduceScatter, args, group),
      await commandsOfRanks(ringAllGather, args, group),
    ]) {
      for (const [commands] of programs) {
        expect(sends(commands as PeCommand[])).toHaveLength(3 * 2);
        expect(recvs(commands as PeCommand[])).toHaveLength(3 * 2);
      }
      expect(playAll(group, programs)).toBe(4 * 6);
    }
  });

  it("reduce-scatter adds n - 1 times per chunk and stores into the output region", async () => {
    const group = cubeRing(4);
    const buffers = buffersOf(group, 4 * 16);
    const outputs = buffersOf(group, 16, "f32", 2 ** 21);
    const programs = await commandsOfRanks(
      ringReduceScatter,
      { group, buffers, outputs, slotBytes: F32_SLOT, op: "sum" },
      group,
    );
    const rank1 = programs[1]?.[0] as PeCommand[];
    expect(mathOps(rank1, "add")).toBe(3);
    const stores = rank1.filter((c) => c.kind === "dma" && c.dst === (outputs[1] as Region).address);
    expect(stores).toHaveLength(1);
  });

  it("all-gather copies its input into its own segment first", async () => {
    const group = cubeRing(4);
    const buffers = buffersOf(group, 4 * 16);
    const inputs = buffersOf(group, 16, "f32", 2 ** 21);
    const programs = await commandsOfRanks(
      ringAllGather,
      { group, buffers, inputs, slotBytes: F32_SLOT },
      group,
    );
    const rank2 = programs[2]?.[0] as PeCommand[];
    const [load, store] = rank2.filter((c) => c.kind === "dma");
    expect(load).toMatchObject({ src: (inputs[2] as Region).address });
    expect(store).toMatchObject({ dst: (buffers[2] as Region).address + 2 * 16 * 4 });
    expect(playAll(group, programs)).toBe(4 * 3);
  });

  it("need a count that cuts into one segment per rank", async () => {
    const group = cubeRing(4);
    await expect(
      commandList(ringAllGather, [{ group, buffers: buffersOf(group, 10), slotBytes: F32_SLOT }], {
        kernel: "ringAllGather",
        placement: rankPlacement(group, 0),
        scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
      }),
    ).rejects.toThrow(/does not cut into 4 equal segments/);
  });
});

describe("chainBroadcast", () => {
  it("sends chunks down the chain from the root; the rank before the root only receives", async () => {
    const group = sipRing(4);
    const programs = await commandsOfRanks(
      chainBroadcast,
      { group, buffers: buffersOf(group, 3 * 16), slotBytes: F32_SLOT, root: 2 },
      group,
    );
    const counts = programs.map(([c]) => [sends(c as PeCommand[]).length, recvs(c as PeCommand[]).length]);
    expect(counts).toEqual([
      [3, 3],
      [0, 3], // the end of the chain 2 -> 3 -> 0 -> 1
      [3, 0], // the root
      [3, 3],
    ]);
    expect(playAll(group, programs)).toBe(9);
  });
});

describe("ringBarrier", () => {
  it("passes a token twice round the ring", async () => {
    const group = peRing(2, 4);
    const programs = await commandsOfRanks(ringBarrier, { group }, group);
    const counts = programs.map(([c]) => [sends(c as PeCommand[]).length, recvs(c as PeCommand[]).length]);
    expect(counts).toEqual([
      [2, 1],
      [2, 2],
      [2, 2],
      [2, 2],
      [2, 2],
      [2, 2],
      [2, 2],
      [1, 2],
    ]);
    expect(playAll(group, programs)).toBe(15);
  });
});
