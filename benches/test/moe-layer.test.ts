import { MemorySink, OpLogger } from "@kb/oplog";
import { replay, Simulator, verifyOutcome } from "@kb/runtime";
import { describe, expect, test } from "vitest";
import moeLayer from "../moe-layer.js";
import { topologyFile } from "./llm-support.js";

// A whole layer simulated and replayed: seconds alone, more on a loaded machine.
const SLOW = 120_000;

// The MoE layer end to end: expert parallel (a2a over cubes), and tensor x expert parallel on
// ref-4sip (all-to-all between SIPs, all-reduce around each SIP's cubes), each verified in phase 2
// against the host's reference with the same routing, capacity and drop rule.

async function run(topology: string, params: Record<string, unknown>) {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(topologyFile(topology), { opLogger: new OpLogger(sink) });
  const outcome = await moeLayer.run(sim, moeLayer.params.parse(params));
  const phase2 = replay(sim.hostWrites, sink.records);
  const verification = await verifyOutcome(outcome ?? undefined, phase2.store);
  const rows = outcome?.report?.rows ?? [];
  const kernels = rows.map((row) => String(row[1]));
  const moe = (name: string) => rows.find((row) => row[0] === "moe" && row[1] === name)?.[2];
  return { outcome, verification, kernels, moe };
}

const verdicts = (v: Awaited<ReturnType<typeof verifyOutcome>>) =>
  v.outputs.map((o) => [o.name, o.pass, o.firstMismatch]);

describe("moe-layer", () => {
  test(
    "ep = 2 over the default topology's 2 cubes PASSes; the a2a dispatch and combine are in the table",
    async () => {
      const { outcome, verification, kernels, moe } = await run("default", { dtype: "f32", seq: 16, pes: 2 });
      expect(verdicts(verification)).toEqual([
        ["out.rank0", true, null],
        ["out.rank1", true, null],
        ["router.gate.rank0", true, null],
        ["router.gate.rank1", true, null],
        ["router.top.rank0", true, null],
        ["router.top.rank1", true, null],
      ]);
      expect(outcome?.report?.title).toContain("ep 2 x tp 1 (sip0.cube0 sip0.cube1)");
      const moeKernels = kernels.slice(kernels.indexOf("router"), kernels.indexOf("combine") + 1);
      expect(moeKernels).toEqual([
        "router",
        "dispatch",
        "all-to-all dispatch (ring)",
        "expert gate-up-swiglu",
        "expert down",
        "all-to-all combine (ring)",
        "combine",
      ]);
      // 16 tokens x top-2 = 32 assignments, no capacity: none dropped.
      const routed = String(moe("tokens per expert (routed)")).split(" ").map(Number);
      expect(routed.reduce((a, b) => a + b, 0)).toBe(32);
      expect(moe("tokens per expert (computed)")).toBe(moe("tokens per expert (routed)"));
      expect(moe("dropped assignments")).toBe(0);
    },
    SLOW,
  );

  test(
    "capacity factor 1.0 drops what exceeds ceil(16 x 2 / 8) = 4 per expert, and still PASSes",
    async () => {
      const { verification, moe } = await run("default", {
        dtype: "f32",
        seq: 16,
        pes: 2,
        capacityFactor: 1,
      });
      expect(verification.outputs.every((o) => o.pass)).toBe(true);
      const routed = String(moe("tokens per expert (routed)")).split(" ").map(Number);
      const computed = String(moe("tokens per expert (computed)")).split(" ").map(Number);
      expect(computed).toEqual(routed.map((n) => Math.min(n, 4)));
      expect(moe("dropped assignments")).toBe(routed.reduce((a, n) => a + Math.max(0, n - 4), 0));
      expect(Number(moe("dropped assignments"))).toBeGreaterThan(0);
    },
    SLOW,
  );

  test(
    "tp 2 x ep 2 on ref-4sip (2 SIPs x 2 cubes) PASSes in bf16, with the expert all-reduce in cube rings",
    async () => {
      const { outcome, verification, kernels } = await run("ref-4sip", {
        dtype: "bf16",
        seq: 16,
        ep: 2,
        tp: 2,
        pes: 2,
      });
      expect(verification.outputs.filter((o) => !o.pass).map((o) => [o.name, o.firstMismatch])).toEqual([]);
      expect(verification.outputs.map((o) => o.name)).toEqual([
        "out.rank0",
        "out.rank3",
        "router.gate.rank0",
        "router.gate.rank3",
        "router.top.rank0",
        "router.top.rank3",
      ]);
      expect(outcome?.report?.title).toContain("ep 2 x tp 2 (sip0.cube0 sip0.cube1 sip1.cube0 sip1.cube1)");
      expect(kernels).toContain("all-to-all dispatch (SIP rings)");
      expect(kernels).toContain("all-reduce experts (cube rings)");
    },
    SLOW,
  );

  test("bad placements are errors that say what fits", async () => {
    const sim = await Simulator.fromTopology(topologyFile("default"));
    await expect(moeLayer.run(sim, moeLayer.params.parse({ ep: 3 }))).rejects.toThrow(
      /ep=3 does not divide the 8 experts/,
    );
    await expect(moeLayer.run(sim, moeLayer.params.parse({ ep: 2, tp: 2 }))).rejects.toThrow(
      /ep=2 x tp=2 needs 2 SIP\(s\) of 2 cubes.*this topology has 1 SIP\(s\) of 2 cube\(s\)/,
    );
    await expect(moeLayer.run(sim, moeLayer.params.parse({ ep: 8 }))).rejects.toThrow(
      /ep=8 with tp=1 does not fit this grid \(1 SIP\(s\) x 2 cube\(s\)\)/,
    );
    await expect(moeLayer.run(sim, moeLayer.params.parse({ tp: 3 }))).rejects.toThrow(
      /tp=3 does not divide the expert width/,
    );
  });
});
