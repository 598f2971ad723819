import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  defineForwardingModel,
  defineMemoryModel,
  definePlugin,
  defineStageEngine,
  forwardingTopologyParams,
  gemmWork,
  hbmTopologyParams,
  SPEC_VERSION,
} from "../index.js";

// The timing-model contracts as a plug-in author meets them: each define* checks its definition
// at once (a located COMPONENT_INVALID_DEFINITION naming the function and the impl) and returns
// plain data stamped with its contract and the spec version, which definePlugin checks again.

const memory = {
  kind: "hbm_ctrl" as const,
  impl: "fixed_latency",
  description: "Every request takes 50 ns plus its bytes at pc_bw_gbs.",
  params: hbmTopologyParams,
  create: () => ({ service: () => ({ startNs: 0, endNs: 0 }) }),
};

const engine = {
  kind: "pe_gemm" as const,
  impl: "fast_gemm",
  description: "ceil(m/64) x ceil(n/64) x k cycles at 1 GHz.",
  params: z.strictObject({}),
  timing: ({ gemm }: { gemm: { m: number; n: number; k: number } }) =>
    Math.ceil(gemm.m / 64) * Math.ceil(gemm.n / 64) * gemm.k,
};

const hop = {
  kind: "noc_router" as const,
  impl: "fixed_hop",
  description: "Every head leaves 4 ns after it arrived.",
  params: forwardingTopologyParams,
  create: () => ({ arrive: (packet: { headNs: number }) => packet.headNs + 4 }),
};

describe("defineMemoryModel", () => {
  it("returns the definition as frozen plain data with its contract and spec version", () => {
    const spec = defineMemoryModel(memory);
    expect(spec).toMatchObject({
      contract: "memory",
      specVersion: 1,
      kind: "hbm_ctrl",
      impl: "fixed_latency",
    });
    expect(SPEC_VERSION).toBe(1);
    expect(Object.isFrozen(spec)).toBe(true);
    expect(spec.create).toBe(memory.create);
  });

  it("fault: a kind that is not a memory, named with the impl", () => {
    expect(() => defineMemoryModel({ ...memory, kind: "dram" as never })).toThrow(
      '[COMPONENT_INVALID_DEFINITION] defineMemoryModel("fixed_latency"): kind must be "hbm_ctrl" or "sram", got "dram".',
    );
  });

  it("fault: no create, a bad impl name, no description, counters named twice", () => {
    expect(() => defineMemoryModel({ ...memory, create: undefined as never })).toThrow(
      'defineMemoryModel("fixed_latency"): create(context, params) must be a function returning { service(request) }.',
    );
    expect(() => defineMemoryModel({ ...memory, impl: "Fixed-Latency" })).toThrow(
      'defineMemoryModel("Fixed-Latency"): impl must be a snake_case name such as "pe_gemm_v2", got "Fixed-Latency".',
    );
    expect(() => defineMemoryModel({ ...memory, description: " " })).toThrow(
      'defineMemoryModel("fixed_latency"): description must say what the impl models',
    );
    const counter = { name: "row_hits", unit: "count", description: "Row hits." };
    expect(() => defineMemoryModel({ ...memory, counters: [counter, counter] })).toThrow(
      'defineMemoryModel("fixed_latency"): counters: each needs a snake_case name unique in the impl, got "row_hits".',
    );
  });
});

describe("defineStageEngine", () => {
  it("returns plain data; gemmWork builds what a timing function reads", () => {
    const spec = defineStageEngine(engine);
    expect(spec).toMatchObject({ contract: "stage_engine", specVersion: 1, kind: "pe_gemm" });
    // ceil(128/64) x ceil(256/64) x 32 = 2 x 4 x 32
    expect(spec.timing?.(gemmWork(128, 256, 32, "f16"), {})).toBe(256);
    expect(gemmWork(128, 256, 32, "f16").flops).toBe(2 * 128 * 256 * 32);
  });

  it("fault: both timing and process, an array on a PE_MATH, another kind", () => {
    expect(() =>
      defineStageEngine({
        ...engine,
        process: function* () {},
      }),
    ).toThrow(
      'defineStageEngine("fast_gemm"): give either timing(token, params) => ns or process: function* (token, context) {...}, not both or neither.',
    );
    expect(() =>
      defineStageEngine({
        ...engine,
        kind: "pe_math",
        timing: () => 1,
        array: () => ({ rows: 1, cols: 1, freqGhz: 1 }),
      }),
    ).toThrow("array states a PE_GEMM's MAC array; it needs kind pe_gemm and a timing function.");
    expect(() => defineStageEngine({ ...engine, kind: "hbm_ctrl" as never })).toThrow(
      'defineStageEngine("fast_gemm"): kind must be one of pe_gemm, pe_math, pe_fetch_store, got "hbm_ctrl"',
    );
  });
});

describe("defineForwardingModel", () => {
  it("returns plain data keeping alsoKinds", () => {
    const spec = defineForwardingModel({ ...hop, alsoKinds: ["xbar"] });
    expect(spec).toMatchObject({ contract: "forwarding", specVersion: 1, alsoKinds: ["xbar"] });
  });

  it("fault: a kind that does not forward packets", () => {
    expect(() => defineForwardingModel({ ...hop, alsoKinds: ["pe_gemm" as never] })).toThrow(
      'defineForwardingModel("fixed_hop"): kind "pe_gemm" does not forward packets; use one of "noc_router", "xbar", "bridge", "ucie_port", "m_cpu_dma".',
    );
  });
});

describe("definePlugin", () => {
  it("takes the plain definitions of every contract", () => {
    const plugin = definePlugin({
      meta: { name: "kb-plugin-x", version: "0.1.0" },
      components: [defineMemoryModel(memory), defineStageEngine(engine), defineForwardingModel(hop)],
    });
    expect(plugin.components.map((c) => c.contract)).toEqual(["memory", "stage_engine", "forwarding"]);
  });

  it("fault: a definition of another spec version says which, and what to do", () => {
    const newer = { ...defineMemoryModel(memory), specVersion: 2 };
    expect(() =>
      definePlugin({ meta: { name: "kb-plugin-x", version: "0.1.0" }, components: [newer as never] }),
    ).toThrow(
      'definePlugin: component "fixed_latency" was written for @kb/spec specVersion 2; this kb reads specVersion 1. Build the plug-in against the @kb/spec this kb ships',
    );
  });

  it("fault: an unknown contract, and a hand-built definition checked as its define* would", () => {
    const meta = { name: "kb-plugin-x", version: "0.1.0" };
    expect(() =>
      definePlugin({ meta, components: [{ ...hop, contract: "router", specVersion: 1 } as never] }),
    ).toThrow('definePlugin: component "fixed_hop" follows contract "router", which this kb does not know');
    expect(() =>
      definePlugin({
        meta,
        components: [{ ...memory, kind: "sram_x", contract: "memory", specVersion: 1 } as never],
      }),
    ).toThrow('defineMemoryModel("fixed_latency"): kind must be "hbm_ctrl" or "sram", got "sram_x".');
  });

  it("fault: no meta name", () => {
    expect(() =>
      definePlugin({ meta: { name: "", version: "1" }, components: [defineStageEngine(engine)] }),
    ).toThrow("definePlugin: meta.name and meta.version must be strings.");
  });
});
