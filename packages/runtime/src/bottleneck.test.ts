import { describe, expect, it } from "vitest";
import { type BottleneckEvidence, bottleneckVerdict, type EngineGroup } from "./bottleneck.js";

// Each rule of docs/reports.md "Bottleneck verdicts" on a crafted case: busy fractions chosen by
// hand, the verdict and its evidence text expected as written there.

/** `count` PEs' lanes of `kind` (and `lane`), busy `utilisation` each (or per member). */
function group(kind: string, lane: string | null, utilisation: number | number[], count = 4): EngineGroup {
  const values = Array.isArray(utilisation) ? utilisation : Array.from({ length: count }, () => utilisation);
  return {
    kind,
    lane,
    members: values.map((value, pe) => ({ id: `sip0.cube0.pe${pe}.${kind}`, utilisation: value })),
  };
}

function evidence(parts: Partial<BottleneckEvidence>): BottleneckEvidence {
  return { windowNs: 1000, engines: [], hbmStacks: [], links: [], hbmFraction: 0, ...parts };
}

/** 32 pseudo-channels: `hot` at index 0, the rest at `rest`. */
function stack(hot: number, rest: number, id = "sip0.cube0.hbm"): BottleneckEvidence["hbmStacks"][number] {
  return { id, ports: [hot, ...Array.from({ length: 31 }, () => rest)] };
}

