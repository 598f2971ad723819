import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { KbPlugin } from "@kb/components";
import { MemorySink, OpLogger } from "@kb/oplog";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  type DeviceTensor,
  defineBench,
  parseBenchParams,
  RunResultsSchema,
  replay,
  Simulator,
} from "./index.js";
import { loadSimulator } from "./node.js";
import { failure, thrown } from "./test-support.js";

const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
const thisFile = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");

/** `simulator.test.ts:LINE:` of the line of this file that ends with the comment `marker`. */
function lineOf(marker: string): RegExp {
  const index = thisFile.findIndex((line) => line.trimEnd().endsWith(`// ${marker}`));
  if (index < 0) throw new Error(`no line ends with // ${marker}`);
  return new RegExp(`simulator\\.test\\.ts:${index + 1}:\\d+`);
}

async function copyKernel(tl: TL, src: DeviceTensor, dst: DeviceTensor, rows: number) {
  const r0 = tl.programId(0) * rows;
  const tile = await tl.load(src.at(r0, 0), [rows, src.shape[1] as number], src.dtype);
  await tl.store(dst.at(r0, 0), tile);
}

describe("Simulator.fromTopology, the main entry's (no files, no package names)", () => {
  it("builds from YAML text the machine loadSimulator builds from the file", async () => {
    const fromText = await Simulator.fromTopology(readFileSync(defaultYaml, "utf8"));
    const fromFile = await loadSimulator(defaultYaml);
    expect(fromText.topologyName).toBe("default");
    expect(fromText.machine.graph.nodes.length).toBe(fromFile.machine.graph.nodes.length);
    const host = fromText.random([256, 128], "bf16", { seed: 7 });
    await fromText.toDevice(host);
    await fromFile.toDevice(host);
    expect(fromText.now).toBe(fromFile.now);
  });

  it("refuses a file path and a plug-in name, pointing at loadSimulator of @kb/runtime/node", async () => {
    const path = await failure(Simulator.fromTopology("topologies/default.yaml"));
    expect(path.code).toBe("RUNTIME_INVALID");
    expect(path.message).toContain('"topologies/default.yaml" looks like a file path');
    expect(path.message).toContain("loadSimulator of @kb/runtime/node");
    const named = await failure(
      Simulator.fromTopology({ name: "t" }, { plugins: ["kb-plugin-x"] as unknown as KbPlugin[] }),
    );
    expect(named.code).toBe("RUNTIME_INVALID");
    expect(named.message).toContain('plug-ins by package name ("kb-plugin-x")');
  });
});

