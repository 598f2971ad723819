import { encodeAddress, idealTransferNs } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { machineOf } from "./test-support.js";
import { Transfer } from "./transfer.js";

const hbm = (offset: number, cube = 0) => encodeAddress({ sip: 0, cube, space: "hbm", offset });
const block = (address: number, bytes: number) => ({ address, rows: 1, rowBytes: bytes, stride: bytes });

describe("fabric timing (hand-computed against the topology's formula)", () => {
  it("an uncontended 32 KiB HBM read from one pseudo-channel: request + access + idealTransferNs(data)", () => {
    // interleave 64 KiB: the whole 32 KiB at offset 0 lives in ch0.pc0.
    const machine = machineOf({ cube: { hbm: { interleave_bytes: 65536, pc_bw_gbs: 25.6 } } });
    const dma = "sip0.cube0.pe0.pe_dma";
    const pc = "sip0.cube0.hbm.ch0.pc0";
    const transfer = new Transfer(machine.env);
    machine.fabric.read(dma, block(hbm(0), 32768), transfer);
    transfer.seal();
    machine.run(transfer.done);
    const request = machine.graph.route(dma, pc);
    const response = machine.graph.route(pc, dma);
    // request: pe_dma -> xbar0 (2 mm = 0.02 ns) + xbar0 first flit 1 ns + xbar0 -> ch0 (1 mm = 0.01 ns)
    expect(request.latencyNs).toBeCloseTo(1.03, 9);
    // data: 32768 B / 25.6 GB/s (the PC is the narrowest link) = 1280 ns, + 1.03 ns of latency
    expect(idealTransferNs(response, 32768)).toBeCloseTo(1281.03, 9);
    const expected = idealTransferNs(request, 0) + 40 + idealTransferNs(response, 32768);
    expect(machine.env.now).toBeCloseTo(expected, 9);
    expect(machine.env.now).toBeCloseTo(1322.06, 9);
  });

  it("an uncontended 32 KiB HBM write commits at idealTransferNs + access latency", () => {
    const machine = machineOf({ cube: { hbm: { interleave_bytes: 65536, pc_bw_gbs: 25.6 } } });
    const dma = "sip0.cube0.pe0.pe_dma";
    const transfer = new Transfer(machine.env);
    machine.fabric.write(dma, block(hbm(0), 32768), transfer);
    transfer.seal();
    machine.run(transfer.done);
    const route = machine.graph.route(dma, "sip0.cube0.hbm.ch0.pc0");
    expect(machine.env.now).toBeCloseTo(idealTransferNs(route, 32768) + 40, 9);
  });

  it("a 32 KiB read spread over 16 pseudo-channels is bounded by the PE's 128 GB/s XBAR link", () => {
    const machine = machineOf("default");
    const transfer = new Transfer(machine.env);
    machine.fabric.read("sip0.cube0.pe0.pe_dma", block(hbm(0), 32768), transfer);
    transfer.seal();
    machine.run(transfer.done);
    // 32768 / 128 = 256 ns on the xbar0 -> pe_dma link, after the first response arrives
    // (>= request 1.03 + access 40 + one 2 KiB PC burst 80); never less than that link's time.
    expect(machine.env.now).toBeGreaterThanOrEqual(41.03 + 256);
    expect(machine.env.now).toBeLessThan(41.03 + 80 + 256 + 20);
  });

  it("a 1 KiB read over the 4 PCs behind xbar0 travels as one bundle each way (hand-computed)", () => {
    // default.yaml, interleave 256: granules go ch0.pc0, ch1.pc0, ..., so 1 KiB at 0 is 256 B on
    // pc0 of channels 0-3, all behind xbar0.
    const machine = machineOf("default");
    const transfer = new Transfer(machine.env);
    machine.fabric.read("sip0.cube0.pe0.pe_dma", block(hbm(0), 1024), transfer);
    transfer.seal();
    machine.run(transfer.done);
    // Request bundle: pe_dma -> xbar0 0.02, xbar0 1 ns once for all 4, xbar0 -> ch 0.01: every PC
    // at 1.03, data from 41.03, 256 B = 10 ns of bus (to 51.03). Fan-in, each over its channel's
    // 64 GB/s link (4 ns): head 41.04, tail 51.04. xbar0 once: 41.04 -> 42.04 (tail 52.04);
    // xbar0 -> pe_dma carries 1024 B at 128 GB/s: 42.04 + 8 = 50.04 < 52.04, + 0.02 of wire.
    expect(machine.env.now).toBeCloseTo(52.06, 9);
    const xbar = machine.component("sip0.cube0.xbar0");
    expect(xbar?.stats.ops).toBe(2); // one request bundle, one response bundle
  });

  it("a 1 KiB write over the 4 PCs behind xbar0 commits with the bundle's tail (hand-computed)", () => {
    const machine = machineOf("default");
    const transfer = new Transfer(machine.env);
    machine.fabric.write("sip0.cube0.pe0.pe_dma", block(hbm(0), 1024), transfer);
    transfer.seal();
    machine.run(transfer.done);
    // pe_dma -> xbar0 carries 1024 B at 128 GB/s: head 0.02, tail 8 + 0.02; xbar0 1 ns (head
    // 1.02, tail 9.02); each PC's 256 B over its channel link (4 ns): head 1.03, tail 9.03; the
    // bus takes 10 ns from the head (to 11.03, after the tail); committed at 11.03 + 40.
    expect(machine.env.now).toBeCloseTo(51.03, 9);
    expect(machine.component("sip0.cube0.xbar0")?.stats.ops).toBe(1);
  });

  it("two concurrent transfers on one link take twice as long as one", () => {
    const one = machineOf("default");
    one.run(one.hostWrite(hbm(0), 1 << 20));
    const single = one.env.now;
    const two = machineOf("default");
    const a = two.hostWrite(hbm(0), 1 << 20);
    const b = two.hostWrite(hbm(1 << 20), 1 << 20);
    two.run(two.env.allOf([a, b]));
    // host link 64 GB/s: 1 MiB = 16384 ns alone; two share it.
    const latency = single - (1 << 20) / 64;
    expect(single).toBeGreaterThan((1 << 20) / 64);
    expect(two.env.now - latency).toBeCloseTo(2 * (single - latency), 0);
  });
});