describe("bottleneckVerdict", () => {
  it("names a hot pseudo-channel when the others average at most half of it (hbm-hotspot)", () => {
    // pc0 at 97%, the other 31 at 6%: 6 <= 97 / 2.
    const verdict = bottleneckVerdict(
      evidence({
        hbmStacks: [stack(0.97, 0.06)],
        engines: [group("pe_dma", "read", 0.99)],
        hbmFraction: 0.09,
      }),
    );
    expect(verdict).toEqual({
      rule: "hbm-hotspot",
      resource: "sip0.cube0.hbm pc0",
      utilisation: 0.97,
      text: "bound by sip0.cube0.hbm HBM pseudo-channel 0: 97.0% busy while the other 31 average 6.0% (address mapping hotspot: the launch's addresses fall on few pseudo-channels)",
    });
  });

  it("calls evenly loaded saturated pseudo-channels HBM bandwidth (hbm-bandwidth)", () => {
    // 31 channels at 90% and one at 92%: mean (0.92 + 31 x 0.9) / 32 = 0.900625 -> 90.1%.
    const verdict = bottleneckVerdict(
      evidence({ hbmStacks: [stack(0.92, 0.9)], engines: [group("pe_dma", "read", 1)], hbmFraction: 0.88 }),
    );
    expect(verdict.rule).toBe("hbm-bandwidth");
    expect(verdict.resource).toBe("sip0.cube0.hbm pc0");
    expect(verdict.text).toBe(
      "bound by HBM bandwidth: 32 pseudo-channels on 1 stack 90.1% busy on average (busiest sip0.cube0.hbm pc0 at 92.0%), HBM at 88.0% of peak",
    );
  });

  it("names the busiest link when it is the busiest saturated resource (link)", () => {
    const verdict = bottleneckVerdict(
      evidence({
        links: [
          { name: "sip0.ucie0 -> sip1.ucie0", utilisation: 0.95 },
          { name: "sip1.ucie0 -> sip0.ucie0", utilisation: 0.75 },
          { name: "sip0.cube0.xbar0 -> sip0.cube0.hbm", utilisation: 0.2 },
        ],
        hbmStacks: [stack(0.2, 0.2)],
        engines: [group("pe_dma", "read", 0.98)],
        hbmFraction: 0.2,
      }),
    );
    expect(verdict).toEqual({
      rule: "link",
      resource: "sip0.ucie0 -> sip1.ucie0",
      utilisation: 0.95,
      text: "bound by link sip0.ucie0 -> sip1.ucie0: 95.0% busy (2 of 3 links used are at 70.0% or more), HBM at 20.0% of peak",
    });
  });

  it("names a compute engine and on how many PEs it is near the busiest (compute)", () => {
    // Busiest 0.9; within 10 points: 0.9, 0.85, 0.8 (3 of 4); their mean 0.85.
    const verdict = bottleneckVerdict(
      evidence({
        engines: [group("pe_math", null, [0.9, 0.85, 0.8, 0.5]), group("pe_dma", "read", 0.6)],
        hbmStacks: [stack(0.3, 0.3)],
        hbmFraction: 0.3,
      }),
    );
    expect(verdict).toEqual({
      rule: "compute",
      resource: "pe_math",
      utilisation: 0.9,
      text: "bound by PE_MATH: 85.0% busy on 3/4 PEs, HBM at 30.0% of peak",
    });
  });

  it("names a tail wave with its numbers: 19 programs on 16 PEs are 2 waves, 13 of 32 slots idle", () => {
    // Wave 1 on all 16 PEs, wave 2 on 3: those 3 are the busiest (0.95), the rest 0.5.
    const verdict = bottleneckVerdict(
      evidence({
        engines: [group("pe_gemm", null, [0.95, 0.95, 0.95, ...Array.from({ length: 13 }, () => 0.5)])],
        launch: { programs: 19, pes: 16 },
      }),
    );
    expect(verdict.text).toBe(
      "bound by PE_GEMM: 95.0% busy on 3/16 PEs, HBM at 0.0% of peak (tail: 19 programs on 16 PEs run in 2 waves, the last with 3; 40.6% of PE slots idle)",
    );
  });

  it("names PEs left without a program", () => {
    const verdict = bottleneckVerdict(
      evidence({ engines: [group("pe_math", null, 0.9, 3)], launch: { programs: 3, pes: 16 } }),
    );
    expect(verdict.text).toBe(
      "bound by PE_MATH: 90.0% busy on 3/3 PEs, HBM at 0.0% of peak (3 programs on 16 PEs: 13 PEs had none)",
    );
  });

  it("names an imbalance: the busiest PE at 1.5x or more of the mean over the grid's PEs", () => {
    // 8 programs on 8 PEs (no tail); mean over 8 PEs = (0.9 + 7 x 0.3) / 8 = 0.375; 0.9 >= 1.5 x 0.375.
    const verdict = bottleneckVerdict(
      evidence({
        engines: [group("pe_gemm", null, [0.9, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3])],
        launch: { programs: 8, pes: 8 },
      }),
    );
    expect(verdict.text).toBe(
      "bound by PE_GEMM: 90.0% busy on 1/8 PEs, HBM at 0.0% of peak (imbalance: the busiest PE 90.0% busy, the mean over 8 PEs 37.5%)",
    );
    // Even waves and even work: no note.
    const even = bottleneckVerdict(
      evidence({ engines: [group("pe_gemm", null, 0.9, 16)], launch: { programs: 32, pes: 16 } }),
    );
    expect(even.text).toBe("bound by PE_GEMM: 90.0% busy on 16/16 PEs, HBM at 0.0% of peak");
  });

  it("calls a saturated PE_DMA lane with unsaturated HBM latency-bound (latency)", () => {
    const verdict = bottleneckVerdict(
      evidence({
        engines: [
          group("pe_dma", "read", 0.92, 32),
          group("pe_dma", "write", 0.1, 32),
          group("pe_gemm", null, 0.4, 32),
        ],
        hbmStacks: [stack(0.21, 0.21)],
        hbmFraction: 0.21,
      }),
    );
    expect(verdict).toEqual({
      rule: "latency",
      resource: "pe_dma read",
      utilisation: 0.92,
      text: "bound by PE_DMA read lanes: 92.0% busy on 32/32 PEs, HBM at 21.0% of peak (latency: each PE_DMA channel has one copy in flight at a time; more PEs, larger tiles or tl.loadAsync overlap more)",
    });
  });

  it("prefers a saturated self-serving resource over the engine lanes waiting on it", () => {
    // The DMA lanes are busier (99%) but they wait on the pseudo-channels (80%): HBM is named.
    const verdict = bottleneckVerdict(
      evidence({ engines: [group("pe_dma", "read", 0.99)], hbmStacks: [stack(0.8, 0.8)], hbmFraction: 0.8 }),
    );
    expect(verdict.rule).toBe("hbm-bandwidth");
  });

  it("says nothing saturated and names the busiest resource below the threshold (unsaturated)", () => {
    const verdict = bottleneckVerdict(
      evidence({
        engines: [group("pe_math", null, 0.5), group("pe_dma", "read", 0.3)],
        hbmStacks: [stack(0.1, 0.1)],
        hbmFraction: 0.1,
      }),
    );
    expect(verdict).toEqual({
      rule: "unsaturated",
      resource: "pe_math",
      utilisation: 0.5,
      text: "no resource saturated: the busiest, PE_MATH, was 50.0% busy, HBM at 10.0% of peak (latency or dependencies between operations leave the hardware idle)",
    });
  });

  it("says idle when nothing did work in the window", () => {
    expect(bottleneckVerdict(evidence({ windowNs: 0 })).rule).toBe("idle");
  });
});
