import { fileURLToPath } from "node:url";
import { MemorySink, OpLogger } from "@kb/oplog";
import { PhaseComparer, replay, Simulator, verifyOutcome } from "@kb/runtime";
import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import { describe, expect, test } from "vitest";
import vectorAdd from "../01-vector-add.js";

const topology = (name: string) =>
  fileURLToPath(new URL(`../../../topologies/${name}.yaml`, import.meta.url));

/**
 * The tutorial through the runtime API: phase 1 with an op log and the loads kept, then phase 2
 * once, checking output against the host reference and every observed load against phase 2's
 * copy; and the bytes the PE_DMAs moved.
 */
async function run(params: Record<string, unknown>, topologyName = "default") {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(topology(topologyName), {
    opLogger: new OpLogger(sink),
    checkPhases: true,
  });
  const parsed = vectorAdd.params.parse(params);
  const outcome = await vectorAdd.run(sim, parsed as never);
  const comparer = new PhaseComparer(sim.loadObservations, sink.records);
  const phase2 = replay(sim.hostWrites, sink.records, { onExecuted: comparer.onExecuted });
  const report = await verifyOutcome(outcome ?? undefined, phase2.store);
  const dmaBytes = sim.machine
    .stats()
    .components.filter((c) => c.kind === "pe_dma")
    .reduce((sum, c) => sum + c.bytes, 0);
  return { report, phases: comparer.result(), dmaBytes };
}

describe("tutorial 01: vector add with a masked tail", { timeout: 30_000 }, () => {
  // 1000 elements in blocks of 64: 16 programs, the last holds 40 (1000 = 15 x 64 + 40).
  test.each([
    ["f32", "default"],
    ["f16", "default"],
    ["bf16", "ref-cube"],
  ])(
    "%s on %s.yaml: output PASSes phase 2, phase 1 observed every load as phase 2 copied it",
    async (dtype, name) => {
      const { report, phases, dmaBytes } = await run({ n_elements: 1000, BLOCK_SIZE: 64, dtype }, name);
      expect(report.outputs.map((output) => [output.name, output.pass, output.mismatches])).toEqual([
        ["output", true, 0],
      ]);
      // 16 programs x (x and y).
      expect(phases).toMatchObject({ observed: 32, compared: 32, differing: 0, unmatched: 0 });
      // The DMAs move x, y and output once: 3 x 1000 elements, not 3 x 16 x 64 (the last block's
      // 24 masked-off elements never move).
      expect(dmaBytes).toBe(3 * 1000 * DTYPE_BYTES[dtype as Dtype]);
    },
  );
});
