import { MemorySink, OpLogger } from "@kb/oplog";
import type { PeCommand } from "@kb/spec";
import { describe, expect, it } from "vitest";
import { tcmAddress } from "./machine.js";
import { machineOf } from "./test-support.js";

const tcm = (pe: number, offset: number, cube = 0) => tcmAddress(0, cube, pe, offset);
const send = (direction: string, bytes = 4096): PeCommand => ({
  kind: "ipcq_send",
  direction,
  src: tcm(0, 0),
  bytes,
  dtype: "f16",
});
const recv = (direction: string, bytes = 4096, dst: number | null = null): PeCommand => ({
  kind: "ipcq_recv",
  direction,
  bytes,
  dtype: "f16",
  mode: dst === null ? "return_slot" : "copy_to_dst",
  dst,
  consume: true,
});

describe("IPCQ on the default topology", () => {
  it("an uncontended send takes idealTransferNs of its route; the receive adds the slot read", () => {
    const sink = new MemorySink();
    const machine = machineOf("default", { opLogger: new OpLogger(sink) });
    const sent = machine.submit("sip0.cube0.pe0", [send("east")]);
    const got = machine.submit("sip0.cube0.pe1", [recv("west", 4096, tcm(1, 8192))]);
    machine.run();
    // pe0.pe_dma -> r0c0 -> r0c1 -> pe1.pe_dma: 0.005 + 1 (first flit) + 0.01 + 1 + 0.005 ns of
    // latency, 4096 B at the 64 GB/s pe_to_noc links = 64 ns.
    expect(sent.value).toBeCloseTo(66.02, 9);
    // Slot read: ipcq_slot_read_ns 2 + 4096 B / 512 GB/s = 10 ns.
    expect(got.value).toBeCloseTo(76.02, 9);
    // Both moves are data ops: the send into PE1's slot (its TCM region's "west" queue, slot 0 at
    // 4 MiB - 8 x 4 x 16 KiB + 1 x 4 x 16 KiB), the copy out of the slot.
    const slot = tcm(1, 4 * 2 ** 20 - 8 * 4 * 16384 + 4 * 16384);
    expect(sink.records.map((r) => [r.op_name, r.component_id, r.params])).toEqual([
      [
        "ipcq_send",
        "sip0.cube0.pe0.pe_dma",
        { src_addr: tcm(0, 0), dst_addr: slot, nbytes: 4096, src_space: "tcm", dst_space: "tcm" },
      ],
      [
        "ipcq_recv",
        "sip0.cube0.pe1.pe_dma",
        { src_addr: slot, dst_addr: tcm(1, 8192), nbytes: 4096, src_space: "tcm", dst_space: "tcm" },
      ],
    ]);
  });

  it("credits: a full queue (4 slots) blocks the sender until the receiver frees a slot", () => {
    const machine = machineOf("default");
    const sent = machine.submit(
      "sip0.cube0.pe0",
      [1, 2, 3, 4, 5].map(() => send("east")),
    );
    const got = machine.submit("sip0.cube0.pe1", [
      { kind: "delay", ns: 1000 },
      ...[1, 2, 3, 4, 5].map(() => recv("west")),
    ]);
    machine.run();
    // Sends 1-4 leave at once and fill the slots (back to back on the link). Send 5 waits for a
    // credit: the first receive reads 1000 -> 1010, its credit takes the route's latency 2.02 ns
    // back (1012.02), then the send takes 66.02 ns: 1078.04. The receiver reads 1010, 1020, 1030,
    // 1040, and the fifth payload on arrival: 1078.04 + 10.
    expect(sent.value).toBeCloseTo(1078.04, 9);
    expect(got.value).toBeCloseTo(1088.04, 9);
  });

  it("a credit does not wait behind data its receiver has queued on the same port", () => {
    const machine = machineOf("default");
    const sent = machine.submit(
      "sip0.cube0.pe0",
      [1, 2, 3, 4, 5].map(() => send("east")),
    );
    // PE1 queues 4 x 16 KiB east (1024 ns of its 64 GB/s port from 1000) and then receives from
    // PE0; its credits to PE0 leave through the same port.
    const got = machine.submit("sip0.cube0.pe1", [
      { kind: "delay", ns: 1000 },
      ...[1, 2, 3, 4].map(() => send("east", 16384)),
      ...[1, 2, 3, 4, 5].map(() => recv("west")),
    ]);
    machine.submit(
      "sip0.cube0.pe2",
      [1, 2, 3, 4].map(() => recv("west", 16384)),
    );
    machine.run();
    // As without the east traffic: the first credit is back at 1010 + 2.02, not after the port
    // drains (2024), so the fifth send arrives at 1078.04. PE1's program ends when its own last
    // payload reaches PE2: 1000 + 4 x 16384 / 64 + 2.02 = 2026.02.
    expect(sent.value).toBeCloseTo(1078.04, 9);
    expect(got.value).toBeCloseTo(2026.02, 9);
  });

  it("a slot read in place stays the kernel's until its next receive from that direction", () => {
    const machine = machineOf("default");
    const sent = machine.submit(
      "sip0.cube0.pe0",
      [1, 2, 3, 4, 5].map(() => send("east")),
    );
    const got = machine.submit("sip0.cube0.pe1", [
      { kind: "delay", ns: 1000 },
      recv("west"), // in place: 1000 -> 1010, slot held
      { kind: "delay", ns: 500 },
      ...[2, 3, 4, 5].map(() => recv("west")),
    ]);
    machine.run();
    // The first slot's credit leaves only when the second receive starts (1510): 1512.02 at the
    // sender, + 66.02 = 1578.04. The receiver reads 1510-1520, -1530, -1540, then the fifth at
    // 1578.04 + 10.
    expect(sent.value).toBeCloseTo(1578.04, 9);
    expect(got.value).toBeCloseTo(1588.04, 9);
  });

  it("reaches the next cube over UCIe; a missing neighbour, an oversized payload and a size mismatch are located errors", () => {
    const machine = machineOf("default");
    const across = machine.submit("sip0.cube0.pe0", [send("cube_next", 1024)]);
    const got = machine.submit("sip0.cube1.pe0", [recv("cube_prev", 1024)]);
    machine.run();
    expect(got.value as number).toBeGreaterThan(across.value as number);
    const errors: [PeCommand, RegExp][] = [
      [
        send("west"),
        /sip0\.cube0\.pe0 command commands#0 \(ipcq_send\): PE sip0\.cube0\.pe0 has no "west" neighbour \(it is in grid column 0\)/,
      ],
      [send("up"), /unknown IPCQ direction "up"; directions: east, west, north, south, cube_next/],
      [
        send("east", 20000),
        /an IPCQ payload is 1 to 16384 bytes \(the slot size, pe_cpu param ipcq_slot_bytes\), got 20000/,
      ],
    ];
    for (const [command, message] of errors) {
      const m = machineOf("default");
      const done = m.submit("sip0.cube0.pe0", [command]);
      expect(() => m.run(done)).toThrow(message);
    }
    const m = machineOf("default");
    m.submit("sip0.cube0.pe0", [send("east", 2048)]);
    const mismatch = m.submit("sip0.cube0.pe1", [recv("west", 4096)]);
    expect(() => m.run(mismatch)).toThrow(
      /received 2048 bytes from sip0\.cube0\.pe0 \(west\), but the recv expects 4096/,
    );
  });
});
