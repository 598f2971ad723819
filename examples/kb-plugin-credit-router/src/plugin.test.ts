import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defaultRegistry } from "@kb/builtins";
import { buildMachine, type ForwardingComponent, type Machine, Transfer } from "@kb/components";
import { MemorySink, OpLogger } from "@kb/oplog";
import { parseBenchParams, replay, Simulator, verifyOutcome } from "@kb/runtime";
import {
  encodeAddress,
  expandTopology,
  parseTopology,
  resolveTopology,
  type TopologyGraph,
} from "@kb/topology";
import { describe, expect, it } from "vitest";
import allreduce from "../../../benches/allreduce.js";
import plugin, { creditRouterParams } from "./index.js";

const IMPL = "kb-plugin-credit-router:credit_router";

/**
 * One cube, a 1 x 2 NOC (PE0 at r0c0, PE1 at r0c1), the shared SRAM on r0c0. Every link used
 * here is 64 GB/s (a 64 B flit per ns) with 1 ns of latency; the routers: 64 B flits, 1 ns
 * cycles, a 2-cycle pipeline, `buffer_flits` per input; `first_flit_ns` 2 (a tail leaves a
 * router no earlier than 2 ns after it arrived); the SRAM takes 64 GB/s with no access latency.
 */
function twoRouters(bufferFlits: number): TopologyGraph {
  const link = { bw_gbs: 64, latency_ns: 1 };
  return expandTopology(
    resolveTopology({
      name: "two-routers",
      system: { sips: 1 },
      sip: { cubes: 1 },
      cube: {
        noc: {
          rows: 1,
          cols: 2,
          link,
          first_flit_ns: 2,
          impl: IMPL,
          params: { flit_bytes: 64, cycle_ns: 1, pipeline_cycles: 2, buffer_flits: bufferFlits },
        },
        sram: { bw_gbs: 64, latency_ns: 0 },
        links: { pe_to_noc: link, sram_to_noc: link },
      },
    }),
  );
}

const sram = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "sram", offset });

/** Writes 256 B (4 flits) to the SRAM from each PE_DMA in `from`, in order, at time 0; the time each commits. */
function writes(machine: Machine, from: readonly number[]): number[] {
  const transfers = from.map((pe, index) => {
    const transfer = new Transfer(machine.env);
    const block = { address: sram(index * 256), rows: 1, rowBytes: 256, stride: 256 };
    machine.fabric.write(`sip0.cube0.pe${pe}.pe_dma`, block, transfer);
    transfer.seal();
    return transfer;
  });
  const done: number[] = [];
  for (const transfer of transfers) {
    machine.run(transfer.done);
    done.push(transfer.doneAt);
  }
  return done;
}

const router = (machine: Machine, id: string) =>
  machine.component<ForwardingComponent>(`sip0.cube0.noc.${id}`);

