import { fileURLToPath } from "node:url";
import { MemorySink, OpLogger } from "@kb/oplog";
import { replay, verifyOutcome } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";
import { describe, expect, it } from "vitest";
import allreduce from "../allreduce.js";

const defaultYaml = fileURLToPath(new URL("../../topologies/default.yaml", import.meta.url));

describe("allreduce bench", () => {
  it("sweeps sizes doubling, reports time, algbw and busbw, and every size verifies", async () => {
    const sink = new MemorySink();
    const sim = await loadSimulator(defaultYaml, { opLogger: new OpLogger(sink) });
    const params = allreduce.params.parse({ minBytes: 8, maxBytes: 32768, scope: "pes", dtype: "bf16" });
    const outcome = await allreduce.run(sim, params);
    const report = outcome?.report;
    expect(report?.title).toBe("all-reduce over 8 ranks (pes), sum, bf16");
    expect(report?.rows.map((row) => row[0])).toEqual([
      8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768,
    ]);
    for (const row of report?.rows ?? []) {
      const [bytes, count, , , , us, algbw, busbw] = row as [
        number,
        number,
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      expect(count).toBe(bytes / 2);
      // algbw = bytes / time (GB/s = B/ns); busbw = algbw x 2 (n - 1) / n with n = 8.
      expect(Number(algbw)).toBeCloseTo(bytes / (Number(us) * 1000), 1);
      expect(Number(busbw)).toBeCloseTo((Number(algbw) * 14) / 8, 1);
    }
    // ccl.yaml's default: tree up to 8 KiB, ring above.
    expect(report?.rows.map((row) => row[4])).toEqual([...Array(11).fill("tree"), "ring", "ring"]);
    const verification = await verifyOutcome(
      outcome ?? undefined,
      replay(sim.hostWrites, sink.records).store,
    );
    expect(verification.outputs).toHaveLength(13 * 2);
    expect(
      verification.outputs
        .filter((o) => !o.pass)
        .map((o) => `${o.name} ${o.maxAbsError} ${o.mismatches} ${JSON.stringify(o.firstMismatch)}`),
    ).toEqual([]);
    expect(verification.pass).toBe(true);
  });
});
