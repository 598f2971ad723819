import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { definePlugin } from "./define.js";
import {
  defineForwardingModel,
  type ForwardingModel,
  type ForwardingModelContext,
  forwardingTopologyParams,
  type HopPacket,
} from "./forwarding.js";
import type { Machine } from "./machine.js";
import { machineOf } from "./test-support.js";
import { Transfer } from "./transfer.js";

const PE0_DMA = "sip0.cube0.pe0.pe_dma";
const SRAM = "sip0.cube0.sram";

/** default.yaml with `create` as the model of every NOC router (through a plug-in). */
function machineWith(create: (context: ForwardingModelContext) => ForwardingModel): Machine {
  const model = defineForwardingModel({
    kind: "noc_router",
    impl: "test_hop",
    description: "A router model under test.",
    params: forwardingTopologyParams,
    create,
  });
  const plugin = definePlugin({
    meta: { name: "kb-plugin-test-hop", version: "1.0.0" },
    components: [model],
  });
  return machineOf(
    {
      ...DEFAULT_SHAPE,
      plugins: ["kb-plugin-test-hop"],
      cube: { ...DEFAULT_SHAPE.cube, noc: { rows: 2, cols: 4, impl: "kb-plugin-test-hop:test_hop" } },
    },
    { plugins: [plugin] },
  );
}

/** default.yaml's shape, as an object. */
const DEFAULT_SHAPE = {
  system: { sips: 1 },
  sip: { cubes: 2, ucie: { pattern: "ring", bw_gbs: 256, length_mm: 2 } },
  cube: { hbm: { channels: 8, pseudo_channels: 2, pc_bw_gbs: 25.6, interleave_bytes: 256 } },
};

/** PE0's DMA writes 256 B to the shared SRAM (through its router r0c0): when it commits. */
function writeToSram(machine: Machine): number {
  const transfer = new Transfer(machine.env);
  const address = encodeAddress({ sip: 0, cube: 0, space: "sram", offset: 0 });
  machine.fabric.write(PE0_DMA, { address, rows: 1, rowBytes: 256, stride: 256 }, transfer);
  transfer.seal();
  machine.run(transfer.done);
  return machine.env.now;
}

// default.yaml: pe_dma -> r0c0 is 64 GB/s, 0.5 mm (0.005 ns); r0c0 -> SRAM 256 GB/s, 1 mm
// (0.01 ns); the SRAM takes 256 GB/s with 5 ns of access; first_flit_ns 1.
// transit_v1: the 256 B head reaches r0c0 at 0.005, its tail at 4.005; it leaves at 1.005, the
// link carries it 1.005..2.005; tail max(4.005 + 1, 2.005) + 0.01 = 5.015, head 1.015; the SRAM's
// bus 1.015..2.015; committed at max(2.015, 5.015) + 5 = 10.015.
const TRANSIT_NS = 10.015;

