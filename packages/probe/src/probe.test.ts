import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BUILTIN_COMPONENTS, transitParams } from "@kb/builtins";
import type { Message, TileToken } from "@kb/components";
import {
  Component,
  type ComponentContext,
  type ComponentDefinition,
  defineComponent,
  definePlugin,
} from "@kb/components";
import type { Event } from "@kb/des";
import { encodeAddress, expandTopology, parseTopology, type Topology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { type ProbeCase, type ProbeReport, runProbe, sweepPoints } from "./probe.js";

const topologyFile = (name: string) => fileURLToPath(new URL(`../../../topologies/${name}`, import.meta.url));

function graphOf(name: string, edit: (topology: Topology) => Topology = (topology) => topology) {
  const file = topologyFile(name);
  return expandTopology(edit(parseTopology(readFileSync(file, "utf8"), file)));
}

function caseOf(report: ProbeReport, name: string): ProbeCase {
  const found = report.cases.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no case ${name} in ${report.cases.map((entry) => entry.name)}`);
  return found;
}

const statuses = (report: ProbeReport) =>
  Object.fromEntries(report.invariants.map((invariant) => [invariant.id, invariant.status]));

describe("runProbe on topologies/default.yaml", () => {
  const report = runProbe(graphOf("default.yaml"));

  it("runs the catalog in order, every case 32 KiB in one pseudo-channel except the spread read", () => {
    expect(report.topology).toBe("default");
    expect(report.requester).toBe("sip0.cube0.pe0");
    expect(report.cases.map((entry) => [entry.name, entry.memory])).toEqual([
      ["h2d", "sip0.cube0.hbm.ch0.pc0"],
      ["d2h", "sip0.cube0.hbm.ch0.pc0"],
      ["dma-read-local", "sip0.cube0.hbm.ch0.pc0"],
      ["dma-read-bridge", "sip0.cube0.hbm.ch4.pc0"],
      ["dma-read-ucie", "sip0.cube1.hbm.ch0.pc0"],
      ["dma-read-far", "sip0.cube1.hbm.ch4.pc0"],
      ["dma-write-local", "sip0.cube0.hbm.ch0.pc0"],
      ["dma-write-bridge", "sip0.cube0.hbm.ch4.pc0"],
      ["dma-write-ucie", "sip0.cube1.hbm.ch0.pc0"],
      ["dma-write-far", "sip0.cube1.hbm.ch4.pc0"],
      ["dma-read-spread", "sip0.cube0.hbm.ch0.pc0"],
    ]);
    // 128 rows of one 256 B interleave unit, one stripe (8 channels x 2 PCs x 256 B) apart.
    expect(caseOf(report, "dma-read-local").layout).toEqual({
      address: encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: 0 }),
      rows: 128,
      rowBytes: 256,
      stride: 4096,
    });
    // ch4.pc0 is interleave unit 4: offset 1024.
    expect(caseOf(report, "dma-read-bridge").layout.address).toBe(
      encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: 1024 }),
    );
    expect(report.cases.map((entry) => entry.pcs)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 16]);
  });

  it("computes the formulas by hand from docs/latency-model.md", () => {
    // The 32 KiB read from one PC (§7): request pe_dma -> xbar0 -> ch0 -> pc0 = 2 mm x 0.01 +
    // first_flit 1 + 1 mm x 0.01 = 1.03 ns; access 40; response 1.03 + 32768 / 25.6 = 1281.03.
    expect(caseOf(report, "dma-read-local").formulaNs).toBeCloseTo(1.03 + 40 + 1.03 + 1280, 9); // 1322.06
    // The write: idealTransferNs = 1.03 + 1280, committed 40 ns later.
    expect(caseOf(report, "dma-write-local").formulaNs).toBeCloseTo(1.03 + 1280 + 40, 9); // 1321.03
    // Through the bridge: 0.02 + xbar0 1 + 0.01 + bridge 1 + 0.01 + xbar1 1 + 0.01 = 3.05 each way.
    expect(caseOf(report, "dma-read-bridge").formulaNs).toBeCloseTo(3.05 + 40 + 3.05 + 1280, 9); // 1326.10
    // Over UCIe (NOC egress): pe_to_noc 0.005 + r0c0 1 + 0.01 + ucie1 1 + UCIe 2 mm 0.02 + ucie0 1
    // + 0.01 + cube1 r0c0 1 + noc_to_xbar 0.01 + xbar0 1 + 0.01 = 5.065.
    expect(caseOf(report, "dma-read-ucie").formulaNs).toBeCloseTo(5.065 + 40 + 5.065 + 1280, 9); // 1330.13
    expect(caseOf(report, "dma-write-ucie").formulaNs).toBeCloseTo(5.065 + 1280 + 40, 9);
    // Host: host_link 0 + io_cpu forward 50 + io_link 5 mm 0.05 + m_cpu_dma forward 20 + 2 mm
    // 0.02 + xbar0 1 + 0.01 = 71.08.
    expect(caseOf(report, "h2d").formulaNs).toBeCloseTo(71.08 + 1280 + 40, 9); // 1391.08
    expect(caseOf(report, "d2h").formulaNs).toBeCloseTo(71.08 + 40 + 71.08 + 1280, 9); // 1462.16
  });

  it("measures every single-PC case exactly at its formula, DMA less the 52 ns on the PE", () => {
    for (const entry of report.cases.filter((each) => each.uncontended)) {
      expect(entry.measuredNs, entry.name).toBeCloseTo(entry.formulaNs, 9);
      expect(entry.ratio, entry.name).toBeCloseTo(1, 12);
    }
    // dispatch_ns 2 + one TLB miss 50 + the 32 KiB PE_TCM write 1 + 32768 / 512 = 65: submit to
    // completion is the documented 1374.06 + 65 = 1439.06 ns.
    const local = caseOf(report, "dma-read-local");
    expect(local.fixedNs).toBe(52 + 65);
    expect(local.measuredNs + local.fixedNs).toBeCloseTo(1439.06, 9);
    expect(caseOf(report, "h2d").fixedNs).toBe(0);
  });

  it("the contiguous read spreads over 16 PCs and is slower than its per-PC bound", () => {
    const spread = caseOf(report, "dma-read-spread");
    expect(spread.uncontended).toBe(false);
    // Slowest PC alone: 2048 B from ch4..7 through the bridge: 3.05 + 40 + 3.05 + 2048 / 25.6.
    expect(spread.formulaNs).toBeCloseTo(3.05 + 40 + 3.05 + 80, 9);
    // 16 responses of 2048 B back to back on xbar0 -> pe_dma (128 GB/s) take 256 ns alone.
    expect(spread.measuredNs).toBeGreaterThan(256);
  });

  it("sweeps 1, 2, 3, 5, 8 PEs reading one PC: each waits for the bus of the ones before", () => {
    expect(report.sweep.map((point) => point.pes)).toEqual([1, 2, 3, 5, 8]);
    // PEs of xbar0 (columns 0-1) first: their routes to ch0.pc0 are the shortest.
    expect(report.sweep[4]?.peIds).toEqual([0, 1, 4, 5, 2, 3, 6, 7].map((pe) => `sip0.cube0.pe${pe}`));
    // The k-th request finds the PC's bus busy with the k-1 before it (1280 ns each).
    expect(report.sweep[2]?.latenciesNs.map((ns) => Number(ns.toFixed(6)))).toEqual([
      1322.06, 2602.06, 3882.06,
    ]);
    for (const point of report.sweep) {
      expect(point.meanNs).toBeGreaterThanOrEqual(point.formulaNs);
      expect(point.gbs).toBeLessThanOrEqual(25.6);
    }
  });

  it("holds the built-ins (all analytic) to 1%: nothing is left unchecked", () => {
    expect(report.cases.every((entry) => entry.nonAnalytic.length === 0)).toBe(true);
    expect(report.sweep.every((point) => point.nonAnalytic.length === 0)).toBe(true);
    expect(report.gemm.every((entry) => entry.analytic)).toBe(true);
    expect(report.invariants.filter((invariant) => invariant.notChecked !== undefined)).toEqual([]);
    const within = report.invariants.find((invariant) => invariant.id === "uncontended_within_1pct");
    expect(within?.detail).toMatch(/^11 transfers; largest deviation /);
  });

  it("every invariant passes, with its numbers", () => {
    expect(statuses(report)).toEqual({
      measured_ge_formula: "pass",
      uncontended_within_1pct: "pass",
      monotonic_in_utilisation: "pass",
      d2h_ge_h2d: "pass",
      best_lt_worst_placement: "pass",
      gemm_matches_formula: "pass",
    });
    expect(report.pass).toBe(true);
    const placement = report.invariants.find((invariant) => invariant.id === "best_lt_worst_placement");
    expect(placement?.detail).toBe(
      "read: local 1322.06 ns < far 1334.17 ns; write: local 1321.03 ns < far 1327.09 ns",
    );
  });

  it("is deterministic", () => {
    expect(JSON.stringify(runProbe(graphOf("default.yaml")))).toBe(JSON.stringify(report));
  });

  it("times three GEMMs on pe_gemm_v1 at its own formula (docs/latency-model.md §5)", () => {
    // ceil(m/32) x ceil(n/32) x k + 8: 4 x 4 x 128 + 8 = 2056; 1 x 1 x 32 + 8 = 40; 1 x 4 x 128 + 8 = 520.
    expect(
      report.gemm.map((entry) => [
        entry.name,
        entry.impl,
        entry.m,
        entry.n,
        entry.k,
        entry.cycles,
        entry.measuredNs,
      ]),
    ).toEqual([
      ["gemm-tile", "pe_gemm_v1", 128, 128, 128, 2056, 2056],
      ["gemm-small", "pe_gemm_v1", 32, 32, 32, 40, 40],
      ["gemm-vector", "pe_gemm_v1", 1, 128, 128, 520, 520],
    ]);
    // 128^3 / (2056 x 32 x 32): v1 has no fill or drain, so the array looks almost fully used.
    expect(report.gemm[0]?.utilisation).toBeCloseTo(2097152 / (2056 * 1024), 12);
  });
});

describe("runProbe on the reference topologies", () => {
  it("ref-cube (one cube): no UCIe case, the far placement is the other XBAR half; all pass", () => {
    const report = runProbe(graphOf("ref-cube.yaml"));
    expect(report.cases.some((entry) => entry.placement === "ucie")).toBe(false);
    expect(caseOf(report, "dma-read-far").memory).toBe("sip0.cube0.hbm.ch8.pc0");
    expect(report.sweep.map((point) => point.pes)).toEqual([1, 2, 6, 13, 32]);
    // pe_gemm_v2, os on 32 x 32: folds x (k + 62): 16 x 190 = 3040; 1 x 94 = 94; 4 x 190 = 760.
    expect(report.gemm.map((entry) => [entry.impl, entry.cycles, entry.measuredNs])).toEqual([
      ["pe_gemm_v2", 3040, 3040],
      ["pe_gemm_v2", 94, 94],
      ["pe_gemm_v2", 760, 760],
    ]);
    expect(report.gemm.map((entry) => Number((entry.utilisation as number).toFixed(4)))).toEqual([
      0.6737, 0.3404, 0.0211,
    ]);
    expect(report.pass).toBe(true);
  });

  it("ref-4sip: the far placement is the opposite cube of the UCIe ring (most hops); all pass", () => {
    const report = runProbe(graphOf("ref-4sip.yaml"));
    const far = caseOf(report, "dma-read-far");
    expect(far.memory).toBe("sip0.cube2.hbm.ch8.pc0");
    expect(far.hops).toBe(15);
    expect(report.sweep.map((point) => point.pes)).toEqual([1, 2, 4, 8, 16]);
    expect(report.pass).toBe(true);
  });
});

// An XBAR half that forgets its first-flit overhead: packets leave it 1 ns too early.
class EarlyXbar extends Component<{ queue_depth: number }> {
  constructor(context: ComponentContext, params: { queue_depth: number }) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  process(): null {
    return null;
  }
}

const earlyXbar = definePlugin({
  meta: { name: "kb-plugin-early-xbar", version: "1.0.0" },
  components: [
    defineComponent({
      kind: "xbar",
      impl: "early_xbar",
      description: "An XBAR half that forwards without its first_flit_ns (a broken timing model).",
      params: transitParams,
      create: (context, params) => new EarlyXbar(context, params),
    }),
  ],
});

describe("runProbe catches a timing model faster than the formula", () => {
  const report = runProbe(
    graphOf("default.yaml", (topology) => ({
      ...topology,
      plugins: ["kb-plugin-early-xbar"],
      overrides: [{ match: "sip*.cube*.xbar*", impl: "kb-plugin-early-xbar:early_xbar" }],
    })),
    { plugins: [earlyXbar] },
  );

  it("fails measured >= formula, naming the cases and their numbers", () => {
    // The head of every packet leaves xbar0 1 ns early: the write reaches the PC's bus 1 ns early
    // and so does a read's request; the response's tail still carries the hop's overhead.
    expect(caseOf(report, "h2d").measuredNs).toBeCloseTo(1390.08, 9);
    expect(caseOf(report, "dma-read-local").measuredNs).toBeCloseTo(1321.06, 9);
    const invariant = report.invariants.find((each) => each.id === "measured_ge_formula");
    expect(invariant?.status).toBe("fail");
    expect(invariant?.detail).toMatch(
      /^15 of 30 faster than the formula: h2d measured 1390\.08 ns < formula 1391\.08 ns; d2h measured 1461\.16 ns < formula 1462\.16 ns; dma-read-local measured 1321\.06 ns < formula 1322\.06 ns; /,
    );
    expect(report.pass).toBe(false);
    // A plug-in XBAR is not analytic, so no transfer (all cross an XBAR half) is held to 1%.
    const within = report.invariants.find((each) => each.id === "uncontended_within_1pct");
    expect(within?.status).toBe("skip");
    expect(within?.detail).toBe(
      "not checked: 11 of 11 transfers: kb-plugin-early-xbar:early_xbar (sip0.cube0.xbar0, sip0.cube0.xbar1 and 2 more) is not analytic; measured is 1.00x the formula",
    );
  });
});

/**
 * hbm_ctrl_v1's definition under another name, with its access latency scaled by `factor` and
 * `analytic` as given (unset: a plug-in's model, such as a bank-aware controller).
 */
function scaledHbm(impl: string, factor: number, analytic?: boolean): ComponentDefinition {
  const { kind, params, create } = BUILTIN_COMPONENTS.find(
    (definition) => definition.impl === "hbm_ctrl_v1",
  ) as ComponentDefinition<z.ZodType<{ access_latency_ns: number }>>;
  return defineComponent({
    kind,
    impl,
    description: `hbm_ctrl_v1 with ${factor} x its access latency.`,
    params,
    ...(analytic === undefined ? {} : { analytic }),
    create: (context, values) =>
      create(context, { ...values, access_latency_ns: values.access_latency_ns * factor }),
  });
}

const hbmPlugin = definePlugin({
  meta: { name: "kb-plugin-probe-hbm", version: "1.0.0" },
  components: [scaledHbm("slow_hbm", 2), scaledHbm("fast_hbm", 0.5), scaledHbm("slow_hbm_analytic", 2, true)],
});

describe("runProbe with a memory model that is not analytic", () => {
  const withHbm = (impl: string) =>
    runProbe(
      graphOf("default.yaml", (topology) => ({
        ...topology,
        plugins: ["kb-plugin-probe-hbm"],
        overrides: [{ match: "sip*.cube*.hbm", impl: `kb-plugin-probe-hbm:${impl}` }],
      })),
      { plugins: [hbmPlugin] },
    );

  it("passes a slower one: never faster than the formula, the 1% check skipped and why", () => {
    const report = withHbm("slow_hbm");
    // 80 ns of access instead of the formula's 40: 1.03 + 80 + 1281.03.
    expect(caseOf(report, "dma-read-local").measuredNs).toBeCloseTo(1362.06, 9);
    expect(caseOf(report, "dma-read-local").nonAnalytic).toEqual([
      { id: "sip0.cube0.hbm", impl: "kb-plugin-probe-hbm:slow_hbm" },
    ]);
    expect(caseOf(report, "dma-read-ucie").nonAnalytic).toEqual([
      { id: "sip0.cube1.hbm", impl: "kb-plugin-probe-hbm:slow_hbm" },
    ]);
    expect(report.sweep.every((point) => point.nonAnalytic.length === 1)).toBe(true);
    expect(statuses(report)).toEqual({
      measured_ge_formula: "pass",
      uncontended_within_1pct: "skip",
      monotonic_in_utilisation: "pass",
      d2h_ge_h2d: "pass",
      best_lt_worst_placement: "pass",
      gemm_matches_formula: "pass",
    });
    const within = report.invariants.find((each) => each.id === "uncontended_within_1pct");
    // h2d 1431.08 / 1391.08 = 1.0288 ... dma-read-local 1362.06 / 1322.06 = 1.0303.
    expect(within?.detail).toBe(
      "not checked: 11 of 11 transfers: kb-plugin-probe-hbm:slow_hbm (sip0.cube0.hbm, sip0.cube1.hbm) is not analytic; measured is 1.03x the formula",
    );
    expect(report.pass).toBe(true);
  });

  it("fails a faster one: measured < formula holds for every impl", () => {
    const report = withHbm("fast_hbm");
    expect(caseOf(report, "dma-read-local").measuredNs).toBeCloseTo(1302.06, 9);
    expect(statuses(report).measured_ge_formula).toBe("fail");
    expect(statuses(report).uncontended_within_1pct).toBe("skip");
    expect(report.pass).toBe(false);
  });

  it("holds the same slower model to 1% once it declares itself analytic", () => {
    const report = withHbm("slow_hbm_analytic");
    expect(report.cases.every((entry) => entry.nonAnalytic.length === 0)).toBe(true);
    const within = report.invariants.find((each) => each.id === "uncontended_within_1pct");
    expect(within?.status).toBe("fail");
    expect(within?.detail).toMatch(
      /^11 of 11 off by more than 1%: h2d measured 1431\.08 ns vs formula 1391\.08 ns/,
    );
    expect(report.pass).toBe(false);
  });

  it("checks the analytic cases and reports the others when only some of the path is analytic", () => {
    const report = runProbe(
      graphOf("default.yaml", (topology) => ({
        ...topology,
        plugins: ["kb-plugin-probe-hbm"],
        overrides: [{ match: "sip0.cube1.hbm", impl: "kb-plugin-probe-hbm:slow_hbm" }],
      })),
      { plugins: [hbmPlugin] },
    );
    const within = report.invariants.find((each) => each.id === "uncontended_within_1pct");
    // cube1's HBM is only on the ucie and far cases (read and write).
    expect(within?.status).toBe("pass");
    expect(within?.detail).toMatch(/^7 transfers; largest deviation /);
    expect(within?.notChecked).toMatch(
      /^4 of 11 transfers: kb-plugin-probe-hbm:slow_hbm \(sip0\.cube1\.hbm\) is not analytic; measured is 1\.03x the formula$/,
    );
    expect(report.pass).toBe(true);
  });
});

describe("ComponentDefinition.analytic", () => {
  it("is declared by every built-in that docs/latency-model.md gives a formula for", () => {
    const analytic = BUILTIN_COMPONENTS.filter((definition) => definition.analytic === true);
    expect(analytic.map((definition) => definition.impl).sort()).toEqual(
      expect.arrayContaining([
        "hbm_ctrl_v1",
        "io_cpu_v1",
        "m_cpu_dma_v1",
        "m_cpu_v1",
        "pe_cpu_v1",
        "pe_dma_v1",
        "pe_fetch_store_v1",
        "pe_gemm_v1",
        "pe_gemm_v2",
        "pe_math_v1",
        "pe_mmu_v1",
        "pe_scheduler_v2",
        "pe_tcm_v1",
        "port_hop_v1",
        "sram_v1",
        "transit_v1",
      ]),
    );
  });

  it("must be a boolean when given", () => {
    expect(() =>
      defineComponent({
        ...scaledHbm("odd_hbm", 1),
        analytic: "yes" as unknown as boolean,
      }),
    ).toThrow(/analytic must be true, false or left out, got "yes"/);
  });
});

describe("sweepPoints", () => {
  it("gives up to five geometric points from 1 to n", () => {
    expect(sweepPoints(1)).toEqual([1]);
    expect(sweepPoints(2)).toEqual([1, 2]);
    expect(sweepPoints(8)).toEqual([1, 2, 3, 5, 8]);
    expect(sweepPoints(16)).toEqual([1, 2, 4, 8, 16]);
    expect(sweepPoints(256)).toEqual([1, 4, 16, 64, 256]);
  });
});

/** A GEMM engine that states pe_gemm_v1's cycles, or none, but charges `factor` x them. */
class MisstatedGemm extends Component<{ queue_depth: number }> {
  readonly macRows = 32;
  readonly macCols = 32;
  readonly freqGhz = 1;
  arrayCycles = 0;

  constructor(
    context: ComponentContext,
    params: { queue_depth: number },
    private readonly factor: number,
  ) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  gemmCycles(m: number, n: number, k: number): number {
    return Math.ceil(m / 32) * Math.ceil(n / 32) * k;
  }

  process(message: Message): Event<unknown> {
    const stage = (message as TileToken).stage.params as { m: number; n: number; k: number };
    return this.env.timeout(this.factor * this.gemmCycles(stage.m, stage.n, stage.k));
  }
}

class SilentGemm extends Component<{ queue_depth: number }> {
  constructor(context: ComponentContext, params: { queue_depth: number }) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  process(): Event<unknown> {
    return this.env.timeout(100);
  }
}

const gemmPlugin = definePlugin({
  meta: { name: "kb-plugin-probe-gemm", version: "1.0.0" },
  components: [
    defineComponent({
      kind: "pe_gemm",
      impl: "slow_gemm",
      description: "Charges twice the cycles it states (a broken timing model).",
      params: z.strictObject({ queue_depth: z.number().default(4) }),
      create: (context, params) => new MisstatedGemm(context, params, 2),
    }),
    defineComponent({
      kind: "pe_gemm",
      impl: "slow_gemm_analytic",
      description: "Charges twice the cycles it states, yet declares itself analytic.",
      analytic: true,
      params: z.strictObject({ queue_depth: z.number().default(4) }),
      create: (context, params) => new MisstatedGemm(context, params, 2),
    }),
    defineComponent({
      kind: "pe_gemm",
      impl: "fast_gemm",
      description: "Charges half the cycles it states (a broken timing model).",
      params: z.strictObject({ queue_depth: z.number().default(4) }),
      create: (context, params) => new MisstatedGemm(context, params, 0.5),
    }),
    defineComponent({
      kind: "pe_gemm",
      impl: "silent_gemm",
      description: "States no timing: 100 ns a GEMM.",
      params: z.strictObject({ queue_depth: z.number().default(4) }),
      create: (context, params) => new SilentGemm(context, params),
    }),
  ],
});

describe("runProbe holds a PE_GEMM to its own formula", () => {
  const withGemm = (impl: string) =>
    runProbe(
      graphOf("default.yaml", (topology) => ({
        ...topology,
        plugins: ["kb-plugin-probe-gemm"],
        overrides: [{ match: "sip*.cube*.pe*.pe_gemm", impl: `kb-plugin-probe-gemm:${impl}` }],
      })),
      { plugins: [gemmPlugin] },
    );

  it("fails an analytic impl slower than it states, naming the GEMMs", () => {
    const report = withGemm("slow_gemm_analytic");
    expect(report.gemm.every((entry) => entry.analytic)).toBe(true);
    const invariant = report.invariants.find((each) => each.id === "gemm_matches_formula");
    expect(invariant?.status).toBe("fail");
    expect(invariant?.detail).toBe(
      "3 of 3 on kb-plugin-probe-gemm:slow_gemm_analytic: gemm-tile 128x128x128 measured 4096.00 ns vs formula 2048.00 ns; gemm-small 32x32x32 measured 64.00 ns vs formula 32.00 ns; gemm-vector 1x128x128 measured 1024.00 ns vs formula 512.00 ns",
    );
    expect(invariant?.notChecked).toBeUndefined();
    expect(report.pass).toBe(false);
  });

  it("passes a slower impl that is not analytic, saying the 1% part was not checked", () => {
    const report = withGemm("slow_gemm");
    expect(report.gemm.map((entry) => [entry.analytic, entry.ratio])).toEqual([
      [false, 2],
      [false, 2],
      [false, 2],
    ]);
    const invariant = report.invariants.find((each) => each.id === "gemm_matches_formula");
    expect(invariant?.status).toBe("pass");
    expect(invariant?.notChecked).toBe(
      "within 1%: kb-plugin-probe-gemm:slow_gemm (sip0.cube0.pe0.pe_gemm) is not analytic; measured is 2.00x the formula",
    );
    expect(report.pass).toBe(true);
  });

  it("fails an impl faster than it states, analytic or not", () => {
    const report = withGemm("fast_gemm");
    const invariant = report.invariants.find((each) => each.id === "gemm_matches_formula");
    expect(invariant?.status).toBe("fail");
    expect(invariant?.detail).toMatch(
      /^3 of 3 on kb-plugin-probe-gemm:fast_gemm: gemm-tile 128x128x128 measured 1024\.00 ns vs formula 2048\.00 ns; /,
    );
    expect(invariant?.notChecked).toBe(
      "within 1%: kb-plugin-probe-gemm:fast_gemm (sip0.cube0.pe0.pe_gemm) is not analytic; measured is 0.50x the formula",
    );
    expect(report.pass).toBe(false);
  });

  it("skips an impl that states no timing, with what it measured", () => {
    const report = withGemm("silent_gemm");
    expect(
      report.gemm.map((entry) => [entry.cycles, entry.formulaNs, entry.measuredNs, entry.utilisation]),
    ).toEqual([
      [null, null, 100, null],
      [null, null, 100, null],
      [null, null, 100, null],
    ]);
    expect(statuses(report).gemm_matches_formula).toBe("skip");
    expect(report.pass).toBe(true);
  });
});
