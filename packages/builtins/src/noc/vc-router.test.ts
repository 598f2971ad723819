import {
  buildMachine,
  type Machine,
  startTraffic,
  type TrafficPacket,
  Transfer,
  trafficPattern,
} from "@kb/components";
import { MemorySink, OpLogger } from "@kb/oplog";
import type { PeCommand } from "@kb/spec";
import { encodeAddress, expandTopology, resolveTopology, tcmAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { bookSimMesh } from "../../../components/src/test-support.js";
import { defaultRegistry } from "../default-registry.js";

/**
 * One cube, a 1 x 2 NOC (PE0 at r0c0, PE1 at r0c1), the SRAM on r0c0; every link 64 GB/s with
 * 1 ns of latency; routers `port_hop_v1` with one virtual channel of 4 flits of 64 B per input, a
 * 1 ns cycle and a 4 ns pipeline (RC, VA, SA, then 1 cycle to cross); the SRAM 64 GB/s with no
 * access latency.
 */
function twoVcRouters(vcs = 1, cols = 2) {
  const link = { bw_gbs: 64, latency_ns: 1 };
  return expandTopology(
    resolveTopology({
      name: "two-vc-routers",
      system: { sips: 1 },
      sip: { cubes: 1 },
      cube: {
        noc: {
          rows: 1,
          cols,
          link,
          first_flit_ns: 4,
          routing: "xy",
          impl: "port_hop_v1",
          params: { flit_bytes: 64, cycle_ns: 1, vcs, vc_buffer_flits: 4 },
        },
        sram: { bw_gbs: 64, latency_ns: 0 },
        links: { pe_to_noc: link, sram_to_noc: link },
      },
    }),
  );
}

const sram = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "sram", offset });

