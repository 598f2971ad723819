import { Environment, type Event } from "@kb/des";
import {
  defineForwardingModel,
  defineMemoryModel,
  definePlugin,
  forwardingTopologyParams,
  hbmTopologyParams,
  type SimEnvironment,
  type SimEvent,
} from "@kb/spec";
import { describe, expect, expectTypeOf, it } from "vitest";
import { ComponentRegistry, componentDefinitionOf } from "./registry.js";

// @kb/spec states what a model sees of the engine as interfaces of its own (it depends on no
// engine); the engine's Environment and Event must satisfy them, and the registry turns a plain
// definition into the framework's component.

describe("the contracts' view of the engine", () => {
  it("des' Environment and Event are a SimEnvironment and SimEvents (types and behaviour)", () => {
    expectTypeOf<Environment>().toExtend<SimEnvironment>();
    expectTypeOf<Event<number>>().toExtend<SimEvent<number>>();
    const env: SimEnvironment = new Environment();
    const seen: [number, string][] = [];
    env.timeout(5, "credit").addCallback((event) => seen.push([env.now, event.value]));
    (env as Environment).run();
    expect(seen).toEqual([[5, "credit"]]);
  });
});

const memory = defineMemoryModel({
  kind: "hbm_ctrl",
  impl: "fixed_latency",
  description: "Every request takes 50 ns.",
  params: hbmTopologyParams,
  counters: [{ name: "reads", unit: "count", description: "Reads." }],
  create: () => ({
    service: (request) => ({ startNs: request.arrivalNs + 50, endNs: request.arrivalNs + 50 }),
  }),
});
const hop = defineForwardingModel({
  kind: "noc_router",
  alsoKinds: ["xbar"],
  impl: "fixed_hop",
  description: "Every head leaves 4 ns after it arrived.",
  params: forwardingTopologyParams,
  create: () => ({ arrive: (packet) => packet.headNs + 4 }),
});

describe("componentDefinitionOf", () => {
  it("adapts a plain definition once, keeping what kb components list shows", () => {
    const adapted = componentDefinitionOf(memory);
    expect(componentDefinitionOf(memory)).toBe(adapted);
    expect(adapted).toMatchObject({
      kind: "hbm_ctrl",
      impl: "fixed_latency",
      description: "Every request takes 50 ns.",
      counters: memory.counters,
    });
    expect(adapted.params).toBe(hbmTopologyParams);
    expect("contract" in adapted).toBe(false);
  });

  it("registers a plug-in's spec definitions under every kind they time", () => {
    const registry = new ComponentRegistry().registerPlugin(
      definePlugin({ meta: { name: "kb-plugin-x", version: "0.1.0" }, components: [memory, hop] }),
    );
    expect(registry.list().map((row) => `${row.kind} ${row.name}`)).toEqual([
      "hbm_ctrl kb-plugin-x:fixed_latency",
      "noc_router kb-plugin-x:fixed_hop",
      "xbar kb-plugin-x:fixed_hop",
    ]);
    const resolved = registry.resolve({
      id: "sip0.cube0.xbar0",
      kind: "xbar",
      impl: "kb-plugin-x:fixed_hop",
    });
    expect(resolved).toBe(componentDefinitionOf(hop));
    // The components the adapted definitions create (run in a machine by the examples' tests).
    expect(resolved.create.toString()).toMatch(/ForwardingComponent/);
    expect(componentDefinitionOf(memory).create.toString()).toMatch(/MemoryComponent/);
  });

  it("fault: a plug-in whose definition carries another spec version is refused when registered", () => {
    const plugin = {
      meta: { name: "kb-plugin-x", version: "0.1.0" },
      components: [{ ...memory, specVersion: 2 }],
    };
    expect(() => new ComponentRegistry().registerPlugin(plugin as never)).toThrow(
      'plug-in "kb-plugin-x": component "fixed_latency" was written for @kb/spec specVersion 2; this kb reads specVersion 1.',
    );
  });
});
