import { readFileSync } from "node:fs";
import { MemorySink, OpLogger } from "@kb/oplog";
import { type DeviceTensor, replay, Simulator, verifyOutcome } from "@kb/runtime";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import {
  type AllReduceArgs,
  bufferOf,
  chunkCount,
  combine,
  commandsOfRanks,
  defaultAlgorithms,
  elementAddress,
  initProcessGroup,
  ipcqCommands,
  laneOf,
  parseCclConfig,
  rankOf,
  recvToScratch,
  ringAllReduce,
  runQueues,
  sipRing,
  split,
} from "./index.js";
import { buffersOf } from "./test-support.js";

// The custom algorithm of docs/ccl-author-guide.md section 5, registered and selected as the
// guide shows.

/** Both ranks send their chunk to each other and add what they receive (a + b == b + a). */
async function pairAllReduce(tl: TL, args: AllReduceArgs): Promise<void> {
  const { group, op } = args;
  const rank = rankOf(tl, group);
  const buffer = bufferOf(tl, args, rank);
  if (group.size === 1) return;
  const { lane, lanes } = laneOf(tl, group);
  const mine = split(buffer.count, lanes, lane);
  const chunks = chunkCount(mine.count, args.slotBytes, buffer.dtype);
  for (let chunk = 0; chunk < chunks; chunk++) {
    const cut = split(mine.count, chunks, chunk);
    if (cut.count === 0) continue;
    const mark = tl.scratchMark();
    const address = elementAddress(buffer, mine.start + cut.start);
    const own = await tl.load(address, [cut.count], buffer.dtype);
    await tl.send(group.next[rank] as string, own);
    const other = await recvToScratch(tl, group.prev[rank] as string, cut.count, buffer.dtype);
    await tl.store(address, await combine(tl, op, own, other));
    tl.scratchRelease(mark);
  }
}

const registry = defaultAlgorithms().register({
  name: "acme:pair",
  collective: "allReduce",
  description: "one-hop exchange for two ranks",
  kernel: pairAllReduce,
  worldSize: () => 2,
});
const config = parseCclConfig(
  `allReduce:
  - { maxBytes: 1048576, algorithm: "acme:pair" }
  - { algorithm: ring }
`,
  "ccl.yaml",
  { registry },
);

describe("the author guide's pair all-reduce", () => {
  it("sends one message per chunk each way and never waits in a circle", async () => {
    const group = sipRing(2);
    const args = { group, buffers: buffersOf(group, 3 * 16), slotBytes: 64, op: "sum" as const };
    const programs = await commandsOfRanks(pairAllReduce, args, group);
    for (const [commands] of programs) {
      expect(ipcqCommands(commands ?? []).map((c) => c.kind)).toEqual([
        ...["ipcq_send", "ipcq_recv"],
        ...["ipcq_send", "ipcq_recv"],
        ...["ipcq_send", "ipcq_recv"],
      ]);
    }
    for (const slots of [1, 4]) {
      expect(
        runQueues(
          group,
          programs.map(([commands]) => ipcqCommands(commands ?? [])),
          slots,
        ),
      ).toEqual({
        messages: 6,
      });
    }
  });

  it("is chosen on two ranks and skipped for the ring on four", async () => {
    const two = await Simulator.fromTopology({ name: "two", system: { sips: 2 } });
    expect(
      initProcessGroup(two, { backend: "ahbm", registry, cclConfig: config }).algorithmFor("allReduce", 64)
        .name,
    ).toBe("acme:pair");
    const four = await Simulator.fromTopology({ name: "four", system: { sips: 4 } });
    expect(
      initProcessGroup(four, { backend: "ahbm", registry, cclConfig: config }).algorithmFor("allReduce", 64)
        .name,
    ).toBe("ring");
  });

  it("all-reduces over two SIPs on the simulator", async () => {
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology(
      { name: "pair", system: { sips: 2 } },
      { opLogger: new OpLogger(sink) },
    );
    const pg = initProcessGroup(sim, { backend: "ahbm", registry, cclConfig: config });
    const inputs = [0, 1].map((rank) =>
      Tensor.fromArray(
        Array.from({ length: 5000 }, (_, i) => ((i + rank * 5) % 9) - 4),
        [5000],
        "bf16",
      ),
    );
    const tensors: DeviceTensor[] = [];
    for (const [rank, input] of inputs.entries())
      tensors.push(await sim.toDevice(input, { sip: rank, name: `x${rank}` }));
    const result = await pg.allReduce(tensors, "sum");
    expect(result.algorithm).toBe("acme:pair");
    const expected = Tensor.fromArray(
      Array.from(
        { length: 5000 },
        (_, i) => (inputs[0] as Tensor).getFlat(i) + (inputs[1] as Tensor).getFlat(i),
      ),
      [5000],
      "bf16",
    );
    const { store } = replay(sim.hostWrites, sink.records);
    const report = await verifyOutcome(
      { check: Object.fromEntries(tensors.map((t) => [t.name, { actual: t, reference: () => expected }])) },
      store,
    );
    expect(report.pass).toBe(true);
  });
});

const guide = readFileSync(new URL("../../../docs/ccl-author-guide.md", import.meta.url), "utf8");
/** The first ```ts block after `heading` in the guide. */
const codeAfter = (heading: string): string => {
  const at = guide.indexOf(heading);
  const start = guide.indexOf("```ts\n", at) + "```ts\n".length;
  return guide.slice(start, guide.indexOf("```\n", start));
};

describe("the author guide's ring all-reduce", () => {
  it("is the code of packages/ccl/src/algorithms/ring-all-reduce.ts", () => {
    const source = readFileSync(new URL("./algorithms/ring-all-reduce.ts", import.meta.url), "utf8");
    const shown = codeAfter("**Keeping the data in TCM.**");
    expect(shown.startsWith("export async function ringAllReduce")).toBe(true);
    expect(source.endsWith(shown)).toBe(true);
    const stream = readFileSync(new URL("./algorithms/ring-stream.ts", import.meta.url), "utf8");
    const step = codeAfter("**Keeping the link busy.**");
    expect(step.startsWith("  async step(")).toBe(true);
    expect(stream).toContain(step);
  });

  it("passes the command-list test of section 4", async () => {
    // Section 4's example, as written there.
    const group = sipRing(4);
    const buffers = group.members.map((sip) => ({
      address: encodeAddress({ sip, cube: 0, space: "hbm", offset: 0 }),
      count: 4 * 2 * 16,
      dtype: "f32" as const,
    }));
    const args = { group, buffers, slotBytes: 64, op: "sum" as const };
    for (const queueSlots of [1, 2, 4]) {
      const programs = await commandsOfRanks(ringAllReduce, { ...args, queueSlots }, group);
      for (const [commands = []] of programs) {
        const sends = ipcqCommands(commands).filter((c) => c.kind === "ipcq_send");
        expect(sends).toHaveLength(2 * 3 * 2);
      }
      const outcome = runQueues(
        group,
        programs.map(([commands = []]) => ipcqCommands(commands)),
        queueSlots,
      );
      expect(outcome).toEqual({ messages: 4 * 12 });
    }
    expect(codeAfter("## 4. Testing an algorithm")).toContain("for (const queueSlots of [1, 2, 4]) {");
  });
});
