import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MemorySink, OpLogger, type OpRecord } from "@kb/oplog";
import { MemoryHarness } from "@kb/probe";
import { parseBenchParams, replay, Simulator, verifyOutcome } from "@kb/runtime";
import { expandTopology, parseTopology, type TopologyGraph } from "@kb/topology";
import { describe, expect, it } from "vitest";
import vectorAdd from "../../../benches/vector-add.js";
import plugin, { afterRefresh, closedPageHbmParams } from "./index.js";

const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
const IMPL = "kb-plugin-closed-page-hbm:closed_page_hbm";

/** default.yaml, with this plug-in's model on every cube's HBM when `withPlugin`. */
function graph(withPlugin: boolean): TopologyGraph {
  const topology = parseTopology(readFileSync(defaultYaml, "utf8"), defaultYaml);
  if (!withPlugin) return expandTopology(topology);
  return expandTopology({
    ...topology,
    plugins: ["kb-plugin-closed-page-hbm"],
    cube: { ...topology.cube, hbm: { ...topology.cube.hbm, impl: IMPL } },
  });
}

// default.yaml's stack: 8 channels x 2 pseudo-channels of 25.6 GB/s, 32 B bursts (1.25 ns each),
// 1 SID x 4 bank groups x 4 banks = 16 banks per pseudo-channel; the model's default timings:
// tRCD 14, CL 14, tRAS 33, tRP 14 (tRC 47), tREFI 3900, tRFCpb 160 ns.
const BURST_NS = 32 / 25.6;

describe("kb-plugin-closed-page-hbm", () => {
  it("a single read: activate, tRCD + CL, then its bursts", () => {
    const harness = new MemoryHarness(graph(true), { plugins: [plugin] });
    expect(harness.memory.impl).toBe(IMPL);
    const read = harness.request("read", 0, 64);
    harness.machine.run(read);
    // Offset 0: pseudo-channel 0, bank 0, row 0; 64 B = 2 bursts: 14 + 14 + 2 x 1.25 = 30.5 ns.
    expect(read.value).toEqual({ arrivalNs: 0, doneNs: 14 + 14 + 2 * BURST_NS });
    expect(read.value.doneNs).toBe(30.5);
  });

  it("two reads to one bank: the second activates tRC = tRAS + tRP after the first", () => {
    const harness = new MemoryHarness(graph(true), { plugins: [plugin] });
    const first = harness.request("read", 0, 64);
    const second = harness.request("read", 0, 64);
    harness.machine.run(second);
    expect(first.value.doneNs).toBe(30.5);
    // Closed page: the row is precharged after each access. Next activate at
    // max(0 + tRAS 33, data end 30.5) + tRP 14 = 47; data 47 + 28 = 75 .. 77.5.
    expect(second.value).toEqual({ arrivalNs: 0, doneNs: 47 + 28 + 2 * BURST_NS });
  });

  it("a read to another bank of the pseudo-channel overlaps the first: only the data bus is shared", () => {
    const harness = new MemoryHarness(graph(true), { plugins: [plugin] });
    const map = harness.addressMap;
    const here = map.locate(0);
    let other = 256;
    while (map.lane(other) !== 0 || map.locate(other).bankGroup === here.bankGroup) other += 256;
    const first = harness.request("read", 0, 64);
    const second = harness.request("read", other, 64);
    harness.machine.run(second);
    expect(first.value.doneNs).toBe(30.5);
    // Activated at 0 too; its data waits for the bus: 30.5 .. 33.
    expect(second.value.doneNs).toBe(30.5 + 2 * BURST_NS);
  });

  it("per-bank refresh: bank 0 is unavailable for tRFCpb from tREFI / 16 on", () => {
    const params = closedPageHbmParams.parse({
      channels: 8,
      pseudo_channels: 2,
      pc_bw_gbs: 25.6,
      access_latency_ns: 40,
      interleave_bytes: 256,
      flit_bytes: 64,
      capacity_bytes: 2 ** 34,
    });
    expect(afterRefresh(params, 0, 16, 243)).toBe(243);
    expect(afterRefresh(params, 0, 16, 250)).toBe(243.75 + 160);
    expect(afterRefresh(params, 15, 16, 250)).toBe(250);
    expect(afterRefresh(params, 0, 16, 3900 + 300)).toBe(3900 + 243.75 + 160);
    const harness = new MemoryHarness(graph(true), { plugins: [plugin] });
    harness.machine.run(250);
    const read = harness.request("read", 0, 64);
    harness.machine.run(read);
    expect(read.value).toEqual({ arrivalNs: 250, doneNs: 403.75 + 28 + 2 * BURST_NS });
  });

  it("a write commits when its last burst is written", () => {
    const harness = new MemoryHarness(graph(true), { plugins: [plugin] });
    const write = harness.request("write", 0, 128);
    harness.machine.run(write);
    expect(write.value.doneNs).toBe(28 + 4 * BURST_NS);
  });

  describe("a whole run: vector-add on default.yaml", () => {
    async function run(withPlugin: boolean) {
      const sink = new MemorySink();
      const opLogger = new OpLogger(sink);
      const sim = await Simulator.fromTopology(graph(withPlugin), {
        plugins: withPlugin ? [plugin] : [],
        opLogger,
      });
      const params = parseBenchParams(vectorAdd, { n: 1 << 14, chunk: 512 });
      const outcome = (await vectorAdd.run(sim, params as never)) ?? undefined;
      await opLogger.close();
      const phase2 = replay(sim.hostWrites, sink.records);
      const report = await verifyOutcome(outcome, phase2.store, {
        firstNonFinite: phase2.executor.firstNonFinite,
      });
      const stats = sim.machine.component("sip0.cube0.hbm").stats;
      return { endNs: sim.machine.env.now, records: sink.records, pass: report.pass, stats };
    }

    it("changes the simulated time only: the same op log without times, and --verify passes", async () => {
      const [builtin, closed] = await Promise.all([run(false), run(true)]);
      expect(builtin.pass).toBe(true);
      expect(closed.pass).toBe(true);
      expect(closed.endNs).not.toBe(builtin.endNs);
      expect(closed.records.length).toBe(builtin.records.length);
      expect(timeless(closed.records)).toEqual(timeless(builtin.records));
      // The same bytes went through the stack.
      expect(closed.stats.bytes).toBe(builtin.stats.bytes);
      expect(closed.stats.bytes).toBeGreaterThan(0);
    });
  });
});

/**
 * An op log without times and ids, in a canonical order: what two timing models must agree on
 * (another timing may start the ops of different PEs in another order, renumbering them).
 */
function timeless(records: readonly OpRecord[]): string[] {
  const key = new Map<number, string>();
  for (const { id, component_id, op_kind, op_name, params } of records) {
    key.set(id, JSON.stringify({ component_id, op_kind, op_name, params }));
  }
  return records
    .map(
      (record) =>
        `${key.get(record.id)} after ${JSON.stringify(record.dependency_ids.map((id) => key.get(id)))}`,
    )
    .sort();
}
