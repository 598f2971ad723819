import { fileURLToPath } from "node:url";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import type { DeviceTensor, LaunchRecord, Simulator } from "./index.js";
import { loadSimulator } from "./node.js";
import { failure } from "./test-support.js";

const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));

/** Each program copies its `rows` rows of `src` to `dst` (HBM -> TCM -> HBM). */
async function copyKernel(tl: TL, src: DeviceTensor, dst: DeviceTensor, rows: number) {
  const r0 = tl.programId(0) * rows;
  const tile = await tl.load(src.at(r0, 0), [rows, src.shape[1] as number], src.dtype);
  await tl.store(dst.at(r0, 0), tile);
}

/** A copy of 64 x 64 f32 over 4 PEs of cube `cube` (PEs 0-3, or 4-7 with `upper`), tensors in that cube's HBM. */
async function copyOn(sim: Simulator, cube: number, upper = false) {
  const src = await sim.toDevice(sim.random([64, 64], "f32", { seed: cube }), { cube });
  const dst = sim.empty([64, 64], "f32", { cube });
  const pes = sim.grid({ cubes: [cube], pes: upper ? [4, 5, 6, 7] : [0, 1, 2, 3] });
  return {
    dst,
    run: (name: string) => sim.launch(copyKernel, { grid: pes, args: [src, dst, 16], name }),
  };
}

const span = (record: LaunchRecord) => record.endNs - record.startNs;

describe("Simulator.streams: host tasks whose launches run at the same simulated time", {
  timeout: 60_000,
}, () => {
  it("two launches on different cubes overlap: the run takes the longer one, not their sum", async () => {
    const alone = await loadSimulator(defaultYaml);
    const a0 = await copyOn(alone, 0);
    const b0 = await copyOn(alone, 1);
    const soloA = await a0.run("a");
    const soloB = await b0.run("b");

    const sim = await loadSimulator(defaultYaml);
    const a = await copyOn(sim, 0);
    const b = await copyOn(sim, 1);
    const start = sim.now;
    const [ra, rb] = await sim.streams([() => a.run("a"), () => b.run("b")]);
    // Both start when the streams start. They share only the SIP's IO_CPU, which fans one launch
    // out at a time (dispatch_ns per cube): a runs as alone, b's launch waits for a's one cube
    // dispatch and then runs as alone. The run takes the longer of the two, not their sum.
    const dispatchNs = Number(
      (sim.machine.component("sip0.io_cpu").params as Record<string, unknown>).dispatch_ns,
    );
    expect(dispatchNs).toBe(10);
    expect(ra?.startNs).toBe(start);
    expect(rb?.startNs).toBe(start);
    expect((ra?.endNs ?? 0) - start).toBeCloseTo(span(soloA), 9);
    expect((rb?.endNs ?? 0) - start).toBeCloseTo(span(soloB) + dispatchNs, 9);
    expect(sim.now - start).toBeCloseTo(Math.max(span(soloA), span(soloB) + dispatchNs), 9);
    expect(ra?.overlaps).toEqual(["b"]);
    expect(rb?.overlaps).toEqual(["a"]);
    expect(soloA.overlaps).toBeUndefined();
    // The bytes moved are the same as alone.
    expect([...(await sim.fromDevice(a.dst)).bytes]).toEqual([...(await alone.fromDevice(a0.dst)).bytes]);
  });

  it("one stream is the plain host program: same records, same time", async () => {
    const plain = await loadSimulator(defaultYaml);
    const p = await copyOn(plain, 0);
    const plainRecords = [await p.run("x"), await p.run("y")];

    const sim = await loadSimulator(defaultYaml);
    const s = await copyOn(sim, 0);
    const [records] = await sim.streams([async () => [await s.run("x"), await s.run("y")]]);
    expect(JSON.stringify(records)).toBe(JSON.stringify(plainRecords));
    expect(sim.now).toBe(plain.now);
    expect(JSON.stringify(sim.results())).toBe(JSON.stringify(plain.results()));
  });

  it("a stream waits for another's signal and goes on at the simulated time it fired", async () => {
    const sim = await loadSimulator(defaultYaml);
    const a = await copyOn(sim, 0);
    const b = await copyOn(sim, 1);
    const ready = sim.signal("a copied");
    const [ra, rb] = await sim.streams([
      async () => {
        const record = await a.run("a");
        ready.fire();
        return record;
      },
      async () => {
        await ready.wait();
        return await b.run("b");
      },
    ]);
    expect(ready.fired).toBe(true);
    expect(rb?.startNs).toBe(ra?.endNs);
    expect(ra?.overlaps).toBeUndefined();
    expect(rb?.overlaps).toBeUndefined();
  });

  it("two launches on the same PEs serialise there: the second's programs run after the first's", async () => {
    const sim = await loadSimulator(defaultYaml);
    const a = await copyOn(sim, 0);
    const [rp, rq] = await sim.streams([() => a.run("p"), () => a.run("q")]);
    expect(rp?.overlaps).toEqual(["q"]);
    expect(rq?.overlaps).toEqual(["p"]);
    // q was launched with p, but a PE_CPU runs one program at a time: q's end comes after p's,
    // by less than a whole solo launch (q's launch messages travelled while p ran).
    const solo = span(rp as LaunchRecord);
    expect(rq?.endNs).toBeGreaterThan(rp?.endNs ?? 0);
    expect((rq?.endNs ?? 0) - (rp?.endNs ?? 0)).toBeLessThan(solo);
  });

  it("a stream may start streams of its own and goes on when they end", async () => {
    const sim = await loadSimulator(defaultYaml);
    const a = await copyOn(sim, 0);
    const b = await copyOn(sim, 1);
    const c = await copyOn(sim, 0, true);
    const start = sim.now;
    const [inner, rc] = await sim.streams<LaunchRecord | LaunchRecord[]>([
      async () => {
        const both = await sim.streams([() => a.run("a"), () => b.run("b")]);
        return [...both, await a.run("a2")];
      },
      () => c.run("c"),
    ]);
    const [ra, rb, ra2] = inner as LaunchRecord[];
    expect(ra?.startNs).toBe(start);
    expect((rc as LaunchRecord).startNs).toBe(start);
    expect(ra2?.startNs).toBe(Math.max(ra?.endNs ?? 0, rb?.endNs ?? 0));
  });

  it("a signal nobody fires is a deadlock that names it; the simulator is stopped after", async () => {
    const sim = await loadSimulator(defaultYaml);
    const a = await copyOn(sim, 0);
    const never = sim.signal("weights of stage 2");
    const error = await failure(sim.streams<unknown>([() => a.run("a"), () => never.wait()]));
    expect(error.code).toBe("DES_DEADLOCK");
    expect(error.message).toContain('signal "weights of stage 2"');
    const again = await failure(a.run("again"));
    expect(again.code).toBe("RUNTIME_INVALID");
  });

  it("a stream's error is the streams' error", async () => {
    const sim = await loadSimulator(defaultYaml);
    const a = await copyOn(sim, 0);
    const b = await copyOn(sim, 1);
    await expect(
      sim.streams([
        () => a.run("a"),
        async () => {
          await b.run("b");
          throw new Error("host code failed");
        },
      ]),
    ).rejects.toThrow("host code failed");
  });
});
