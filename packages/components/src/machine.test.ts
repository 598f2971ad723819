import { defaultRegistry } from "@kb/builtins";
import { isKbError, type KbError } from "@kb/errors";
import { encodeAddress, type TopologyGraph } from "@kb/topology";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Component, type StageWork } from "./component.js";
import { defineComponent, definePlugin } from "./define.js";
import { buildMachine, ComponentParamsError, type MachineOptions, tcmAddress } from "./machine.js";
import type { Message } from "./message.js";
import { graphFrom, machineOf } from "./test-support.js";
import { TraceRecorder } from "./trace.js";

const hbm = (offset: number, cube = 0) => encodeAddress({ sip: 0, cube, space: "hbm", offset });

describe("launch through IO_CPU and M_CPU", () => {
  it("every PE starts at the global start time, and the launch completes after the last PE", () => {
    const tracer = new TraceRecorder();
    const machine = machineOf("default", { tracer });
    const pes = [0, 1, 2, 3, 4, 5, 6, 7].flatMap((p) => [`sip0.cube0.pe${p}`, `sip0.cube1.pe${p}`]);
    const done = machine.launch({
      pes,
      program: (_pe, index) => [{ kind: "delay", ns: 100 * (index + 1) }],
    });
    machine.run(done);
    // Each PE_CPU waits for targetStartNs, then runs its delay: the PEs finish exactly
    // 100 ns apart, so they all started at the same instant.
    const starts = tracer.events.filter(
      (event) => event.type === "engine_start" && event.component.endsWith("pe_cpu"),
    );
    expect(starts).toHaveLength(16);
    const completes = new Map(
      tracer.events
        .filter((event) => event.type === "engine_complete" && event.component.endsWith("pe_cpu"))
        .map((event) => [event.component, event.tNs]),
    );
    const start = (completes.get("sip0.cube0.pe0.pe_cpu") as number) - 100;
    pes.forEach((pe, index) => {
      expect(completes.get(`${pe}.pe_cpu`)).toBeCloseTo(start + 100 * (index + 1), 9);
    });
    // The barrier is no earlier than the slowest launch message: it crossed IO_CPU -> M_CPU ->
    // the NOC, at least the io_link latency (5 mm = 0.05 ns) + 16 x 64 B at 64 GB/s host link...
    expect(start).toBeGreaterThan(8 * 5);
    expect(machine.env.now).toBeGreaterThan(start + 1600);
    expect(tracer.events.filter((event) => event.type === "launch_complete")).toHaveLength(1);
  });

  it("rejects a launch on something that is not a PE", () => {
    const machine = machineOf("default");
    expect(() => machine.launch({ pes: ["sip0.cube0.pe0.pe_gemm"], program: () => [] })).toThrow(/not a PE/);
  });
});

describe("bad commands are located errors", () => {
  it("names the PE and command for an unknown math op", () => {
    const machine = machineOf("default");
    const tcm = tcmAddress(0, 0, 2, 0);
    const done = machine.submit("sip0.cube0.pe2", [
      { kind: "math", op: "tanhh", inputs: [tcm], shape: [4, 4], out: tcm + 64, dtype: "f32" },
    ]);
    expect(() => machine.run(done)).toThrow(
      /sip0\.cube0\.pe2 command commands#0 \(math\): unknown math op "tanhh"/,
    );
  });

  it("refuses a DMA into another PE's TCM", () => {
    const machine = machineOf("default");
    const done = machine.submit("sip0.cube0.pe2", [
      { kind: "dma", src: hbm(0), dst: tcmAddress(0, 0, 3, 0), bytes: 64 },
    ]);
    expect(() => machine.run(done)).toThrow(/TCM of sip0\.cube0\.pe3, not of sip0\.cube0\.pe2/);
  });

  it("refuses a tile that does not fit the scheduler's reserved TCM", () => {
    const machine = machineOf("default");
    const done = machine.submit("sip0.cube0.pe0", [
      {
        kind: "composite_gemm",
        a: hbm(0),
        b: hbm(1 << 24),
        c: hbm(1 << 25),
        m: 512,
        n: 512,
        k: 512,
        dtype: "f32",
        tile: { m: 512, n: 512, k: 512 },
      },
    ]);
    expect(() => machine.run(done)).toThrow(/reserved_tcm_bytes/);
  });

  it("refuses an HBM block past the end of the stack", () => {
    const machine = machineOf({ cube: { hbm: { capacity_bytes: 1 << 20 } } });
    expect(() => machine.hostWrite(hbm((1 << 20) - 64), 128)).toThrow(
      /runs past the end of HBM \(1048576 bytes\)/,
    );
  });
});

