import { fileURLToPath } from "node:url";
import { TraceRecorder } from "@kb/components";
import { MemorySink, OpLogger } from "@kb/oplog";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, type KernelInstance, replay, verifyOutcome } from "./index.js";
import { loadSimulator } from "./node.js";
import { programIdOf } from "./program-grid.js";
import { failure } from "./test-support.js";

const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));

/** The first 4 PEs of cube 0 of default.yaml (r0c0..r0c3 of its 2 x 4 NOC). */
const FOUR_PES = { cubes: [0], pes: 4 };

/** What a program saw: its ids, the grid's size and the PE it ran on, in the order programs started. */
interface Seen {
  readonly id: readonly number[];
  readonly num: readonly number[];
  readonly pe: string;
}

function recorder(seen: Seen[], cycles = 0) {
  return async function recordIds(tl: TL): Promise<void> {
    seen.push({
      id: [tl.programId(0), tl.programId(1), tl.programId(2)],
      num: [tl.numPrograms(0), tl.numPrograms(1), tl.numPrograms(2)],
      pe: tl.placement.pe,
    });
    if (cycles > 0) await tl.cycles(cycles);
  };
}

/** When each PE_CPU finished its launch program (`engine_complete` of its lane), by PE. */
function peEnds(tracer: TraceRecorder): Record<string, number> {
  const ends: Record<string, number> = {};
  for (const event of tracer.events) {
    if (event.type === "engine_complete" && event.component.endsWith(".pe_cpu")) {
      ends[event.component.replace(/\.pe_cpu$/, "")] = event.tNs;
    }
  }
  return ends;
}

