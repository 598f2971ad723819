import { BUILTIN_COMPONENTS } from "@kb/builtins";
import { MemoryHarness } from "@kb/probe";
import { hbmTopologyParams } from "@kb/spec";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { definePlugin } from "./define.js";
import { defineMemoryModel, type MemoryRequest } from "./memory.js";
import { ComponentRegistry } from "./registry.js";
import { graphFrom } from "./test-support.js";

/** A model that answers every request `latency_ns` after it arrives, after the previous one on its port. */
const queued = defineMemoryModel({
  kind: "hbm_ctrl",
  impl: "queued",
  description: "Test model: one request at a time per port, latency_ns each, answered later.",
  params: hbmTopologyParams.extend({
    latency_ns: z.number().default(10),
    max_pending: z.number().default(2),
  }),
  create: (context, params) => {
    const freeAt = new Float64Array(context.ports);
    return {
      maxPending: params.max_pending,
      service(request: MemoryRequest) {
        const start = Math.max(context.env.now, freeAt[request.port] as number) + params.latency_ns;
        freeAt[request.port] = start;
        context.env
          .timeout(start - context.env.now)
          .addCallback(() => request.complete({ startNs: start, endNs: start }));
        return undefined;
      },
    };
  },
});

function harnessWith(
  definition: ReturnType<typeof defineMemoryModel>,
  hbm: Record<string, unknown> = {},
): MemoryHarness {
  const registry = new ComponentRegistry()
    .registerBuiltins(BUILTIN_COMPONENTS)
    .registerPlugin(definePlugin({ meta: { name: "test", version: "0" }, components: [definition] }));
  const graph = graphFrom({
    cube: { hbm: { impl: `test:${definition.impl}`, channels: 8, pseudo_channels: 2, ...hbm } },
  });
  return new MemoryHarness(graph, { registry });
}