describe("kb-plugin-credit-router", () => {
  it("parses its params with the topology's first_flit_ns", () => {
    expect(creditRouterParams.parse({ first_flit_ns: 1 })).toEqual({
      first_flit_ns: 1,
      flit_bytes: 64,
      cycle_ns: 0.5,
      pipeline_cycles: 2,
      buffer_flits: 16,
    });
  });

  it("two packets contend for r0c0's output to the SRAM, and a 4-flit buffer holds PE1's second packet back (hand-computed)", () => {
    const machine = buildMachine(twoRouters(4), { registry: defaultRegistry([plugin]) });
    expect(router(machine, "r0c0").impl).toBe(IMPL);
    // A (PE0), B1 and B2 (PE1), 256 B = 4 flits each, launched at 0 in that order.
    // A:  pe0 -> r0c0 link 0..4, head 1, tail 5. r0c0: ready 1 + 2 = 3, output free: leaves 3,
    //     output busy to 3 + 4 = 7; link 3..7, head 4, tail max(5 + 2, 7) + 1 = 8; SRAM bus 4..8,
    //     committed at 8. Its 4 flits leave r0c0's input at 7.
    // B1: pe1 -> r0c1 head 1, tail 5; r0c1 leaves at 3 (its input frees at 7); r0c0 admits it
    //     (4 of 4 flits); link 3..7, head 4, tail 8. r0c0: ready 6, output free at 7: leaves 7,
    //     output busy to 11, input freed at 11; link 7..11, head 8, tail 12; SRAM 8..12: 12.
    // B2: r0c1's input is full (B1) until 7: the source holds it. At 7: link 7..11, head 8, tail
    //     12. r0c1: ready 10, but r0c0's input from r0c1 is full (B1) until 11: it leaves r0c1 at
    //     11; link 11..15, head 12, tail 16. r0c0: ready 14, output free (11): leaves 14, link
    //     14..18, head 15, tail max(16 + 2, 18) + 1 = 19; SRAM 15..19: committed at 19.
    expect(writes(machine, [0, 1, 1])).toEqual([8, 12, 19]);
    // One refusal each: PE1's DMA at r0c1's input, r0c1 at r0c0's input.
    expect(router(machine, "r0c1").stats.queueFullStalls).toBe(1);
    expect(router(machine, "r0c0").stats.queueFullStalls).toBe(1);
    const stalls = router(machine, "r0c0")
      .modelStats()
      .find((stat) => stat.name === "credit_stalls");
    expect(stalls?.total).toBe(1);
  });

  it("with room for both packets, PE1's second packet only queues behind the first on the links", () => {
    const machine = buildMachine(twoRouters(64), { registry: defaultRegistry([plugin]) });
    // B2: pe1 -> r0c1 link 4..8 (behind B1), head 5, tail 9. r0c1: ready 7, output free at 7:
    //     leaves 7, link 7..11, head 8, tail 12. r0c0: ready 10, output busy (B1) to 11: leaves
    //     11, link 11..15, head 12, tail max(12 + 2, 15) + 1 = 16; SRAM 12..16: committed at 16.
    expect(writes(machine, [0, 1, 1])).toEqual([8, 12, 16]);
    expect(router(machine, "r0c0").stats.queueFullStalls).toBe(0);
  });

  describe("a whole run: allreduce on credit-mesh.yaml (default.yaml with credit routers)", () => {
    const file = fileURLToPath(new URL("../credit-mesh.yaml", import.meta.url));

    async function run(withPlugin: boolean) {
      const topology = parseTopology(readFileSync(file, "utf8"), file);
      const graph = expandTopology(
        withPlugin
          ? topology
          : {
              ...topology,
              cube: { ...topology.cube, noc: { ...topology.cube.noc, impl: "transit_v1", params: {} } },
            },
      );
      const sink = new MemorySink();
      const opLogger = new OpLogger(sink);
      const sim = await Simulator.fromTopology(graph, { plugins: withPlugin ? [plugin] : [], opLogger });
      const params = parseBenchParams(allreduce, { minBytes: 1024, maxBytes: 65536 });
      const outcome = (await allreduce.run(sim, params as never)) ?? undefined;
      await opLogger.close();
      const phase2 = replay(sim.hostWrites, sink.records);
      const report = await verifyOutcome(outcome, phase2.store, {
        firstNonFinite: phase2.executor.firstNonFinite,
      });
      const routers = sim.machine.components.filter((component) => component.kind === "noc_router");
      const ops = routers.reduce((sum, component) => sum + component.stats.ops, 0);
      return { endNs: sim.machine.env.now, pass: report.pass, ops };
    }

    it("passes --verify with the credit routers, and changes the simulated time", async () => {
      const [builtin, credit] = [await run(false), await run(true)];
      expect(builtin.pass).toBe(true);
      expect(credit.pass).toBe(true);
      expect(credit.ops).toBeGreaterThan(0);
      expect(credit.endNs).not.toBe(builtin.endNs);
    }, 120_000);
  });
});
