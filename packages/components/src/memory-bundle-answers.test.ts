import { readFileSync } from "node:fs";
import { hbmTopologyParams } from "@kb/spec";
import { encodeAddress, parseTopology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { definePlugin } from "./define.js";
import { defineMemoryModel, type MemoryRequest } from "./memory.js";
import { machineOf, topologyPath } from "./test-support.js";
import { Transfer } from "./transfer.js";

/** Answers a read on port p (channel p / 2) at arrival + 10 + 5 x channel ns, its data all at once. */
const staggered = defineMemoryModel({
  kind: "hbm_ctrl",
  impl: "staggered",
  description: "Test model: each channel answers 5 ns later than the one before, answered later.",
  params: hbmTopologyParams.extend({ bundle_answers: z.boolean().default(false) }),
  create: (context) => ({
    service(request: MemoryRequest) {
      const at = context.env.now + 10 + 5 * Math.floor(request.port / 2);
      context.env
        .timeout(at - context.env.now)
        .addCallback(() => request.complete({ startNs: at, endNs: at }));
      return undefined;
    },
  }),
});

const plugin = definePlugin({ meta: { name: "test", version: "0" }, components: [staggered] });

/** default.yaml with the staggered model behind it; a 1 KiB read from pe0 over the 4 PCs behind xbar0. */
function readOverFourPcs(bundleAnswers: boolean) {
  const topology = parseTopology(
    readFileSync(topologyPath("default"), "utf8"),
    "default.yaml",
  ) as unknown as {
    cube: { hbm: Record<string, unknown> };
  };
  topology.cube.hbm.impl = "test:staggered";
  topology.cube.hbm.params = { bundle_answers: bundleAnswers };
  const machine = machineOf(topology as unknown as Record<string, unknown>, { plugins: [plugin] });
  const transfer = new Transfer(machine.env);
  const address = encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: 0 });
  machine.fabric.read("sip0.cube0.pe0.pe_dma", { address, rows: 1, rowBytes: 1024, stride: 1024 }, transfer);
  transfer.seal();
  machine.run(transfer.done);
  return { ns: machine.env.now, xbarOps: machine.component("sip0.cube0.xbar0")?.stats.ops };
}

describe("bundle_answers: the deferred answers of one request bundle leave as one response bundle", () => {
  it("without it each PC's answer crosses xbar0 alone (hand-computed)", () => {
    // The request bundle reaches ch0-3 pc0 at 1.03; answers at 11.03, 16.03, 21.03, 26.03. The
    // last: ch3 link 256 B at 64 GB/s (head 26.04, tail 30.04), xbar0 1 ns (27.04, 31.04), the
    // xbar0 -> pe_dma link (free since 24.04) 256 B in 2 ns: tail max(31.04, 29.04) + 0.02.
    const { ns, xbarOps } = readOverFourPcs(false);
    expect(ns).toBeCloseTo(31.06, 9);
    expect(xbarOps).toBe(5); // one request bundle, four responses
  });

  it("with it the parts wait for the last and cross the shared links as one packet (hand-computed)", () => {
    // At 26.03 every part crosses its channel link from now (head 26.04, tail 30.04); xbar0 once
    // (27.04, 31.04); xbar0 -> pe_dma carries 1024 B at 128 GB/s from 27.04 to 35.04, + 0.02.
    const { ns, xbarOps } = readOverFourPcs(true);
    expect(ns).toBeCloseTo(35.06, 9);
    expect(xbarOps).toBe(2); // one request bundle, one response bundle
  });
});