describe("Simulator", () => {
  it("host copies are timed and round-trip the bytes; device tensors are page-aligned in their cube", async () => {
    const sim = await loadSimulator(defaultYaml);
    const host = sim.random([256, 128], "bf16", { seed: 7 });
    const A = await sim.toDevice(host, { cube: 1, name: "A" });
    const afterWrite = sim.now;
    expect(afterWrite).toBeGreaterThan(0);
    // 64 KiB over the 64 GB/s host link alone takes 1024 ns.
    expect(afterWrite).toBeGreaterThan(65536 / 64);
    expect(A.placement).toEqual({ sip: 0, cube: 1, space: "hbm" });
    expect(A.address % (2 * 2 ** 20)).toBe(0);
    const back = await sim.fromDevice(A);
    expect(sim.now).toBeGreaterThan(afterWrite);
    expect(back.equals(host)).toBe(true);
    expect(sim.hostWrites).toHaveLength(1);
  });

  it("launch runs one kernel instance per grid PE with program ids from the grid, and moves real bytes", async () => {
    const sim = await loadSimulator(defaultYaml);
    const x = sim.random([64, 32], "f32", { seed: 3 });
    const X = await sim.toDevice(x);
    const Y = sim.empty([64, 32], "f32");
    const grid = sim.grid({ pes: 8, cubes: [0] });
    expect(grid.size).toBe(8);
    const record = await sim.launch(copyKernel, { grid, args: [X, Y, 8] });
    expect(record).toMatchObject({ name: "copyKernel", pes: 8 });
    expect(record.endNs).toBeGreaterThan(record.startNs);
    expect((await sim.fromDevice(Y)).equals(x)).toBe(true);
    // Scratch is returned after the launch: a second launch fits again.
    await sim.launch(copyKernel, { grid, args: [X, Y, 8] });
    expect(sim.kernels.names()).toEqual(["copyKernel"]);
  });

  it("results: parse with the published schema, count 2 m n k per GEMM and never beat the roofline", async () => {
    const sim = await loadSimulator(defaultYaml);
    const A = await sim.toDevice(sim.random([128, 128], "f16", { seed: 1 }));
    async function dotKernel(tl: TL, a: DeviceTensor) {
      const t = await tl.load(a, [128, 128], "f16");
      await tl.dot(t, t);
    }
    await sim.launch(dotKernel, { grid: { pes: 1, cubes: 1 }, args: [A] });
    const results = RunResultsSchema.parse(sim.results("dot", { n: 128 }));
    expect(results.work.gemmFlops).toBe(2 * 128 ** 3);
    // One PE_GEMM ran: 32 x 32 MACs x 2 flops at 1 GHz, at its fastest dtype (i8: 0.5 cycles per
    // MAC step) = 4096 GFLOP/s: a peak no dtype exceeds, so the roofline stays a true bound.
    expect(results.peak.gemmFlopsPerS).toBe(4096e9);
    // default.yaml's pe_gemm_v1 charges 4 x 4 x 128 + 8 = 2056 cycles on its 32 x 32 array.
    expect(results.achieved.gemmArrayUtilisation).toBeCloseTo(128 ** 3 / (2056 * 32 * 32), 12);
    expect(results.rooflineNs).toBeGreaterThan(0);
    expect(results.simTimeNs).toBeGreaterThanOrEqual(results.rooflineNs);
    expect(results.launches).toHaveLength(1);
    // The launch alone: its GEMM and its HBM read of the one 32 KiB tile, on one PE.
    const [launch] = results.launches;
    expect(launch?.gemmFlops).toBe(2 * 128 ** 3);
    expect(launch?.hbmBytes).toBe(128 * 128 * 2);
    expect((launch?.endNs ?? 0) - (launch?.startNs ?? 0)).toBeGreaterThanOrEqual(
      launch?.rooflineNs ?? Infinity,
    );
    expect(results.busiest.length).toBeGreaterThan(0);
  });

  it("an access outside an allocation is a located MEMORY_ACCESS error; the simulator then refuses more work", async () => {
    const sim = await loadSimulator(defaultYaml);
    const X = sim.empty([16, 16], "f32", { name: "X" });
    async function overrun(tl: TL, x: DeviceTensor) {
      await tl.load(x, [32, 16], "f32");
    }
    const error = await failure(sim.launch(overrun, { grid: { pes: [2], cubes: [0] }, args: [X] }));
    expect(error.code).toBe("MEMORY_ACCESS");
    expect(error.message).toMatch(/kernel overrun on sip0\.cube0\.pe2/);
    const again = await failure(sim.launch(overrun, { grid: { pes: [2], cubes: [0] }, args: [X] }));
    expect(again.message).toMatch(/stopped at an error earlier/);
  });

  it("grid errors and double frees are clear", async () => {
    const sim = await Simulator.fromTopology({ name: "t" });
    expect(() => sim.grid({ pes: 9 })).toThrow(/grid pes: 9 is not a count 1\.\.8/);
    expect(() => sim.grid({ cubes: [0, 0] })).toThrow(/distinct indices/);
    const t = sim.empty([4], "f16");
    sim.free(t);
    expect(() => sim.free(t)).toThrow(/double free|already freed/i);
  });
});

