import { readFileSync } from "node:fs";
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

describe("README example of the other collectives", () => {
  it("reduces, gathers, scatters, exchanges all-to-all and sends, as the README says", async () => {
    const printed: unknown[] = [];
    const console = { log: (...values: unknown[]) => printed.push(values.join(" ")) };
    // README collectives start
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology({ name: "demo" }, { opLogger: new OpLogger(sink) });
    const pg = initProcessGroup(sim, { backend: "ahbm", scope: "pes" });
    const n = pg.getWorldSize(); // 8 PE ranks
    const ranks = (make: (rank: number) => Tensor, name: string) =>
      Promise.all(Array.from({ length: n }, (_, r) => sim.toDevice(make(r), { name: `${name}${r}` })));

    // reduce: rank 3 gets the sum, the others keep theirs.
    const xs = await ranks((r) => Tensor.full([256], r, "f32"), "x");
    await pg.reduce(xs, 3, "sum");
    // gather into rank 0's list; scatter rank 0's list.
    const list = await ranks(() => Tensor.zeros([256], "f32"), "list");
    await pg.gather(await ranks((r) => Tensor.full([256], 10 * r, "f32"), "g"), list, 0);
    const got = await ranks(() => Tensor.zeros([256], "f32"), "got");
    await pg.scatter(got, list, 0);
    // all-to-all: block d of rank s (32 values s * 100 + d) lands in block s of rank d.
    const input = await ranks(
      (s) =>
        Tensor.fromArray(
          Array.from({ length: n * 32 }, (_, i) => s * 100 + Math.floor(i / 32)),
          [n * 32],
          "f32",
        ),
      "in",
    );
    const output = await ranks(() => Tensor.zeros([n * 32], "f32"), "out");
    const a2a = await pg.allToAllSingle(output, input);
    console.log(a2a.collective, a2a.algorithm, a2a.bytes);
    // allToAll ring 1024
    // send / recv: post the receive, then send (one host program drives every rank).
    const received = sim.empty([256], "f32", { name: "received" });
    const pending = pg.irecv(received, 0, { rank: 5 });
    const sent = await pg.send(got[2] as DeviceTensor, 5);
    console.log(pending.isCompleted(), sent.transfers);
    // true 1

    const { store } = replay(sim.hostWrites, sink.records);
    const read = (t: DeviceTensor) => new Tensor(t.shape, t.dtype, store.read(t.address, t.nbytes));
    console.log(read(xs[3] as DeviceTensor).get(0), read(xs[4] as DeviceTensor).get(0));
    // 28 4
    console.log(read(received).get(0), read(output[5] as DeviceTensor).get(32 * 2));
    // 20 205
    // README collectives end
    expect(printed).toEqual(["allToAll ring 1024", "true 1", "28 4", "20 205"]);
  });

  it("is the code of the README's second example", () => {
    const normalize = (code: string) =>
      code
        .split("\n")
        .filter((line) => !line.startsWith("import "))
        .join("\n")
        .replace(/\/\/.*$/gm, "")
        .replace(/\s+/g, "")
        .replace(/,([)\]}])/g, "$1");
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const block = /## More collectives[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const own = readFileSync(new URL(import.meta.url), "utf8");
    const region = own.slice(
      own.indexOf("// README collectives start"),
      own.indexOf("// README collectives end"),
    );
    expect(normalize(region)).toBe(normalize(block));
  });
});