describe("PE_DMA dual egress (ADR-0014 D1)", () => {
  it("reaches local HBM over the XBAR and shared SRAM over the NOC, even from the far corner", () => {
    const machine = machineOf("default");
    const dma = "sip0.cube0.pe7.pe_dma"; // r1c3: its XBAR half is xbar1
    const toHbm = machine.fabric.path(dma, "sip0.cube0.hbm.ch0.pc0", "memory");
    expect(toHbm.stops.map((stop) => stop.component?.id ?? "-")).toEqual([
      dma,
      "sip0.cube0.xbar1",
      "sip0.cube0.bridge",
      "sip0.cube0.xbar0",
      "sip0.cube0.hbm",
    ]);
    // To SRAM the XBAR path (xbar1, bridge, xbar0, r0c0: 4 ns of first flits) is shorter than
    // the NOC path (r1c3 .. r0c0: 5 routers), but non-HBM traffic must use the NOC.
    const toSram = machine.fabric.path(dma, "sip0.cube0.sram", "memory");
    const ids = toSram.stops.map((stop) => stop.component?.id ?? "-");
    expect(ids[1]).toBe("sip0.cube0.noc.r1c3");
    expect(ids.some((id) => id.includes("xbar"))).toBe(false);
    expect(ids.at(-1)).toBe("sip0.cube0.sram");
    const back = machine.fabric.path("sip0.cube0.sram", dma, "sink");
    expect(back.stops.map((stop) => stop.component?.id ?? "-").some((id) => id.includes("xbar"))).toBe(false);
  });
});
