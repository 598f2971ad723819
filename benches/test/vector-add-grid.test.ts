import { fileURLToPath } from "node:url";
import { MemorySink, OpLogger } from "@kb/oplog";
import { replay, verifyOutcome } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";
import { describe, expect, test } from "vitest";
import vectorAddGrid from "../vector-add-grid.js";

const DEFAULT = fileURLToPath(new URL("../../topologies/default.yaml", import.meta.url));

/** The bench in phase 1 with an op log, then phase 2 and the check against the host reference. */
async function run(params: Record<string, unknown>) {
  const sink = new MemorySink();
  const sim = await loadSimulator(DEFAULT, { opLogger: new OpLogger(sink) });
  const parsed = vectorAddGrid.params.parse(params);
  const outcome = await vectorAddGrid.run(sim, parsed as never);
  const report = await verifyOutcome(outcome ?? undefined, replay(sim.hostWrites, sink.records).store);
  return { results: sim.results(vectorAddGrid.name, parsed), report };
}

describe("vector-add-grid (a logical grid of cdiv(n, block) programs)", () => {
  test.each(["f32", "f16", "bf16"])(
    "PASSes phase-2 verification in %s, the last block partial",
    async (dtype) => {
      // 5000 = 39 x 128 + 8: 40 programs on the 16 PEs of default.yaml.
      const { results, report } = await run({ n: 5000, block: 128, dtype });
      expect(report.outputs.map((output) => [output.name, output.pass, output.mismatches])).toEqual([
        ["out", true, 0],
      ]);
      expect(results.launches.map((launch) => launch.pes)).toEqual([16]);
    },
  );

  test("every program is one add on PE_MATH; the PE_CPUs pay 2 ns per command and per further program", async () => {
    const { results } = await run({ n: 5000, block: 128 });
    const kind = (name: string) => results.byKind.find((row) => row.kind === name);
    expect(kind("pe_math")?.ops).toBe(40);
    expect(results.work.mathFlops).toBe(5000);
    // 40 programs x 4 commands (load, load, add, store) x dispatch_ns 2 = 320, plus the 40 - 16 =
    // 24 programs after each PE's first x 2 ns (dispatch_ns x freq_ghz + dispatchCycles 0) = 48.
    expect(kind("pe_cpu")?.busyNs).toBeCloseTo(320 + 48, 9);
  });

  test("fewer programs than PEs: 1000 elements in blocks of 96 are 11 programs on 11 PEs", async () => {
    const { results, report } = await run({ n: 1000, block: 96 });
    expect(report.pass).toBe(true);
    expect(results.launches.map((launch) => launch.pes)).toEqual([11]);
    // 11 programs x 4 commands x 2 ns; no PE runs a second program.
    expect(results.byKind.find((row) => row.kind === "pe_cpu")?.busyNs).toBeCloseTo(88, 9);
  });
});