describe("the host API refuses bad use at the call", () => {
  it("an empty() larger than the cube's HBM is MEMORY_ALLOCATION naming the sizes, before any host memory is touched", async () => {
    const sim = await loadSimulator(defaultYaml);
    const capacity = sim.machine.graph.topology.cube.hbm.capacity_bytes;
    expect(capacity).toBe(16 * 2 ** 30);
    // 4 TiB of f32: building it on the host first would take minutes and GBs, or throw a RangeError.
    const error = thrown(() => sim.empty([2 ** 20, 2 ** 20], "f32", { name: "huge" }));
    expect(error.code).toBe("MEMORY_ALLOCATION");
    expect(error.message).toContain('"huge" (f32 [1048576, 1048576])');
    expect(error.message).toContain(`${2 ** 42} bytes (4096 GiB)`);
    expect(error.message).toContain(`more than the whole of sip0.cube0.hbm, ${capacity} bytes (16 GiB)`);
    expect(error.message).toContain(`of which ${capacity} bytes (16 GiB) are free`);
    expect(error.message).toMatch(/smaller shape.*another cube.*free device tensors/);
    // Nothing was allocated, and the simulator goes on.
    expect(sim.device.stats().every((entry) => entry.allocations === 0)).toBe(true);
    expect(sim.empty([16], "f32").address).toBe(0);
  });

  it("an empty() larger than the free HBM says how much is free", async () => {
    const sim = await Simulator.fromTopology({
      name: "small",
      sip: { cubes: 2 },
      cube: { hbm: { capacity_bytes: 64 * 2 ** 20 } },
    });
    sim.empty([48 * 2 ** 18], "f32", { name: "weights", cube: 1 });
    const error = thrown(() => sim.empty([32 * 2 ** 19], "f16", { name: "acts", cube: 1 }));
    expect(error.code).toBe("MEMORY_ALLOCATION");
    expect(error.message).toContain(
      'sip0.cube1.hbm: cannot allocate 33554432 bytes (32 MiB) for "acts" (f16 [16777216])',
    );
    expect(error.message).toContain("16777216 bytes (16 MiB) free of its 67108864 bytes (64 MiB)");
    // The other cube is still empty: the error names the cube it was asked for.
    expect(sim.empty([32 * 2 ** 19], "f16", { cube: 0 }).placement.cube).toBe(0);
  });

  it("bad shapes and dtypes are refused by empty() without building a host array", async () => {
    const sim = await Simulator.fromTopology({ name: "t" });
    for (const shape of [[-1, 4], [1.5], [Number.NaN], [2 ** 30, 2 ** 30]]) {
      const error = thrown(() => sim.empty(shape, "f32", { name: "bad" }));
      expect(["TENSOR_INVALID", "RUNTIME_INVALID"]).toContain(error.code);
      expect(error.message).toContain('empty("bad"');
    }
    expect(thrown(() => sim.empty([2 ** 30, 2 ** 30], "f32")).message).toContain(
      "1152921504606846976 elements",
    );
    expect(thrown(() => sim.empty([4], "f64" as "f32")).code).toBe("RUNTIME_INVALID");
    expect(sim.device.stats()).toEqual([]);
  });

  it("copyToDevice and fromDevice of a freed tensor fail at that call, naming the tensor, where it was allocated and freed", async () => {
    const sim = await Simulator.fromTopology({ name: "t" });
    const host = sim.random([16], "f32", { seed: 1 });
    const A = await sim.toDevice(host, { name: "A" }); // A allocated
    sim.free(A); // freed A
    const writes = sim.hostWrites.length;
    expect(A.freed).toBe(true);
    expect(A.freedAt).toMatch(lineOf("freed A"));
    const copy = await failure(sim.copyToDevice(host, A));
    expect(copy.code).toBe("MEMORY_ACCESS");
    expect(copy.message).toContain("copyToDevice: device tensor A (f32 [16] at 0x0, allocated at ");
    expect(copy.message).toMatch(lineOf("A allocated"));
    expect(copy.message).toMatch(lineOf("freed A"));
    expect(sim.hostWrites).toHaveLength(writes); // nothing was written
    const read = await failure(sim.fromDevice(A));
    expect(read.code).toBe("MEMORY_ACCESS");
    expect(read.message).toContain("fromDevice: device tensor A (f32 [16] at 0x0, allocated at ");
    expect(read.message).toMatch(lineOf("A allocated"));
    expect(read.message).toMatch(lineOf("freed A"));
    // Refused calls do not stop the simulator.
    expect(await sim.fromDevice(await sim.toDevice(host))).toBeDefined();
  });

  it("a second free names the tensor, where it was allocated and first freed, even after reuse", async () => {
    const sim = await Simulator.fromTopology({ name: "t" });
    const t = sim.empty([4], "f16", { name: "t" }); // t allocated
    sim.free(t); // first free of t
    const again = sim.empty([4], "f16", { name: "again" });
    expect(again.address).toBe(t.address);
    const error = thrown(() => sim.free(t));
    expect(error.code).toBe("MEMORY_ALLOCATION");
    expect(error.message).toContain("free: device tensor t (f16 [4] at 0x0, allocated at ");
    expect(error.message).toMatch(lineOf("t allocated"));
    expect(error.message).toContain(") was already freed at");
    expect(error.message).toMatch(lineOf("first free of t"));
    expect(error.message).toContain("double free");
    // The tensor now at that address is untouched.
    expect(sim.device.allocationAt(again.address)?.what).toBe("again");
  });

  it("a free of a tensor this simulator did not allocate names it (shape and dtype) and where it was allocated", async () => {
    const other = await Simulator.fromTopology({ name: "t" });
    const sim = await Simulator.fromTopology({ name: "t" });
    const B = other.empty([2, 3], "bf16"); // B of another simulator
    const error = thrown(() => sim.free(B));
    expect(error.code).toBe("MEMORY_ALLOCATION");
    expect(error.message).toContain("free: device tensor t0 (bf16 [2, 3] at 0x0, allocated at ");
    expect(error.message).toMatch(lineOf("B of another simulator"));
    expect(error.message).toContain("is not a live allocation of this simulator");
    expect(error.message).toContain("cannot free 0x0: it was never allocated");
    expect(B.freed).toBe(false);
  });

  it("launch refuses a freed tensor among its args, also inside an array or object, before running", async () => {
    const sim = await Simulator.fromTopology({ name: "t" });
    const X = sim.empty([16, 16], "f32", { name: "X" });
    const Y = sim.empty([16, 16], "f32", { name: "Y" }); // Y allocated
    sim.free(Y); // freed Y
    const before = sim.now;
    const grid = { pes: 1 };
    async function copy(_tl: TL, ..._args: unknown[]) {}
    const cases: [unknown[], string][] = [
      [[X, Y], "args[1]"],
      [[[X, Y]], "args[0][1]"],
      [[{ src: X, dst: Y }], "args[0].dst"],
    ];
    for (const [args, where] of cases) {
      const error = await failure(sim.launch(copy, { grid, args }));
      expect(error.code).toBe("MEMORY_ACCESS");
      expect(error.message).toContain(`kernel copy: launch: ${where} is device tensor Y (f32 [16, 16] at`);
      expect(error.message).toMatch(lineOf("Y allocated"));
      expect(error.message).toMatch(lineOf("freed Y"));
    }
    expect(sim.now).toBe(before);
    expect(sim.results().launches).toEqual([]);
  });

  it("a kernel loading from a freed tensor's address reports the tensor and where it was freed", async () => {
    const sim = await Simulator.fromTopology({ name: "t" });
    const A = sim.empty([16], "f32", { name: "A" });
    const address = A.address;
    sim.free(A); // freed A before the kernel
    async function k(tl: TL, a: number) {
      await tl.load(a, [16], "f32");
    }
    const error = await failure(sim.launch(k, { grid: { pes: 1 }, args: [address] }));
    expect(error.code).toBe("MEMORY_ACCESS");
    expect(error.message).toContain('"A" (f32 [16]');
    expect(error.message).toMatch(/which was freed at [^ ]*simulator\.test\.ts/);
    expect(error.message).toMatch(lineOf("freed A before the kernel"));
  });

  it("kernelMemory().tensorAt names the device tensor holding an address, null outside", async () => {
    const sim = await Simulator.fromTopology({ name: "t" });
    const A = sim.empty([8, 4], "bf16", { name: "A", cube: 0 });
    const S = sim.empty([3], "i32", { name: "S", space: "sram" });
    const memory = sim.kernelMemory();
    expect(memory.tensorAt?.(A.at(7, 3))).toEqual({
      name: "A",
      dtype: "bf16",
      shape: [8, 4],
      address: A.address,
      bytes: 64,
    });
    expect(memory.tensorAt?.(S.address + 4)).toMatchObject({
      name: "S",
      dtype: "i32",
      shape: [3],
      bytes: 12,
    });
    expect(memory.tensorAt?.(A.address + 64)).toBeNull(); // the page's padding
    expect(memory.tensorAt?.(S.address + 12)).toBeNull();
    sim.free(A);
    expect(memory.tensorAt?.(A.address)).toBeNull();
  });
});

