import { fileURLToPath } from "node:url";
import { MemorySink, OpLogger } from "@kb/oplog";
import { replay, verifyOutcome } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";
import { describe, expect, it } from "vitest";
import alltoall from "../alltoall.js";

const defaultYaml = fileURLToPath(new URL("../../topologies/default.yaml", import.meta.url));

describe("alltoall bench", () => {
  for (const uneven of [false, true]) {
    it(`sweeps sizes doubling, reports time, algbw and busbw, and every rank of every size verifies${uneven ? " (all-to-all-v)" : ""}`, async () => {
      const sink = new MemorySink();
      const sim = await loadSimulator(defaultYaml, { opLogger: new OpLogger(sink) });
      const params = alltoall.params.parse({
        minBytes: 256,
        maxBytes: 2048,
        scope: "pes",
        dtype: "bf16",
        uneven,
      });
      const outcome = await alltoall.run(sim, params);
      const report = outcome?.report;
      expect(report?.title).toBe(`all-to-all${uneven ? "-v" : ""} over 8 ranks (pes), bf16`);
      // 256 B of bf16 over 8 ranks: 128 elements, 16 per peer.
      expect(report?.rows.map((row) => row[0])).toEqual([256, 512, 1024, 2048]);
      for (const row of report?.rows ?? []) {
        const [bytes, count, , algorithm, us, algbw, busbw] = row as [
          number,
          number,
          string,
          string,
          string,
          string,
          string,
        ];
        expect(count).toBe(bytes / 2);
        expect(algorithm).toBe("ring");
        // algbw = bytes / time (GB/s = B/ns); busbw = algbw x (n - 1) / n with n = 8.
        expect(Number(algbw)).toBeCloseTo(bytes / (Number(us) * 1000), 1);
        expect(Number(busbw)).toBeCloseTo((Number(algbw) * 7) / 8, 1);
      }
      const verification = await verifyOutcome(
        outcome ?? undefined,
        replay(sim.hostWrites, sink.records).store,
      );
      expect(verification.outputs).toHaveLength(4 * 8);
      expect(verification.outputs.filter((o) => !o.pass).map((o) => `${o.name} ${o.mismatches}`)).toEqual([]);
      expect(verification.pass).toBe(true);
    }, 60_000);
  }
});