describe("the memory-model SDK", () => {
  it("hbm_ctrl_v1 through the harness: a 64 B read is access + bus (40 + 64 / 25.6 = 42.5 ns)", () => {
    const harness = new MemoryHarness(graphFrom({ cube: { hbm: { pc_bw_gbs: 25.6 } } }));
    const read = harness.request("read", 0, 64);
    harness.machine.run(read);
    expect(read.value).toEqual({ arrivalNs: 0, doneNs: 42.5 });
    // A write commits at bus end + access: 2.5 + 40.
    const write = harness.request("write", 4096, 64);
    harness.machine.run(write);
    expect(write.value.doneNs - write.value.arrivalNs).toBeCloseTo(42.5, 9);
  });

  it("a request carries its address ranges on its port, split by the mapping", () => {
    const seen: MemoryRequest[] = [];
    const recorder = defineMemoryModel({
      kind: "hbm_ctrl",
      impl: "recorder",
      description: "Test model: records requests, answers at once.",
      params: hbmTopologyParams,
      create: () => ({
        service(request) {
          seen.push(request);
          return { startNs: request.arrivalNs, endNs: request.arrivalNs };
        },
      }),
    });
    // mop4clxor on 8 channels: channel = A[8:6], pseudo-channel = A10 ^ A5.
    const harness = harnessWith(recorder, { mapping: "mop4clxor" });
    harness.machine.run(harness.request("read", 0, 128));
    // 0..31: ch0 pc0; 32..63: ch0 pc1; 64..95: ch1 pc0; 96..127: ch1 pc1.
    expect(seen.map((r) => [r.port, r.bytes, [...r.ranges]])).toEqual([
      [0, 32, [0, 32]],
      [1, 32, [32, 32]],
      [2, 32, [64, 32]],
      [3, 32, [96, 32]],
    ]);
    expect(seen.every((r) => r.kind === "read" && r.requester === "harness")).toBe(true);
  });

  it("answers later (deferred), and holds the port's inbox while maxPending requests wait", () => {
    const harness = harnessWith(queued, { interleave_bytes: 256 });
    // Three reads to port 0 (offsets 0, 4096, 8192 are all ch0 pc0 under interleave 256 x 16 lanes).
    const reads = [0, 4096, 8192].map((offset) => harness.request("read", offset, 64));
    harness.machine.run();
    expect(reads.map((read) => read.value.doneNs)).toEqual([10, 20, 30]);
    // The third waited in the inbox while two were pending.
    expect(harness.memory.stats.ops).toBe(3);
  });

  it("drains the ports an instant's answers made room in with one engine event, in answer order", () => {
    const harness = harnessWith(queued, { interleave_bytes: 256, params: { max_pending: 1 } });
    const env = harness.machine.env;
    const zeroDelays: number[] = [];
    const timeout = env.timeout.bind(env);
    env.timeout = ((delay: number, value?: unknown) => {
      if (delay === 0) zeroDelays.push(env.now);
      return timeout(delay, value);
    }) as typeof env.timeout;
    // max_pending 1: ports 0 (offsets 0, 4096) and 1 (256, 4352) each hold one read, the second
    // waits; both first reads are answered at 10 ns (two model events), so both ports drain then.
    const reads = [0, 4096, 256, 4352].map((offset) => harness.request("read", offset, 64));
    harness.machine.run();
    expect(reads.map((read) => read.value.doneNs)).toEqual([10, 20, 10, 20]);
    expect(zeroDelays).toEqual([10]);
  });

  it("reports a model that answers before the arrival, or twice, at once and located", () => {
    const early = defineMemoryModel({
      kind: "hbm_ctrl",
      impl: "early",
      description: "Test model: answers before the request arrived.",
      params: hbmTopologyParams,
      create: () => ({
        service: (request) => ({ startNs: request.arrivalNs - 1, endNs: request.arrivalNs }),
      }),
    });
    const harness = harnessWith(early);
    harness.machine.env.run(5);
    expect(() => harness.machine.run(harness.request("read", 0, 64))).toThrow(
      /memory model test:early \(sip0\.cube0\.hbm port 0\) answered a read of 64 B that arrived at 5 ns with startNs 4, before its arrival/,
    );
    const twice = defineMemoryModel({
      kind: "hbm_ctrl",
      impl: "twice",
      description: "Test model: answers twice.",
      params: hbmTopologyParams,
      create: () => ({
        service(request) {
          request.complete({ startNs: request.arrivalNs, endNs: request.arrivalNs });
          return { startNs: request.arrivalNs, endNs: request.arrivalNs };
        },
      }),
    });
    const second = harnessWith(twice);
    expect(() => second.machine.run(second.request("write", 0, 64))).toThrow(
      /answered the same write request twice/,
    );
  });

  it("refuses a definition of another kind, or without create", () => {
    expect(() =>
      defineMemoryModel({
        kind: "pe_dma" as never,
        impl: "x",
        description: "x",
        params: hbmTopologyParams,
        create: () => ({ service: () => undefined }),
      }),
    ).toThrow(/kind must be "hbm_ctrl" or "sram"/);
  });
});

describe("a model that never answers", () => {
  it("deadlocks the run with a message naming the model and what to call", () => {
    const silent = defineMemoryModel({
      kind: "hbm_ctrl",
      impl: "silent",
      description: "Test model: never answers.",
      params: hbmTopologyParams,
      create: () => ({ service: () => undefined }),
    });
    const harness = harnessWith(silent);
    expect(() => harness.machine.run(harness.request("read", 0, 64))).toThrow(
      /Memory models left requests unanswered: sip0\.cube0\.hbm \(test:silent\): 1\. A model whose service\(\) returns undefined must call request\.complete\(timing\) later/,
    );
  });
});

describe("a model that answers inside service() and returns undefined", () => {
  it("is not counted as pending (the port keeps taking requests)", () => {
    const inline = defineMemoryModel({
      kind: "hbm_ctrl",
      impl: "inline",
      description: "Test model: completes during service, returns nothing.",
      params: hbmTopologyParams,
      create: () => ({
        maxPending: 1,
        service(request: MemoryRequest) {
          request.complete({ startNs: request.arrivalNs + 5, endNs: request.arrivalNs + 5 });
          return undefined;
        },
      }),
    });
    const harness = harnessWith(inline, { interleave_bytes: 256 });
    const reads = [0, 4096, 8192].map((offset) => harness.request("read", offset, 64));
    harness.machine.run();
    expect(reads.map((read) => read.value.doneNs)).toEqual([5, 5, 5]);
    expect(harness.memory.unanswered).toBe(0);
  });
});