describe("defineForwardingModel: the framework's side of a router", () => {
  it("gives the model a documented view of the packet: kind, bytes, flits, ports and neighbours, times, ends", () => {
    const seen: Record<string, unknown>[] = [];
    const machine = machineWith((context) => ({
      arrive(packet: HopPacket) {
        seen.push({
          node: context.node.id,
          kind: packet.kind,
          bytes: packet.bytes,
          flits: packet.flits(64),
          from: packet.from,
          fromPort: context.inputs[packet.inPort],
          to: packet.to,
          toPort: context.outputs[packet.outPort],
          headNs: packet.headNs,
          tailNs: packet.tailNs,
          source: packet.source,
          destination: packet.destination,
          requester: packet.requester,
        });
        return packet.headNs + 1;
      },
    }));
    // A transit_v1 timing (head + first_flit_ns) on the contract: the same time.
    expect(writeToSram(machine)).toBeCloseTo(TRANSIT_NS, 9);
    expect(seen).toHaveLength(1);
    const [view] = seen as [Record<string, number>];
    expect(view).toEqual({
      node: "sip0.cube0.noc.r0c0",
      kind: "write",
      bytes: 256,
      flits: 4,
      from: PE0_DMA,
      fromPort: PE0_DMA,
      to: SRAM,
      toPort: SRAM,
      headNs: view.headNs,
      tailNs: view.tailNs,
      source: PE0_DMA,
      destination: SRAM,
      requester: PE0_DMA,
    });
    expect(view.headNs).toBeCloseTo(0.005, 12);
    expect(view.tailNs).toBeCloseTo(4.005, 12);
  });

  it("a model that holds a packet and sends it 10 ns later delays its head by 10 - 1 ns (hand-computed)", () => {
    const machine = machineWith((context) => ({
      arrive(packet) {
        context.env.timeout(10).addCallback(() => context.send(packet, context.env.now));
        return undefined;
      },
    }));
    // Head leaves r0c0 at 10.005: link 10.005..11.005, tail max(4.005 + 1, 10.005, 11.005) +
    // 0.01 = 11.015, head 10.015; the SRAM 10.015..11.015; committed at 11.015 + 5.
    expect(writeToSram(machine)).toBeCloseTo(16.015, 9);
  });

  it("a paced send: the tail leaves when the model says and the link adds only its latency (hand-computed)", () => {
    const machine = machineWith((context) => ({
      arrive(packet) {
        context.send(packet, packet.headNs + 1, packet.headNs + 3);
        return undefined;
      },
    }));
    // Head leaves r0c0 at 1.005, tail at 3.005 (not its arrival 4.005 + first_flit_ns): at the
    // SRAM head 1.015, tail 3.015; the bus 1.015..2.015; committed at max(2.015, 3.015) + 5.
    expect(writeToSram(machine)).toBeCloseTo(8.015, 9);
    const backwards = machineWith((context) => ({
      arrive(packet) {
        context.send(packet, packet.headNs + 1, packet.headNs);
        return undefined;
      },
    }));
    expect(() => writeToSram(backwards)).toThrow(
      expect.objectContaining({
        code: "MACHINE_INVARIANT",
        message: expect.stringMatching(
          /sent "256B" with its tail leaving at 0\.005 ns, before its head \(1\.005 ns\)/,
        ),
      }),
    );
  });

  it("admit: a refused packet waits at its source until the model resumes the input (back-pressure)", () => {
    const tries: number[] = [];
    const machine = machineWith((context) => ({
      admit(packet) {
        tries.push(context.env.now);
        if (tries.length > 1) return true;
        context.env.timeout(50).addCallback(() => context.resume(packet.inPort));
        return false;
      },
      arrive: (packet) => packet.headNs + 1,
    }));
    // The whole transit timing, 50 ns later: the head leaves the PE_DMA at 50, not 0.
    expect(writeToSram(machine)).toBeCloseTo(TRANSIT_NS + 50, 9);
    expect(tries).toEqual([0, 50]);
    expect(machine.component("sip0.cube0.noc.r0c0").stats.queueFullStalls).toBe(1);
  });

  it("a model that holds a packet for ever deadlocks the run with a message naming the hop and what to call", () => {
    const silent = machineWith(() => ({ arrive: () => undefined }));
    expect(() => writeToSram(silent)).toThrow(
      expect.objectContaining({
        code: "DES_DEADLOCK",
        message: expect.stringMatching(
          /Forwarding models hold packets: sip0\.cube0\.noc\.r0c0 \(kb-plugin-test-hop:test_hop\): 1 held by arrive\(\)\. A model whose arrive\(\) returns undefined must call context\.send\(packet, headNs\) later/,
        ),
      }),
    );
  });

  it("a model that refuses an input and never resumes it deadlocks the run naming the waiting packets", () => {
    const closed = machineWith(() => ({ admit: () => false, arrive: (packet) => packet.headNs + 1 }));
    expect(() => writeToSram(closed)).toThrow(
      expect.objectContaining({
        code: "DES_DEADLOCK",
        message: expect.stringMatching(
          /sip0\.cube0\.noc\.r0c0 \(kb-plugin-test-hop:test_hop\): 1 refused at its inputs.*context\.resume\(inPort\)/,
        ),
      }),
    );
  });

  it("refuses a departure before now and a packet sent twice, naming the model and the node", () => {
    const early = machineWith(() => ({ arrive: (packet) => packet.headNs - 1 }));
    expect(() => writeToSram(early)).toThrow(
      expect.objectContaining({
        code: "MACHINE_INVARIANT",
        message: expect.stringMatching(
          /forwarding model kb-plugin-test-hop:test_hop \(sip0\.cube0\.noc\.r0c0\) sent "256B" \(arrived at 0\.005 ns\) to leave at -0\.995 ns, before now/,
        ),
      }),
    );
    const twice = machineWith((context) => ({
      arrive(packet) {
        context.send(packet, packet.headNs);
        context.send(packet, packet.headNs);
        return undefined;
      },
    }));
    expect(() => writeToSram(twice)).toThrow(
      expect.objectContaining({
        code: "MACHINE_INVARIANT",
        message: expect.stringMatching(/sent "256B" twice/),
      }),
    );
  });

  it("counts a hop's busy time once where its services overlap (several ports at once)", () => {
    // The model serves the packet on two ports: 1.005..5.005 and 3.005..9.005 (overlapping),
    // then a third service 20..21 apart: busy 8 + 1 = 9 ns, not 4 + 6 + 1.
    let router = "";
    const machine = machineWith((context) => ({
      arrive(packet) {
        router = context.id;
        context.service(packet.headNs + 1, 4, packet);
        context.service(packet.headNs + 3, 6, packet);
        context.service(20, 1, packet);
        return packet.headNs + 1;
      },
    }));
    writeToSram(machine);
    expect(machine.component(router)?.stats.busyNs).toBeCloseTo(9, 9);
  });

  it("rejects a kind that does not forward, and a missing create", () => {
    const define = (kind: string, create: unknown) => () =>
      defineForwardingModel({
        kind: kind as "xbar",
        impl: "x",
        description: "d",
        params: z.strictObject({}),
        create: create as never,
      });
    expect(define("pe_gemm", () => ({}))).toThrow(/kind "pe_gemm" does not forward packets/);
    expect(define("xbar", undefined)).toThrow(/create\(context, params\) must be a function/);
  });
});