describe("logical launch grids (programs: [nx, ny?, nz?])", () => {
  it("10 programs of tl.cycles(100) on 4 PEs: the PEs run 3, 3, 2, 2 programs and the launch ends at 345.17 ns", async () => {
    const tracer = new TraceRecorder();
    const sim = await loadSimulator(defaultYaml, { tracer });
    const seen: Seen[] = [];
    const record = await sim.launch(recorder(seen, 100), { grid: FOUR_PES, programs: [10], args: [] });
    // Dispatch order: programs 0-3 to PE0-3 (first round), then each PE takes the next program as
    // its previous one ends; PE0-3 end together at every round, in PE order.
    const pes = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1].map((pe) => `sip0.cube0.pe${pe}`);
    expect(seen.map(({ id }) => id)).toEqual(Array.from({ length: 10 }, (_, i) => [i, 0, 0]));
    expect(seen.map(({ pe }) => pe)).toEqual(pes);
    expect(new Set(seen.map(({ num }) => num.join()))).toEqual(new Set(["10,1,1"]));
    expect(record).toMatchObject({ name: "recordIds", pes: 4, startNs: 0 });
    // By hand (docs/latency-model.md sections 6 and 7, default.yaml):
    //   host -> IO_CPU: 64 B / 64 GB/s = 1; IO_CPU -> M_CPU: 1 + 10 (dispatch) + 0.05 + 64 / 128 = 11.55
    //   M_CPU -> pe3 (r0c3): 0.01 + 4 routers x 1 + 3 x 0.01 + 0.005 = 4.045, + 64 / 64 = 1
    //   targetStartNs = 11.55 + 4 x 5 (M_CPU dispatch) + 4.045 + 1 = 36.595 (every PE starts then)
    //   a further program: wait (nothing outstanding, 0) + dispatch_ns 2 x freq_ghz 1 + dispatchCycles 0
    //   = 2 cycles = 2 ns
    //   PE0, PE1 (3 programs): 36.595 + 3 x 100 + 2 x 2 = 340.595
    //   PE2, PE3 (2 programs): 36.595 + 2 x 100 + 1 x 2 = 238.595
    expect(peEnds(tracer)).toEqual({
      "sip0.cube0.pe0": expect.closeTo(340.595, 9),
      "sip0.cube0.pe1": expect.closeTo(340.595, 9),
      "sip0.cube0.pe2": expect.closeTo(238.595, 9),
      "sip0.cube0.pe3": expect.closeTo(238.595, 9),
    });
    //   pe_done of PE1 (the farther of the two last): pe_cpu -> r0c1 -> r0c0 -> m_cpu =
    //   0.005 + 1 + 0.01 + 1 + 0.01 = 2.025, + 64 / 64 = 1 -> 343.62 (PE0's left r0c0 at 341.6 and
    //   the r0c0 -> m_cpu link at 342.6, before PE1's head reached them: no contention)
    //   cube_done M_CPU -> IO_CPU: 0.05 + 64 / 128 = 0.55 -> 344.17; IO_CPU -> host: 64 / 64 = 1
    expect(record.endNs).toBeCloseTo(345.17, 9);
    expect(sim.now).toBe(record.endNs);
  });

  it("programId / numPrograms are logical on 3 axes, x fastest; onInstance reports every program in linear order", async () => {
    const sim = await loadSimulator(defaultYaml);
    const seen: Seen[] = [];
    const instances: KernelInstance[] = [];
    await sim.launch(recorder(seen, 10), {
      grid: { cubes: [1], pes: [2, 5, 7] },
      programs: [3, 2, 2],
      args: [],
      onInstance: (instance) => instances.push(instance),
    });
    const ids = [];
    for (let z = 0; z < 2; z++) for (let y = 0; y < 2; y++) for (let x = 0; x < 3; x++) ids.push([x, y, z]);
    // All programs take equally long, so the start order is the linear order.
    expect(seen.map(({ id }) => id)).toEqual(ids);
    expect(seen.every(({ num }) => num.join() === "3,2,2")).toBe(true);
    // Four rounds over the three PEs, in placement order.
    expect(seen.map(({ pe }) => pe.replace("sip0.cube1.", ""))).toEqual(
      Array.from({ length: 4 }, () => ["pe2", "pe5", "pe7"]).flat(),
    );
    expect(instances.map((instance) => instance.options.placement.programId)).toEqual(ids);
    expect(instances.map((instance) => instance.commands)).toEqual(
      ids.map(() => [{ kind: "cycles", cycles: 10 }]),
    );
    expect(programIdOf(7, [3, 2, 2])).toEqual([1, 0, 1]);
  });

  it("fewer programs than PEs: the other PEs stay out of the launch (2 programs on 4 PEs end as a 2-PE launch)", async () => {
    const tracer = new TraceRecorder();
    const sim = await loadSimulator(defaultYaml, { tracer });
    const seen: Seen[] = [];
    const record = await sim.launch(recorder(seen, 100), { grid: FOUR_PES, programs: [2], args: [] });
    expect(record.pes).toBe(2);
    expect(seen.map(({ pe }) => pe)).toEqual(["sip0.cube0.pe0", "sip0.cube0.pe1"]);
    expect(Object.keys(peEnds(tracer)).sort()).toEqual(["sip0.cube0.pe0", "sip0.cube0.pe1"]);
    // By hand: targetStartNs = 11.55 + 2 x 5 + (0.01 + 2 x 1 + 0.01 + 0.005) + 1 = 24.575; both
    // end at 124.575; PE1's pe_done arrives at 124.575 + 2.025 + 1 = 127.6; + 0.55 + 1 = 129.15.
    expect(record.endNs).toBeCloseTo(129.15, 9);
    // The same as a persistent launch on those two PEs.
    const persistent = await loadSimulator(defaultYaml);
    const alone = await persistent.launch(recorder([], 100), { grid: { cubes: [0], pes: 2 }, args: [] });
    expect(alone.endNs).toBe(record.endNs);
  });

  /**
   * `kernel(tl, X, out)` launched on PE0 alone (after a persistent launch that warms its TLB, so
   * the later runs are alike) with `programs` programs; returns each launch's span, ns, and D,
   * what one program adds: PE0 alone, the launch reaches it after 1 + 10 + 0.55 + 5 + 1.015 + 1 =
   * 18.565 and its completion the host after 2.015 + 0.55 + 1 = 3.565.
   */
  async function onPe0(
    kernel: (tl: TL, x: DeviceTensor, out: DeviceTensor) => Promise<void>,
    programs: number,
  ) {
    const sim = await loadSimulator(defaultYaml);
    const X = await sim.toDevice(sim.random([64, 64], "f32", { seed: 1 }));
    const out = sim.empty([64, 64], "f32");
    const grid = { cubes: [0], pes: [0] };
    await sim.launch(kernel, { grid, args: [X, out] });
    const span = (launch: { startNs: number; endNs: number }) => launch.endNs - launch.startNs;
    const one = span(await sim.launch(kernel, { grid, programs: [1], args: [X, out] }));
    const many = span(await sim.launch(kernel, { grid, programs: [programs], args: [X, out] }));
    return { one, many, d: one - 18.565 - 3.565 };
  }

  it("a further program on a PE waits for its predecessor's async commands, then pays the start cost", async () => {
    // A composite math command is async: the kernel returns while its tiles still run.
    async function relu(tl: TL, x: DeviceTensor, out: DeviceTensor) {
      await tl.composite("math", tl.ref(x, [64, 64], "f32"), null, { outPtr: out, mathOp: "relu" });
    }
    const { one, many, d } = await onPe0(relu, 2);
    expect(d).toBeGreaterThan(100);
    // Two programs: D, the start cost (2 ns), D again, with no overlap of the two composites.
    expect(many).toBeCloseTo(one + 2 + d, 9);
  });

  it("tl.wait(handle) in a program after a PE's first waits for that program's own command", async () => {
    // Each program waits for its composite and an async load by position; the PE_CPU counts
    // positions over all the programs it ran (their drains and start cycles too), a kernel from
    // its own first command.
    async function reluThenLoad(tl: TL, x: DeviceTensor, out: DeviceTensor) {
      const handle = await tl.composite("math", tl.ref(x, [64, 64], "f32"), null, {
        outPtr: out,
        mathOp: "relu",
      });
      await tl.wait(handle);
      await tl.wait(await tl.loadAsync(x, [64, 64], "f32"));
    }
    const { one, many, d } = await onPe0(reluThenLoad, 3);
    // Three programs one after another, each D long, 2 ns of start cost before the second and third.
    expect(many).toBeCloseTo(one + 2 * (2 + d), 9);
  });

  it("a 2-D logical grid (blocks x rows) of adds replays in phase 2 to x + y, partial last blocks included", async () => {
    const BLOCK = 128;
    async function addRows(tl: TL, x: DeviceTensor, y: DeviceTensor, out: DeviceTensor) {
      const [row, start] = [tl.programId(1), tl.programId(0) * BLOCK];
      const count = Math.min(BLOCK, (x.shape[1] as number) - start);
      const sum = await tl.add(
        await tl.load(x.at(row, start), [count], "f32"),
        await tl.load(y.at(row, start), [count], "f32"),
      );
      await tl.store(out.at(row, start), sum);
    }
    const sink = new MemorySink();
    const sim = await loadSimulator(defaultYaml, { opLogger: new OpLogger(sink) });
    const [rows, cols] = [6, 1000];
    const x = sim.random([rows, cols], "f32", { seed: 1 });
    const y = sim.random([rows, cols], "f32", { seed: 2 });
    const [X, Y] = [await sim.toDevice(x), await sim.toDevice(y)];
    const out = sim.empty([rows, cols], "f32", { name: "out" });
    const programs = [Math.ceil(cols / BLOCK), rows]; // [8, 6]: 48 programs on 3 PEs
    const record = await sim.launch(addRows, { grid: { pes: 3, cubes: 1 }, programs, args: [X, Y, out] });
    expect(record.pes).toBe(3);
    const phase2 = replay(sim.hostWrites, sink.records);
    expect(phase2.stats.byName).toMatchObject({ dma_read: 2 * 48, dma_write: 48 });
    const [xs, ys] = [x.toFloat64Array(), y.toFloat64Array()];
    const sum = Tensor.fromArray(
      xs.map((value, i) => value + (ys[i] as number)),
      [rows, cols],
      "f32",
    );
    const report = await verifyOutcome(
      { check: { out: { actual: out, reference: () => sum } } },
      phase2.store,
    );
    expect(report.outputs[0]).toMatchObject({ pass: true, mismatches: 0 });
  });

  it("refuses grids that are not 1 to 3 integers >= 1, before anything runs, saying what a grid is", async () => {
    const sim = await loadSimulator(defaultYaml);
    const kernel = recorder([]);
    for (const [programs, why] of [
      [[0], "axis 0 is 0, not an integer >= 1"],
      [[4, -2], "axis 1 is -2, not an integer >= 1"],
      [[2.5], "axis 0 is 2.5, not an integer >= 1"],
      [[Number.NaN], "axis 0 is NaN, not an integer >= 1"],
      [[1, 1, 1, 1], "4 axes, not 1 to 3"],
      [[], "0 axes, not 1 to 3"],
      [8, "not an array"],
      [[2 ** 27, 2 ** 27], "more than 2^53 - 1 programs in all"],
    ] as const) {
      const error = await failure(sim.launch(kernel, { programs: programs as never, args: [] }));
      expect(error.code).toBe("RUNTIME_INVALID");
      expect(error.context.kernel).toBe("recordIds");
      expect(error.detail).toContain(why);
      expect(error.detail).toContain("[nx], [nx, ny] or [nx, ny, nz]");
      expect(error.detail).toContain("leave programs out to run one program per PE");
    }
    // Nothing ran: the simulator is still usable.
    expect(sim.now).toBe(0);
    expect((await sim.launch(kernel, { programs: [1], args: [] })).pes).toBe(1);
  });

  it("refuses tl.send / tl.recv in a logical grid (TL_INVALID_CALL naming the program and what to do)", async () => {
    async function sender(tl: TL) {
      const tile = tl.zeros([16], "f32");
      await tl.send("east", tile); // send-line
    }
    const sim = await loadSimulator(defaultYaml);
    const error = await failure(sim.launch(sender, { grid: FOUR_PES, programs: [6], args: [] }));
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.context).toMatchObject({ kernel: "sender", pe: "sip0.cube0.pe0" });
    expect(error.context.file).toMatch(/program-grid\.test\.ts$/);
    expect(error.detail).toMatch(/^program \[0, 0, 0\] of \[6, 1, 1\]: an IPCQ send is refused here: /);
    expect(error.detail).toContain("Launch a kernel that uses tl.send / tl.recv persistently");
  });

  it("names the program whose kernel failed", async () => {
    async function failsAtFive(tl: TL) {
      await tl.cycles(10);
      if (tl.programId(0) === 5) throw new Error("bad block");
    }
    const sim = await loadSimulator(defaultYaml);
    const error = await failure(sim.launch(failsAtFive, { grid: FOUR_PES, programs: [8], args: [] }));
    expect(error.detail).toMatch(/^program \[5, 0, 0\] of \[8, 1, 1\]: the kernel threw: bad block/);
    // Program 5 is the second round's second program: PE1's.
    expect(error.context).toMatchObject({ kernel: "failsAtFive", pe: "sip0.cube0.pe1" });
  });
});
