import {
  buildMachine,
  type ForwardingComponent,
  type HopPacket,
  type HopPart,
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
import { portHopModel, portHopParams } from "./port-hop.js";

/**
 * One cube, a 1 x 2 NOC (PE0 at r0c0, PE1 at r0c1), the SRAM on r0c0; every link 64 GB/s with
 * 1 ns of latency; routers `port_hop_v1` with 64 B flits, 1 ns cycles (64 GB/s per port) and a
 * 2 ns pipeline (`first_flit_ns`); the SRAM 64 GB/s with no access latency.
 */
function twoRouters(bufferFlits = 0, linkGbs = 64, portRate: "link" | "cycle" = "link") {
  const link = { bw_gbs: linkGbs, latency_ns: 1 };
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
          params: { flit_bytes: 64, cycle_ns: 1, buffer_flits: bufferFlits, port_rate: portRate },
        },
        sram: { bw_gbs: linkGbs, latency_ns: 0 },
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
      port_rate: "link",
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

  it("a port moves its link's bandwidth (port_rate: link), not one flit per cycle (hand-computed)", () => {
    // The same three writes with 128 GB/s links and SRAM: a 4-flit packet takes 2 ns on a link;
    // the ports' cycle rate is still 64 B per 1 ns. A tail leaves a hop at
    // max(its arrival + 2, the link's end) and arrives 1 ns later.
    // port_rate: link, s = 4 x 64 B / 128 GB/s = 2 ns per port:
    // A:  pe0 link 0..2, head 1, tail 3. r0c0: max(1 + 2, 0, 0) = 3, ports to 5; link 3..5,
    //     head 4, tail max(3 + 2, 5) + 1 = 6; SRAM 4..6: 6.
    // B1: r0c1: 3, ports to 5; link 3..5, head 4, tail 6. r0c0: max(4 + 2, in 0, out 5) = 6,
    //     ports to 8; link 6..8, head 7, tail max(6 + 2, 8) + 1 = 9; SRAM 7..9: 9.
    // B2: pe1 link 2..4, head 3, tail 5. r0c1: max(3 + 2, 5, 5) = 5, ports to 7; link 5..7,
    //     head 6, tail 8. r0c0: max(6 + 2, in 8, out 8) = 8; link 8..10, head 9, tail 11: 11.
    expect(writes(buildMachine(twoRouters(0, 128), { registry: defaultRegistry() }), [0, 1, 1])).toEqual([
      6, 9, 11,
    ]);
    // port_rate: cycle, s = 4 flits x 1 ns = 4 ns per port whatever the link:
    // A:  as above (its ports are free): 6.
    // B1: r0c1: 3, ports to 7; link 3..5, head 4, tail 6. r0c0: max(6, in 0, out 7) = 7; link
    //     7..9, head 8, tail max(6 + 2, 9) + 1 = 10; SRAM 8..10: 10.
    // B2: r0c1: max(5, 7, 7) = 7, ports to 11; link 7..9, head 8, tail 10. r0c0: max(8 + 2,
    //     11, 11) = 11; link 11..13, head 12, tail max(10 + 2, 13) + 1 = 14: 14.
    expect(
      writes(buildMachine(twoRouters(0, 128, "cycle"), { registry: defaultRegistry() }), [0, 1, 1]),
    ).toEqual([6, 10, 14]);
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

  it("a bundle's packets hold each port they cross for their own bytes, at that port's link rate (hand-computed)", () => {
    // Inputs a (128 GB/s: 0.5 ns a 64 B flit) and b (64 GB/s: 1 ns); outputs x, y (64 GB/s) and z
    // (256 GB/s: 0.25 ns); first_flit_ns 1. Every packet's head arrives at `at`:
    // 1 fan-out a -> x, y, 256 B each, at 0: head 1; a busy 8 flits to 5, x and y 4 flits to 5.
    // 2 b -> z, 256 B, at 0: head 1; b to 1 + 4 = 5, z to 1 + 1 = 2.
    // 3 b -> z, 64 B, at 0: b is busy: head 5; b to 6, z to 5.25.
    // 4 fan-in a -> z and b -> z, 128 B each, at 2: head max(3, a 5, b 6, z 5.25) = 6; a to 7,
    //   b to 8, z 4 flits to 7.
    // 5 a -> x, 64 B, at 3: head max(4, a 7, x 5) = 7.
    // port_wait_ns: 0 + 0 + 4 + 3 + 3 = 10. The service counted is the slowest port's: 4, 4, 1,
    // 2 and 1 ns (5's 64 B take 0.5 ns on a, 1 ns on x).
    const service: number[][] = [];
    const context = {
      env: { now: 0 },
      id: "hop",
      inputs: ["a", "b"],
      outputs: ["x", "y", "z"],
      inputGbs: [128, 64],
      outputGbs: [64, 64, 256],
      send: () => {},
      resume: () => {},
      service: (startNs: number, ns: number) => service.push([startNs, ns]),
    } as unknown as Parameters<typeof portHopModel>[0];
    const model = portHopModel(context, portHopParams.parse({ first_flit_ns: 1 }));
    const packet = (
      at: number,
      inPort: number,
      outPort: number,
      bytes: number,
      parts: HopPart[] | null = null,
    ) =>
      ({
        headNs: at,
        inPort,
        outPort,
        bytes,
        parts,
        flits: (flitBytes: number) => Math.max(1, Math.ceil(bytes / flitBytes)),
      }) as unknown as HopPacket;
    const heads = [
      packet(0, 0, 0, 512, [
        { inPort: 0, outPort: 0, bytes: 256 },
        { inPort: 0, outPort: 1, bytes: 256 },
      ]),
      packet(0, 1, 2, 256),
      packet(0, 1, 2, 64),
      packet(2, 0, 2, 256, [
        { inPort: 0, outPort: 2, bytes: 128 },
        { inPort: 1, outPort: 2, bytes: 128 },
      ]),
      packet(3, 0, 0, 64),
    ].map((hop) => model.arrive(hop));
    expect(heads).toEqual([1, 1, 5, 6, 7]);
    expect(service).toEqual([
      [1, 4],
      [1, 4],
      [5, 1],
      [6, 2],
      [7, 1],
    ]);
    expect(model.stats?.().find((stat) => stat.name === "port_wait_ns")?.total).toBe(10);
  });
});