describe("empty() gives zeros", () => {
  it("also where a freed tensor's bytes were, in phase 1 and in phase 2", async () => {
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology({ name: "reuse" }, { opLogger: new OpLogger(sink) });
    const old = await sim.toDevice(sim.fromArray([1, 2, 3, 4], [4], "f32"), { name: "old" });
    // A kernel writes the old tensor too, so phase 2 has non-zero bytes there before the free.
    async function twice(tl: TL, x: DeviceTensor) {
      const t = await tl.load(x, [4], "f32");
      await tl.store(x, await tl.add(t, t));
    }
    await sim.launch(twice, { grid: { pes: 1 }, args: [old] });
    sim.free(old);
    const fresh = sim.empty([4], "f32", { name: "fresh" });
    expect(fresh.address).toBe(old.address);
    expect([...(await sim.fromDevice(fresh)).toFloat64Array()]).toEqual([0, 0, 0, 0]);
    const { store } = replay(sim.hostWrites, sink.records);
    expect([...store.readTensor(fresh.address, [4], "f32").toFloat64Array()]).toEqual([0, 0, 0, 0]);
  });

  it("memory never written costs no host write", async () => {
    const sim = await Simulator.fromTopology({ name: "fresh" });
    sim.empty([1024, 1024], "f32");
    expect(sim.hostWrites).toHaveLength(0);
  });
});

describe("defineBench and params", () => {
  const bench = defineBench({
    name: "demo",
    params: z.object({
      n: z.number().int().positive().default(64),
      dtype: z.enum(["f16", "f32"]).default("f16"),
    }),
    async run() {},
  });

  it("command-line values become JSON where they parse; defaults fill the rest", () => {
    expect(parseBenchParams(bench, { n: "128" })).toEqual({ n: 128, dtype: "f16" });
    expect(parseBenchParams(bench, { dtype: "f32" })).toEqual({ n: 64, dtype: "f32" });
  });

  it("a misspelt param is an error, not silently ignored", () => {
    expect(() => parseBenchParams(bench, { nn: "128" })).toThrow(
      /nn: not a param of this bench \(did you mean n\?\)/,
    );
    // Nothing near: no suggestion.
    expect(() => parseBenchParams(bench, { layout: "x" })).toThrow(/layout: not a param of this bench\n/);
  });

  it("a bad value is an error naming the param and listing the bench's params", () => {
    expect(() => parseBenchParams(bench, { n: "-3" })).toThrow(
      /bench "demo": bad params:\n {2}n: .*\nIts params: n \(default 64\), dtype \(default "f16"\)/,
    );
  });
});