describe("impl resolution and params", () => {
  it("the registry comes from the caller: none is a KbError naming @kb/builtins' defaultRegistry", () => {
    const graph = graphFrom({});
    const noOptions = buildMachine as unknown as (graph: TopologyGraph) => unknown;
    for (const build of [() => noOptions(graph), () => buildMachine(graph, {} as MachineOptions)]) {
      try {
        build();
        expect.unreachable();
      } catch (error) {
        expect(isKbError(error, "COMPONENT_UNKNOWN_IMPL")).toBe(true);
        expect((error as KbError).message).toMatch(
          /buildMachine needs options\.registry.*defaultRegistry\(plugins\) of @kb\/builtins/s,
        );
      }
    }
  });

  it("an unknown impl lists the impls registered for the kind", () => {
    const graph = graphFrom({ overrides: [{ match: "sip0.cube0.pe1.pe_gemm", impl: "pe_gemm_v9" }] });
    try {
      machineOf({ overrides: [{ match: "sip0.cube0.pe1.pe_gemm", impl: "pe_gemm_v9" }] });
      expect.unreachable();
    } catch (error) {
      expect(isKbError(error, "COMPONENT_UNKNOWN_IMPL")).toBe(true);
      expect((error as KbError).context.nodeId).toBe("sip0.cube0.pe1.pe_gemm");
      expect((error as KbError).message).toMatch(
        /impls registered for kind pe_gemm: pe_gemm_v1 \(built-in\)/,
      );
    }
    expect(graph.node("sip0.cube0.pe1.pe_gemm").impl).toBe("pe_gemm_v9");
  });

  it("a qualified impl of a plug-in that is not loaded says to add it to plugins:", () => {
    expect(() =>
      machineOf({ overrides: [{ match: "sip0.cube0.pe1.pe_gemm", impl: "@acme/kb-plugin-x:gemm" }] }),
    ).toThrow(
      /plug-in @acme\/kb-plugin-x is not loaded: add it to the topology's plugins: list \(or pass --plugin\), as the package name "@acme\/kb-plugin-x"/,
    );
  });

  it("params are checked by the impl's own schema, every problem named by node id", () => {
    try {
      machineOf({
        pe_template: { components: { pe_gemm: { params: { freq_ghz: -1, mac_row: 16 } } } },
        overrides: [{ match: "sip0.cube0.xbar1", params: { queue_depth: 0 } }],
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ComponentParamsError);
      const issues = (error as ComponentParamsError).issues;
      const gemm = issues.filter((issue) => issue.nodeId === "sip0.cube0.pe0.pe_gemm");
      expect(gemm.map((issue) => issue.path.join("."))).toEqual(["freq_ghz", ""]);
      expect(gemm[1]?.message).toMatch(/unknown key\(s\) "mac_row"/);
      expect(
        issues.some((issue) => issue.nodeId === "sip0.cube0.xbar1" && issue.path[0] === "queue_depth"),
      ).toBe(true);
      expect((error as KbError).code).toBe("COMPONENT_INVALID_PARAMS");
      // A problem with the params as a whole is at `params`, not `params.`.
      expect((error as KbError).detail).toContain(
        'node sip0.cube0.pe0.pe_gemm: params: unknown key(s) "mac_row"',
      );
    }
  });

  it("a plug-in impl replaces a built-in for the nodes that name it", () => {
    class SlowTransit extends Component<{ delay_ns: number }> {
      process(message: Message): StageWork {
        return this.delay(message);
      }
      private *delay(_message: Message): StageWork {
        yield this.env.timeout(this.params.delay_ns);
      }
    }
    const plugin = definePlugin({
      meta: { name: "kb-plugin-slow", version: "1.0.0" },
      components: [
        defineComponent({
          kind: "xbar",
          impl: "slow_xbar",
          description: "An XBAR half that takes delay_ns per packet.",
          params: z.strictObject({ delay_ns: z.number().default(100), first_flit_ns: z.number().optional() }),
          create: (context, params) => new SlowTransit(context, params),
        }),
      ],
    });
    const time = (overrides: unknown[], plugins = [plugin]) => {
      const machine = machineOf({ overrides }, { plugins });
      machine.run(machine.hostWrite(hbm(0), 256));
      return machine.env.now;
    };
    const builtIn = time([]);
    const swapped = time([{ match: "sip0.cube0.xbar0", impl: "kb-plugin-slow:slow_xbar" }]);
    // One packet crosses xbar0: 1 ns of first flit becomes 100 ns.
    expect(swapped - builtIn).toBeCloseTo(99, 9);
    expect(
      defaultRegistry([plugin])
        .list()
        .some((entry) => entry.name === "kb-plugin-slow:slow_xbar"),
    ).toBe(true);
  });

  it("defineComponent rejects malformed definitions", () => {
    expect(() =>
      defineComponent({
        kind: "PE Gemm",
        impl: "x",
        description: "d",
        params: z.strictObject({}),
        create: () => null as never,
      }),
    ).toThrow(/kind must be a snake_case name/);
    expect(() =>
      defineComponent({
        kind: "pe_gemm",
        impl: "x",
        description: " ",
        params: z.strictObject({}),
        create: () => null as never,
      }),
    ).toThrow(/description/);
    expect(() => definePlugin({ meta: { name: "", version: "1" }, components: [] })).toThrow(/meta.name/);
  });
});

describe("PE_CPU programs", () => {
  const tcm = (offset: number) => tcmAddress(0, 0, 0, offset);
  const tile = {
    kind: "gemm",
    a: tcm(0),
    b: tcm(65536),
    out: tcm(131072),
    m: 128,
    n: 128,
    k: 128,
    dtype: "f16",
  } as const;

  it("cycles keep the PE_CPU busy at freq_ghz (1 GHz: 1 ns per cycle) without a dispatch", () => {
    const machine = machineOf("default");
    const done = machine.submit("sip0.cube0.pe0", [
      { kind: "cycles", cycles: 100 },
      { kind: "delay", ns: 50 },
    ]);
    machine.run(done);
    expect(done.value).toBe(150);
    expect(machine.stats().components.find((c) => c.id === "sip0.cube0.pe0.pe_cpu")?.busyNs).toBe(100);
  });

  it("wait with positions waits only for those async commands", () => {
    const machine = machineOf("default");
    // #0 dispatch 2 ns, then the 128^3 f16 tile: fetch 1 + 65536 / 512 = 129, GEMM
    // (4 x 4 x 128 + 8) = 2056, store 1 + 32768 / 512 = 65 ns -> done at 2252;
    // #1 runs meanwhile (2 -> 12); #2 waits for #0 only; #3 async GEMM after #0:
    // dispatch 2252 -> 2254, done 2254 + 2250 = 4504, waited for at the end.
    const done = machine.submit("sip0.cube0.pe0", [
      { ...tile, async: true },
      { kind: "delay", ns: 10 },
      { kind: "wait", commands: [0] },
      { ...tile, async: true },
    ]);
    machine.run(done);
    expect(done.value).toBe(2252 + 2 + 129 + 2056 + 65);
  });

  it("waiting on a position that is not an outstanding async command is a located error", () => {
    const machine = machineOf("default");
    const done = machine.submit("sip0.cube0.pe0", [tile, { kind: "wait", commands: [0] }], "k");
    expect(() => machine.run(done)).toThrow(
      /sip0\.cube0\.pe0 command k#1 \(wait\): command #0 is not an async command that is still outstanding/,
    );
  });

  it("a CommandSource decides each command when the PE_CPU asks, possibly later in simulated time", () => {
    const machine = machineOf("default");
    const asked: number[] = [];
    let step = 0;
    const done = machine.submit("sip0.cube0.pe0", {
      name: "source",
      next() {
        asked.push(machine.env.now);
        step++;
        if (step === 1) return { kind: "delay", ns: 5 };
        if (step === 2) {
          // Decides 7 ns later (a kernel that has not posted yet).
          const later = machine.env.event<import("@kb/spec").PeCommand | null>();
          machine.env.timeout(7).addCallback(() => later.succeed({ kind: "delay", ns: 3 }));
          return later;
        }
        return null;
      },
    });
    machine.run(done);
    expect(asked).toEqual([0, 5, 15]);
    expect(done.value).toBe(15);
  });
});