/** Writes `bytes` to the SRAM from each PE_DMA in `from`, in order, at time 0; when each commits. */
function writes(machine: Machine, from: readonly number[], bytes = 256): number[] {
  const transfers = from.map((pe, index) => {
    const transfer = new Transfer(machine.env);
    machine.fabric.write(
      `sip0.cube0.pe${pe}.pe_dma`,
      { address: sram(index * 256), rows: 1, rowBytes: bytes, stride: 256 },
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

/** Writes `bytes` to the SRAM from PE_DMA `pe` at each `[pe, time]`, in order; when each commits. */
function timedWrites(machine: Machine, from: readonly (readonly [number, number])[], bytes = 256): number[] {
  const transfers = from.map(() => new Transfer(machine.env));
  from.forEach(([pe, at], index) => {
    if (at > machine.env.now) machine.run(at);
    const transfer = transfers[index] as Transfer;
    machine.fabric.write(
      `sip0.cube0.pe${pe}.pe_dma`,
      { address: sram(index * 256), rows: 1, rowBytes: bytes, stride: 256 },
      transfer,
    );
    transfer.seal();
  });
  return transfers.map((transfer) => {
    machine.run(transfer.done);
    return transfer.doneAt;
  });
}

/** Sends `bytes` from PE_DMA `pe` to PE0's DMA (a sink) at each `[pe, time]`; when each tail arrives. */
function timedSends(machine: Machine, from: readonly (readonly [number, number])[], bytes = 256): number[] {
  const transfers = from.map(() => new Transfer(machine.env));
  from.forEach(([pe, at], index) => {
    if (at > machine.env.now) machine.run(at);
    const transfer = transfers[index] as Transfer;
    transfer.expect();
    machine.fabric.notify(`sip0.cube0.pe${pe}.pe_dma`, "sip0.cube0.pe0.pe_dma", transfer, bytes);
    transfer.seal();
  });
  return transfers.map((transfer) => {
    machine.run(transfer.done);
    return transfer.doneAt;
  });
}

describe("port_hop_v1 with virtual channels (BookSim's iq router)", () => {
  it("one VC of 4 flits: VC allocation waits for the credit of the packet ahead (hand-computed)", () => {
    // 4-flit writes A (PE0), B1 and B2 (PE1) at 0. A router takes a head through RC, VA and SA
    // in the cycles (ticks) after its arrival, then leaves at SA + 2; the tail leaves 4 ns later.
    // A:  pe0 -> r0c0 head 1. RC 1, VA 2, SA 3: leaves 5, ports busy to tick 7; head at the
    //     SRAM 6, tail 5 + 4 + 1 = 10: committed at 10.
    // B1: pe1 -> r0c1 head 1; RC 1, VA 2 (r0c0's VC: 4 credits), SA 3: leaves 5 (credits 0);
    //     head at r0c0 6. RC 6, VA 7 (the SRAM VC is free from tick 7, after A's tail), SA 8:
    //     leaves 10, tail at the SRAM 15. r0c1 gets its 4 credits back at tick 8 + 4 = 12.
    // B2: r0c1's input buffer is full with B1 until B1's tail leaves at tick 3 + 4 = 7: the
    //     source sends B2 at 7, head at r0c1 8. RC 8, VA waits for a credit of r0c0's VC (back at
    //     12): VA 12, SA 13, leaves 15; head at r0c0 16: RC 16, VA 17, SA 18, leaves 20, tail at
    //     the SRAM 25.
    const machine = buildMachine(twoVcRouters(), { registry: defaultRegistry() });
    expect(writes(machine, [0, 1, 1])).toEqual([10, 15, 25]);
  });

  it("two VCs: a packet does not wait behind another in the same input's other VC", () => {
    // As above with 2 VCs: B2 enters r0c1's second VC at once (head at r0c1 5, after B1 used the
    // link 0..4): RC 5, VA 6 (r0c0's second VC), SA 7 (r0c1's output is busy with B1 to 7):
    // leaves 9, head at r0c0 10: RC 10, VA 11 (the SRAM's VC 1), SA 12 (the output is busy with
    // B1 to 8+4 = 12), leaves 14, tail at the SRAM 19.
    const machine = buildMachine(twoVcRouters(2), { registry: defaultRegistry() });
    expect(writes(machine, [0, 1, 1])).toEqual([10, 15, 19]);
  });

  it("one VC: 1-flit packets in one VC follow each other 3 cycles apart (RC, VA, SA of each head)", () => {
    // Three 1-flit writes from PE0 (heads at r0c0 at 1, 2, 3). A1: RC 1, VA 2, SA 3, leaves 5,
    // tail at the SRAM 5 + 1 + 1 = 7. A2 is routed only once A1 has left its VC: RC 4, VA 5,
    // SA 6, leaves 8, at the SRAM 10. A3: RC 7, VA 8, SA 9, leaves 11, at the SRAM 13.
    const machine = buildMachine(twoVcRouters(), { registry: defaultRegistry() });
    expect(writes(machine, [0, 0, 0], 64)).toEqual([7, 10, 13]);
  });

  it("two VCs: 4-flit packets from two inputs interleave flit by flit between routers and into their sink", () => {
    // 1 x 3 mesh; C: 256 B from PE2 to PE0 at 0 ns, B: 256 B from PE1 to PE0 at 5 ns (ends at
    // PE0's DMA: a sink, only the tail counts). r0c1's inputs: 0 r0c0, 1 r0c2, 2 PE1.
    // C at r0c2: head 1 (flits 1..4), RC 1, VA 2, SA 3, 4, 5, 6: leaves 5..8, at r0c1 6..9.
    // B at r0c1: head 6 (flits 6..9). RC 6 both; VA 7: both output VCs grant input VC 2 (C,
    // nearer the pointer 0), C takes VC 0; B takes VC 1 at 8. SA to r0c0, one flit a tick,
    // iSLIP's output pointer passing the turn: C 8, B 9, C 10, B 11, C 12, B 13, C 14, B 15:
    // C at r0c0 11, 13, 15, 17; B 12, 14, 16, 18 (both on r0c0's input 0, VCs 0 and 1).
    // r0c0: C RC 11, VA 12, SA from 13; B RC 12, VA 13, SA from 14; the input's VCs take
    // turns: C 13, B 14, C 15, B 16, C 17, B 18, C 19, B 20. Tails leave 21 and 22, cross
    // 1 ns each and the link: C at PE0 23, B 24. (Holding the switch per packet: 20 and 24.)
    const machine = buildMachine(twoVcRouters(2, 3), { registry: defaultRegistry() });
    expect(
      timedSends(machine, [
        [2, 0],
        [1, 5],
      ]),
    ).toEqual([23, 24]);
  });

  it("two VCs: towards a memory a packet crosses whole, once its interleaved flits are all in", () => {
    // As above, but writes to the SRAM on r0c0 (a memory: the framework moves whole packets).
    // C's flits reach r0c0 at 11, 13, 15, 17: RC 11, VA 12, SA at the first tick s with flit f
    // in by s + f and known (granted at r0c1 before s): s = 15 (its tail granted at r0c1 at 14).
    // Leaves 17, tail at the SRAM 17 + 4 + 1 = 22. B (flits 12, 14, 16, 18; VC 1 of the same
    // input) waits for that input, busy with C until 19: leaves 21, committed at 26.
    const machine = buildMachine(twoVcRouters(2, 3), { registry: defaultRegistry() });
    expect(
      timedWrites(machine, [
        [2, 0],
        [1, 5],
      ]),
    ).toEqual([22, 26]);
  });

  it("zero-load: every packet of a 2 x 2 diagonal pattern takes 1 + 5H + P, as in BookSim", () => {
    // `neighbor` on 2 x 2 sends each node to the opposite corner: H = 3 routers, 16 B flits.
    const graph = bookSimMesh(2, 2, {
      routing: "xy",
      impl: "port_hop_v1",
      params: { flit_bytes: 16, cycle_ns: 1, vcs: 2 },
    });
    for (const flits of [1, 4]) {
      const machine = buildMachine(graph, { registry: defaultRegistry() });
      const packets: TrafficPacket[] = [];
      const traffic = startTraffic(machine, {
        endpoints: [0, 1, 2, 3].map((pe) => `sip0.cube0.pe${pe}.pe_dma`),
        destination: trafficPattern("neighbor", 2, 2),
        packetBytes: 16 * flits,
        packetsPerCycle: 0.0005,
        cycleNs: 1,
        seed: 0,
        delivered: (packet) => packets.push(packet),
      });
      machine.run(4100);
      traffic.stop();
      machine.run();
      expect(packets.map((packet) => packet.arrivedNs - packet.createdNs)).toEqual(
        Array(13).fill(1 + 5 * 3 + flits),
      );
    }
  });

  it("IPC queue: a short message overtakes a long one sent before it, and is handed over in send order", () => {
    // PE1 sends A (512 B, 8 flits) then B (64 B, 1 flit) west at 0; PE0 receives A then B
    // (copies out). Flits of A at r0c1 1..8 (its link busy 0..8), B's head 9. r0c1 -> r0c0 is
    // credit-bound (4 per VC): A's flits 0-3 cross r0c1 (SA) at 3..6, reach r0c0 at SA + 3 =
    // 6..9 (RC 6, VA 7) and cross it at 8..11; each credit is back at r0c1 the tick after:
    // flit 4 crosses r0c1 at 9, 5 at 10. B on VC 1: RC 9, VA 10 (VC 1 of r0c0's input), SA 11,
    // winning the input from A (the input's VC pointer is at VC 1 after A's flit at 10): A's
    // flits 6, 7 cross r0c1 at 12, 13. At r0c0 flit k of A crosses at max(r0c1's SA + 3,
    // previous + 1): 4..7 at 12, 13, 15, 16. B's head at r0c0 14: RC 14, VA 15 (the sink's
    // VC 1, A holds VC 0), SA 16, winning over A's tail (the pointer at VC 1 after A's flit at
    // 15), which crosses at 17. Tails leave r0c0 at SA + 2 and cross 1 ns and the 1 ns link:
    // B at PE0 at 20, A at 21.
    // In-order delivery: A handed over at 21, B at max(20, 21) = 21. PE0 reads A's slot
    // (2 ns + 512 B / 512 GB/s): done at 24; then B's, already there: 24 + 2 + 64 / 512 = 26.125.
    const sink = new MemorySink();
    const machine = buildMachine(twoVcRouters(2), {
      registry: defaultRegistry(),
      opLogger: new OpLogger(sink),
    });
    const tcm = (pe: number, offset: number) => tcmAddress(0, 0, pe, offset);
    const send = (bytes: number): PeCommand => ({
      kind: "ipcq_send",
      direction: "west",
      src: tcm(1, 0),
      bytes,
      dtype: "u8",
    });
    const recv = (bytes: number): PeCommand => ({
      kind: "ipcq_recv",
      direction: "east",
      bytes,
      dtype: "u8",
      mode: "copy_to_dst",
      dst: tcm(0, 0),
      consume: true,
    });
    machine.submit("sip0.cube0.pe1", [send(512), send(64)]);
    const got = machine.submit("sip0.cube0.pe0", [recv(512), recv(64)]);
    machine.run();
    const ends = (op: string) =>
      sink.records
        .filter((r) => r.op_name === op)
        .map((r) => ["nbytes" in r.params ? r.params.nbytes : -1, r.t_end]);
    // The tails arrived out of order (B first) ...
    expect(ends("ipcq_send")).toEqual([
      [512, 21],
      [64, 20],
    ]);
    // ... and were received in order.
    expect(ends("ipcq_recv")).toEqual([
      [512, 24],
      [64, 26.125],
    ]);
    expect(got.value).toBe(26.125);
  });
});
