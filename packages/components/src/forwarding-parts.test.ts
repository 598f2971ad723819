import { readFileSync } from "node:fs";
import { encodeAddress, parseTopology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { definePlugin } from "./define.js";
import { defineForwardingModel, forwardingTopologyParams } from "./forwarding.js";
import { machineOf, topologyPath } from "./test-support.js";
import { Transfer } from "./transfer.js";

interface Seen {
  readonly label: string;
  readonly from: string;
  readonly to: string;
  readonly gbs: readonly [number, number];
  readonly parts: readonly { readonly from: string; readonly to: string; readonly bytes: number }[] | null;
}

/** default.yaml with every XBAR half a model that records what it is given; a 1 KiB read or write from pe0 over the 4 PCs behind xbar0. */
function overFourPcs(op: "read" | "write"): Seen[] {
  const seen: Seen[] = [];
  const recorder = defineForwardingModel({
    kind: "xbar",
    impl: "recorder",
    description: "Test model: records the packets and their parts; transit_v1's timing.",
    params: forwardingTopologyParams,
    create: (context, params) => ({
      arrive(packet) {
        const name = (ports: readonly string[], port: number) => ports[port] ?? `port ${port}`;
        seen.push({
          label: packet.label,
          from: name(context.inputs, packet.inPort),
          to: name(context.outputs, packet.outPort),
          gbs: [context.inputGbs[packet.inPort] as number, context.outputGbs[packet.outPort] as number],
          parts:
            packet.parts?.map((part) => ({
              from: name(context.inputs, part.inPort),
              to: name(context.outputs, part.outPort),
              bytes: part.bytes,
            })) ?? null,
        });
        return packet.headNs + params.first_flit_ns;
      },
    }),
  });
  const plugin = definePlugin({ meta: { name: "test", version: "0" }, components: [recorder] });
  const topology = parseTopology(
    readFileSync(topologyPath("default"), "utf8"),
    "default.yaml",
  ) as unknown as {
    cube: Record<string, unknown>;
  };
  topology.cube.xbar = { impl: "test:recorder" };
  const machine = machineOf(topology as unknown as Record<string, unknown>, { plugins: [plugin] });
  const transfer = new Transfer(machine.env);
  const block = {
    address: encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: 0 }),
    rows: 1,
    rowBytes: 1024,
    stride: 1024,
  };
  machine.fabric[op]("sip0.cube0.pe0.pe_dma", block, transfer);
  transfer.seal();
  machine.run(transfer.done);
  return seen;
}

describe("HopPacket.parts and the ports' link rates: a bundle's packets that cross a hop by their own ports", () => {
  it("a write bundle fans out at xbar0, its last hop: one input, each part's own output and bytes", () => {
    const pc = (channel: number) => `sip0.cube0.hbm.ch${channel}`;
    expect(overFourPcs("write")).toEqual([
      {
        label: "1024B x4",
        from: "sip0.cube0.pe0.pe_dma",
        to: pc(0),
        gbs: [128, 64],
        parts: [0, 1, 2, 3].map((channel) => ({
          from: "sip0.cube0.pe0.pe_dma",
          to: pc(channel),
          bytes: 256,
        })),
      },
    ]);
  });

  it("a read: the request bundle fans out (0 bytes a part), the response bundle fanned in on each part's own input", () => {
    const pc = (channel: number) => `sip0.cube0.hbm.ch${channel}`;
    expect(overFourPcs("read")).toEqual([
      {
        label: "read req 1024B x4",
        from: "sip0.cube0.pe0.pe_dma",
        to: pc(0),
        gbs: [128, 64],
        parts: [0, 1, 2, 3].map((channel) => ({ from: "sip0.cube0.pe0.pe_dma", to: pc(channel), bytes: 0 })),
      },
      {
        label: "1024B x4",
        from: pc(0),
        to: "sip0.cube0.pe0.pe_dma",
        gbs: [64, 128],
        parts: [0, 1, 2, 3].map((channel) => ({
          from: pc(channel),
          to: "sip0.cube0.pe0.pe_dma",
          bytes: 256,
        })),
      },
    ]);
  });
});
