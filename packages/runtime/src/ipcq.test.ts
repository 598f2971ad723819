import { MemorySink, OpLogger } from "@kb/oplog";
import { Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, replay, Simulator, verifyOutcome } from "./index.js";

/** Each PE of a grid row passes its row of x east; the receiver stores it (doubled) in its row of out. */
async function shiftEast(tl: TL, x: DeviceTensor, out: DeviceTensor, seen: number[]) {
  const pe = tl.programId(0);
  const cols = 4; // the default schema's 2 x 4 grid
  const n = x.shape[1] as number;
  const row = await tl.load(x.at(pe, 0), [1, n], "f32");
  if (pe % cols !== cols - 1) await tl.send("east", row);
  if (pe % cols !== 0) {
    const got = await tl.recv("west", { shape: [1, n], dtype: "f32" });
    seen[pe] = got.data.get(0, 0);
    await tl.store(out.at(pe, 0), await tl.mul(got, 2));
  }
}

describe("IPCQ end to end", () => {
  it("sends move real bytes in phase 1 and are replayed and checked in phase 2", async () => {
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology({ name: "ipcq" }, { opLogger: new OpLogger(sink) });
    const x = sim.random([8, 256], "f32", { seed: 5 });
    const X = await sim.toDevice(x);
    const out = sim.empty([8, 256], "f32");
    const seen: number[] = [];
    await sim.launch(shiftEast, { args: [X, out, seen] });
    // Phase 1: PE p received PE p-1's row (within each grid row of 4).
    for (const pe of [1, 2, 3, 5, 6, 7]) expect(seen[pe]).toBe(x.get(pe - 1, 0));
    const expected = Tensor.zeros([8, 256], "f32");
    for (const pe of [1, 2, 3, 5, 6, 7])
      for (let c = 0; c < 256; c++) expected.set([pe, c], 2 * x.get(pe - 1, c));
    const report = await verifyOutcome(
      { check: { out: { actual: out, reference: () => expected } } },
      replay(sim.hostWrites, sink.records).store,
    );
    expect(report.pass).toBe(true);
    expect(sink.records.filter((r) => r.op_name === "ipcq_send")).toHaveLength(6);
  });
});
