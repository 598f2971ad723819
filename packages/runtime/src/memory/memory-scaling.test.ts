import { MemorySink, OpLogger } from "@kb/oplog";
import { SpillSink } from "@kb/oplog/node";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, replay, Simulator, verifyOutcome } from "../index.js";
import { loadSimulator } from "../node.js";
import { failure } from "../test-support.js";

// Memory that scales with what is live: freed tensors, bytes phase 1 does not know, host writes
// and the op log of a long run.

/** Bytes per page of `Simulator.memory` (16 KiB). */
const PAGE = 16384;

/** Each PE copies `rows` rows of `src` to `dst` through its TCM. */
async function copyRows(tl: TL, src: DeviceTensor, dst: DeviceTensor, rows: number) {
  const row = tl.programId(0) * rows;
  const cols = src.shape[1] as number;
  await tl.store(dst.at(row, 0), await tl.load(src.at(row, 0), [rows, cols], src.dtype));
}

/** Each PE writes exp of its rows of `src` to `dst`: values phase 1 does not know. */
async function expRows(tl: TL, src: DeviceTensor, dst: DeviceTensor, rows: number) {
  const row = tl.programId(0) * rows;
  const cols = src.shape[1] as number;
  await tl.store(dst.at(row, 0), await tl.exp(await tl.load(src.at(row, 0), [rows, cols], src.dtype)));
}

/** A simulator of the schema's default topology on Node (host writes spill to a temporary file). */
async function simulator(name: string, options: { hostWriteMemoryBytes?: number } = {}) {
  const sink = new MemorySink();
  const sim = await loadSimulator({ name }, { opLogger: new OpLogger(sink), ...options });
  return { sim, sink };
}

function floats(tensor: Tensor): number[] {
  return [...tensor.toFloat64Array()];
}

describe("freeing device tensors", () => {
  it("releases a tensor's bytes in both phases; its memory is reused and reads as zeros", async () => {
    const { sim, sink } = await simulator("free");
    const a = sim.random([64, 1024], "f32", { seed: 1 }); // 256 KiB: 4 pages of the store
    const A = await sim.toDevice(a, { name: "A" });
    const Y = sim.empty([64, 1024], "f32", { name: "Y" });
    await sim.launch(copyRows, { grid: { pes: 4 }, args: [A, Y, 16] });
    // Only A and Y hold pages: the launch's TCM scratch was released when it ended.
    const pages = sim.memory.pageCount;
    expect(pages).toBe((A.nbytes + Y.nbytes) / PAGE);
    sim.free(A);
    expect(sim.memory.pageCount).toBe(pages - A.nbytes / PAGE);
    const B = sim.empty([64, 1024], "f32", { name: "B" });
    expect(B.address).toBe(A.address);
    expect(floats(await sim.fromDevice(B)).every((value) => value === 0)).toBe(true);
    // Phase 2 forgets A's bytes where the host freed it: after Y got them, before B reads.
    const { store } = replay(sim.hostWrites, sink.records);
    expect(store.readTensor(Y.address, Y.shape, "f32").equals(a)).toBe(true);
    expect(store.touched(B.address, B.nbytes)).toBe(false);
    // The freed tensor itself is refused, naming where it was freed.
    const error = await failure(sim.fromDevice(A));
    expect(error.code).toBe("MEMORY_ACCESS");
    expect(error.message).toMatch(/was freed at \S*memory-scaling\.test\.ts:\d+:\d+/);
  });

  it("with { reuse: false } later tensors land, and take the time, as if it had lived", async () => {
    const run = async (free: "no" | "reuse" | "keep addresses") => {
      const { sim } = await simulator("sweep");
      const first = await sim.toDevice(sim.random([512, 512], "f32", { seed: 1 }));
      if (free === "reuse") sim.free(first);
      if (free === "keep addresses") sim.free(first, { reuse: false });
      const second = await sim.toDevice(sim.random([1024, 512], "f32", { seed: 2 }));
      return { address: second.address, now: sim.now, used: sim.device.stats()[0]?.used };
    };
    const lived = await run("no");
    expect(await run("keep addresses")).toEqual(lived); // the freed bytes stay out of reach
    expect((await run("reuse")).address).not.toBe(lived.address);
  });

  it("a checked output that was freed is a located error from verifyOutcome, not a FAIL", async () => {
    const { sim, sink } = await simulator("checked");
    const X = await sim.toDevice(sim.fromArray([1, 2, 3, 4], [1, 4], "f32"));
    const Y = sim.empty([1, 4], "f32", { name: "Y" });
    await sim.launch(copyRows, { grid: { pes: 1 }, args: [X, Y, 1] });
    sim.free(Y); // freed the output
    const outcome = { check: { Y: { actual: Y, reference: () => Tensor.zeros([1, 4], "f32") } } };
    const error = await failure(verifyOutcome(outcome, replay(sim.hostWrites, sink.records).store));
    expect(error.code).toBe("MEMORY_ACCESS");
    expect(error.message).toContain('check "Y": its output Y (f32 [1, 4] at 0x');
    expect(error.message).toMatch(/was freed at \S*memory-scaling\.test\.ts:\d+:\d+/);
  });
});

