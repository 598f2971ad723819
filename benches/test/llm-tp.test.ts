import { MemorySink, OpLogger } from "@kb/oplog";
import { replay, Simulator, verifyOutcome } from "@kb/runtime";
import { describe, expect, test } from "vitest";
import llamaLayer from "../llama-layer.js";
import { topologyFile } from "./llm-support.js";

// Tensor parallelism over the cubes of several SIPs: the layer's all-reduces go in two levels
// (reduce-scatter in each SIP's cube ring, all-reduce between SIPs, all-gather in the cube ring).

const ref4sip = topologyFile("ref-4sip");

async function runOn4sip(params: Record<string, unknown>) {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(ref4sip, { opLogger: new OpLogger(sink) });
  const outcome = await llamaLayer.run(sim, llamaLayer.params.parse(params));
  const phase2 = replay(sim.hostWrites, sink.records);
  return { outcome, verification: await verifyOutcome(outcome ?? undefined, phase2.store) };
}

// ref-4sip runs hbm_ctrl_v2 (issue 37): seconds a run on a loaded 2-core machine.
describe("llama-layer tensor parallel across SIPs (ref-4sip.yaml)", { timeout: 120_000 }, () => {
  test("tp = 4 on 2 SIPs x 2 cubes PASSes; each all-reduce is three launches over all 4 cubes", async () => {
    const { outcome, verification } = await runOn4sip({
      preset: "tiny",
      dtype: "f32",
      seq: 16,
      tp: 4,
      sips: 2,
      cubes: 2,
      pes: 4,
    });
    expect(verification.outputs.map((o) => [o.name, o.pass, o.firstMismatch])).toEqual([
      ["out.rank0", true, null],
      ["out.rank3", true, null],
    ]);
    expect(outcome?.report?.title).toContain("tp 4 (sip0.cube0 sip0.cube1 sip1.cube0 sip1.cube1)");
    const kernels = (outcome?.report?.rows ?? []).map((row) => String(row[1]));
    const oProj = kernels.indexOf("o-proj");
    // 16 x 128 f32 partials: 8 KiB per rank, 4 KiB segments between SIPs, where ccl.yaml's
    // defaults pick the tree (up to 8 KiB) and the reduce-scatter / all-gather have the ring only.
    expect(kernels.slice(oProj + 1, oProj + 4)).toEqual([
      "all-reduce o: reduce-scatter (ring, cubes)",
      "all-reduce o: all-reduce (tree, SIPs)",
      "all-reduce o: all-gather (ring, cubes)",
    ]);
    expect(kernels.filter((k) => k.startsWith("all-reduce down: "))).toHaveLength(3);
  });

  test("tp = 8 on 2 SIPs x 4 cubes (more ranks than the 4 KV heads: each KV head on 2 ranks) PASSes in bf16, decode", async () => {
    const { verification } = await runOn4sip({
      preset: "tiny",
      dtype: "bf16",
      phase: "decode",
      seq: 12,
      batch: 2,
      tp: 8,
      sips: 2,
      pes: 2,
    });
    expect(verification.outputs.map((o) => [o.name, o.pass, o.firstMismatch])).toEqual([
      ["out.rank0", true, null],
      ["out.rank7", true, null],
    ]);
  });

  test("a tp that is not the cubes of SIP 0, one cube per SIP or every cube is refused, naming the choices", async () => {
    await expect(runOn4sip({ preset: "tiny", tp: 8, sips: 4, cubes: 4 })).rejects.toThrow(
      /tp=8 does not fit this grid \(4 SIP\(s\) x 4 cube\(s\)\).*Try tp = 1, 2, 4, 16/,
    );
  });
});
