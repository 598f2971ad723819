import {
  buildMachine,
  type ForwardingComponent,
  type Machine,
  startTraffic,
  type TrafficPacket,
  Transfer,
  trafficPattern,
} from "@kb/components";
import { encodeAddress, expandTopology, resolveTopology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { bookSimMesh } from "../../../components/src/test-support.js";
import { defaultRegistry } from "../default-registry.js";
import { portHopParams } from "./port-hop.js";

/**
 * One cube, a 1 x 2 NOC (PE0 at r0c0, PE1 at r0c1), the SRAM on r0c0; every link 64 GB/s with
 * 1 ns of latency; routers `port_hop_v1` with 64 B flits, 1 ns cycles (64 GB/s per port) and a
 * 2 ns pipeline (`first_flit_ns`); the SRAM 64 GB/s with no access latency.
 */
function twoRouters(bufferFlits = 0) {
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
          impl: "port_hop_v1",
          params: { flit_bytes: 64, cycle_ns: 1, buffer_flits: bufferFlits },
        },
        sram: { bw_gbs: 64, latency_ns: 0 },
        links: { pe_to_noc: link, sram_to_noc: link },
      },
    }),
  );
}

const sram = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "sram", offset });

/** Writes 256 B (4 flits) to the SRAM from each PE_DMA in `from`, in order, at time 0; when each commits. */
function writes(machine: Machine, from: readonly number[]): number[] {
  const transfers = from.map((pe, index) => {
    const transfer = new Transfer(machine.env);
    machine.fabric.write(
      `sip0.cube0.pe${pe}.pe_dma`,
      { address: sram(index * 256), rows: 1, rowBytes: 256, stride: 256 },
      transfer,
    );
    transfer.seal();
    return transfer;
  });
  return transfers.map((transfer) => {
    machine.run(transfer.done);
    return transfer.doneAt;
  });
}

describe("port_hop_v1", () => {
  it("parses its params with the topology's first_flit_ns", () => {
    expect(portHopParams.parse({ first_flit_ns: 1 })).toEqual({
      first_flit_ns: 1,
      flit_bytes: 64,
      cycle_ns: 0.5,
      port_flits_per_cycle: 1,
      buffer_flits: 0,
      vcs: 0,
      vc_buffer_flits: 8,
    });
  });

  it("three writes contend for r0c0's output to the SRAM: the pipeline is a latency, the ports the occupancy (hand-computed)", () => {
    // A (PE0), B1 and B2 (PE1), 4 flits each (s = 4 ns per port), launched at 0.
    // A:  pe0 -> r0c0 link 0..4, head 1, tail 5. r0c0: max(1 + 2, in 0, out 0) = 3, ports to 7;
    //     link 3..7, head 4, tail max(5 + 2, 7) + 1 = 8; SRAM bus 4..8: committed at 8.
    // B1: pe1 -> r0c1 head 1, tail 5; r0c1: 3, ports to 7; link 3..7, head 4, tail 8.
    //     r0c0 (input from r0c1): max(4 + 2, in 0, out 7) = 7, ports to 11; link 7..11, head 8,
    //     tail 12; SRAM 8..12: 12.
    // B2: pe1's link 4..8, head 5, tail 9. r0c1: max(5 + 2, in 7, out 7) = 7, ports to 11; link
    //     7..11, head 8, tail 12. r0c0: max(8 + 2, in 11, out 11) = 11, ports to 15; link 11..15,
    //     head 12, tail 16; SRAM 12..16: 16.
    const machine = buildMachine(twoRouters(), { registry: defaultRegistry() });
    expect(writes(machine, [0, 1, 1])).toEqual([8, 12, 16]);
  });

  it("with buffer_flits, credits hold PE1's second write upstream until room is free (hand-computed)", () => {
    // Inputs of 4 flits. A and B1 as without credits (8, 12); each is admitted on its inputs.
    // B2: r0c1's input from PE1 holds B1 (4 of 4 flits) until B1's tail leaves r0c1 at 3 + 4 = 7:
    //     the source keeps B2 until 7. Link 7..11, head 8, tail 12; r0c1: max(8 + 2, 7, 7) = 10,
    //     but r0c0's input from r0c1 holds B1 until 7 + 4 = 11: B2 leaves r0c1 at 11; link
    //     11..15, head 12, tail max(12 + 2, 15) + 1 = 16. r0c0: max(12 + 2, 11, 11) = 14; link
    //     14..18, head 15, tail max(16 + 2, 18) + 1 = 19; SRAM 15..19: committed at 19.
    const machine = buildMachine(twoRouters(4), { registry: defaultRegistry() });
    expect(writes(machine, [0, 1, 1])).toEqual([8, 12, 19]);
    const router = (id: string) => machine.component<ForwardingComponent>(`sip0.cube0.noc.${id}`);
    expect(router("r0c1").stats.queueFullStalls).toBe(1);
    expect(router("r0c0").stats.queueFullStalls).toBe(1);
    expect(
      router("r0c0")
        .modelStats()
        .find((stat) => stat.name === "credit_stalls")?.total,
    ).toBe(1);
  });

  it("packets that share no port do not wait for each other: every packet of a 2 x 2 diagonal pattern takes 1 + 5H + P", () => {
    // `neighbor` on 2 x 2 sends each node to the opposite corner (H = 3 routers) over xy routes
    // that share no router port in the same direction; 16 GB/s links, 1 ns, routers 4 ns.
    const graph = bookSimMesh(2, 2, {
      routing: "xy",
      impl: "port_hop_v1",
      params: { flit_bytes: 16, cycle_ns: 1 },
    });
    const run = (impl: "port_hop_v1" | "transit_v1") => {
      const machine = buildMachine(
        impl === "port_hop_v1"
          ? graph
          : expandTopology(
              resolveTopology({
                ...graph.topology,
                cube: {
                  ...graph.topology.cube,
                  noc: { ...graph.topology.cube.noc, impl, params: {}, routing: "shortest" },
                },
              }),
            ),
        { registry: defaultRegistry() },
      );
      const packets: TrafficPacket[] = [];
      const traffic = startTraffic(machine, {
        endpoints: [0, 1, 2, 3].map((pe) => `sip0.cube0.pe${pe}.pe_dma`),
        destination: trafficPattern("neighbor", 2, 2),
        packetBytes: 16,
        packetsPerCycle: 0.0005,
        cycleNs: 1,
        seed: 0,
        delivered: (packet) => packets.push(packet),
      });
      machine.run(4100);
      traffic.stop();
      machine.run();
      return packets.map((packet) => packet.arrivedNs - packet.createdNs);
    };
    // 13 packets; with transit_v1 (and the routes it had, `shortest`), one of them (created 3 ns
    // after another that crosses the same router) waits 1 ns for the router's 4 ns of occupancy.
    expect(run("port_hop_v1")).toEqual(Array(13).fill(17));
    expect(run("transit_v1").filter((latency) => latency !== 17)).toEqual([18]);
  });
});
