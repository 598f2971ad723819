import { MemorySink, OpLogger } from "@kb/oplog";
import { type DeviceTensor, replay, Simulator } from "@kb/runtime";
import { Tensor } from "@kb/tensor";
import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { initProcessGroup } from "./index.js";

// The example of packages/ccl/README.md, run as written: `console` is a local that collects what
// the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("all-reduces over the 8 PEs of a cube and reads the result after phase 2", async () => {
    const printed: unknown[] = [];
    const console = { log: (...values: unknown[]) => printed.push(values.join(" ")) };
    // README example start

    // The schema's default machine: one cube of 2 x 4 PEs. Here every PE is a rank.
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology({ name: "demo" }, { opLogger: new OpLogger(sink) });
    const pg = initProcessGroup(sim, { backend: "ahbm", scope: "pes" });

    // Rank r holds 1024 f32 values, all equal to r.
    const xs: DeviceTensor[] = [];
    for (let rank = 0; rank < pg.getWorldSize(); rank++) {
      xs.push(await sim.toDevice(Tensor.full([1024], rank, "f32"), { name: `x${rank}` }));
    }
    const result = await pg.allReduce(xs, "sum");
    console.log(result.algorithm, result.worldSize, result.bytes, pg.algorithmFor("allReduce", 2 ** 20).name);
    // tree 8 4096 ring

    // Phase 2 replays the op log with real arithmetic: every rank now holds 0 + 1 + ... + 7.
    const { store } = replay(sim.hostWrites, sink.records);
    const x5 = xs[5] as DeviceTensor;
    const out = new Tensor(x5.shape, x5.dtype, store.read(x5.address, x5.nbytes));
    console.log(out.get(0), out.get(1023));
    // 28 28

    // README example end
    expect(printed).toEqual(["tree 8 4096 ring", "28 28"]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