describe("bytes phase 1 does not know", () => {
  it("cost phase 1 no memory: a tensor overwritten with computed values drops its pages", async () => {
    const { sim, sink } = await simulator("pending");
    const x = sim.random([64, 1024], "f32", { seed: 3, low: -1, high: 1 });
    const X = await sim.toDevice(x, { name: "X" });
    const Y = await sim.toDevice(sim.zeros([64, 1024], "f32"), { name: "Y" }); // 4 pages written
    const pages = sim.memory.pageCount;
    await sim.launch(expRows, { grid: { pes: 4 }, args: [X, Y, 16] });
    // Y's 4 pages hold only values phase 1 does not know: gone (TCM tiles came and stay).
    expect(sim.memory.touched(Y.address, Y.nbytes)).toBe(false);
    expect(sim.memory.pageCount).toBeLessThanOrEqual(pages - Y.nbytes / PAGE + 8);
    expect((await sim.fromDevice(Y)).shape).toEqual([64, 1024]);
    const expected = Tensor.fromArray(floats(x).map(Math.exp), [64, 1024], "f32");
    const report = await verifyOutcome(
      { check: { Y: { actual: Y, reference: () => expected } } },
      replay(sim.hostWrites, sink.records).store,
    );
    expect(report.pass).toBe(true);
  });
});

describe("host writes and the op log on disk", () => {
  it("spilled host writes replay to the same bytes as host writes kept in memory", async () => {
    const results = [];
    for (const hostWriteMemoryBytes of [Number.POSITIVE_INFINITY, 0]) {
      const { sim, sink } = await simulator("spill", { hostWriteMemoryBytes });
      // 5 MiB: a spilled write is copied back in 4 MiB chunks.
      const X = await sim.toDevice(sim.random([2560, 512], "f32", { seed: 5 }));
      const Y = sim.empty([64, 512], "f32");
      await sim.launch(expRows, { grid: { pes: 4 }, args: [X, Y, 16] });
      await sim.copyToDevice(sim.random([2560, 512], "f32", { seed: 6 }), X);
      await sim.launch(copyRows, { grid: { pes: 4 }, args: [X, Y, 8] });
      // Spilled writes are read back from the file on each access: a new array every time.
      const first = sim.hostWrites[0];
      const [once, again] = [first?.bytes, first?.bytes];
      expect(once === again).toBe(hostWriteMemoryBytes > 0);
      const { store } = replay(sim.hostWrites, sink.records);
      const lastOfX = sim.hostWrites.filter((write) => write.address === X.address).at(-1);
      expect(store.read(X.address + X.nbytes - 8, 8)).toEqual(lastOfX?.bytes.subarray(-8));
      results.push({
        now: sim.now,
        writes: sim.hostWrites.map((write) => [write.address, write.atNs, [...write.bytes.subarray(0, 8)]]),
        y: [...store.read(Y.address, Y.nbytes)],
      });
    }
    expect(results[1]).toEqual(results[0]);
  });

  it("without a hostWriteFile (Simulator.fromTopology, any platform) every host write stays in memory", async () => {
    const sim = await Simulator.fromTopology({ name: "in-memory" }, { hostWriteMemoryBytes: 0 });
    const X = await sim.toDevice(sim.random([8, 8], "f32", { seed: 1 }));
    const first = sim.hostWrites[0];
    // Held writes are the same array on each read; spilled ones are read back anew each time.
    const [once, again] = [first?.bytes, first?.bytes];
    expect(once === again).toBe(true);
    expect(once?.length).toBe(X.nbytes);
  });

  it("refuses a hostWriteMemoryBytes that is not a number of bytes", async () => {
    const error = await failure(Simulator.fromTopology({ name: "bad" }, { hostWriteMemoryBytes: -1 }));
    expect(error.code).toBe("RUNTIME_INVALID");
    expect(error.message).toContain("hostWriteMemoryBytes must be a number of bytes >= 0");
  });

  it("an op log streamed to a temporary file replays to the same bytes as one kept in memory", async () => {
    const memory = new MemorySink();
    const spilled = new SpillSink({ memoryRecords: 0, chunkRecords: 3 });
    const logger = new OpLogger({
      write: (record) => {
        memory.write(record);
        spilled.write(record);
      },
      close: () => spilled.close(),
    });
    const sim = await Simulator.fromTopology({ name: "stream" }, { opLogger: logger });
    const X = await sim.toDevice(sim.random([64, 512], "f32", { seed: 7 }));
    const Y = sim.empty([64, 512], "f32");
    await sim.launch(expRows, { grid: { pes: 4 }, args: [X, Y, 16] });
    await sim.copyToDevice(sim.random([64, 512], "f32", { seed: 8 }), X);
    await sim.launch(expRows, { grid: { pes: 8 }, args: [X, Y, 8] });
    logger.close();
    try {
      expect(spilled.spilled).toBe(true);
      const inMemory = replay(sim.hostWrites, memory.records);
      const streamed = replay(sim.hostWrites, spilled.records());
      expect(streamed.stats.ops).toBe(memory.records.length);
      expect(streamed.stats.byName).toEqual(inMemory.stats.byName);
      expect(streamed.store.read(Y.address, Y.nbytes)).toEqual(inMemory.store.read(Y.address, Y.nbytes));
    } finally {
      spilled.dispose();
    }
  });
});
