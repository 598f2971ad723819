import { defaultRegistry } from "@kb/builtins";
import { buildMachine, hbmStackPeaks } from "@kb/components";
import { expandTopology, parseTopology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { type ProbeReport, runProbe } from "./probe.js";

// issue 33 point 4: peaks come from the model's own peak(), not from cube.hbm.pc_bw_gbs.

/** One cube of 2 x 2 PEs, an HBM stack of 2 channels x 2 pseudo-channels, pc_bw_gbs 25.6. */
const graphOf = (hbm: string) =>
  expandTopology(
    parseTopology(
      `name: t\ncube:\n  hbm: { channels: 2, pseudo_channels: 2, pc_bw_gbs: 25.6${hbm} }\n  noc: { rows: 2, cols: 2 }\n`,
      "t.yaml",
    ),
  );

const formulaOf = (report: ProbeReport, name: string): number => {
  const found = report.cases.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no case ${name}`);
  return found.formulaNs;
};

describe("the HBM peak of a stack is its model's peak()", () => {
  it("hbm_ctrl_v1: ports x pc_bw_gbs", () => {
    const machine = buildMachine(graphOf(""), { registry: defaultRegistry() });
    // 2 channels x 2 pseudo-channels x 25.6 GB/s = 102.4 GB/s.
    expect(hbmStackPeaks(machine)).toEqual([
      { id: "sip0.cube0.hbm", impl: "hbm_ctrl_v1", ports: 4, bytesPerNs: 102.4 },
    ]);
  });

  it("hbm_ctrl_v2: ports x burst_bytes / tBL of its preset, whatever pc_bw_gbs says", () => {
    // hbm3e: tCK = 1 / 2.4 ns, tBL = 2 tCK = 0.8333 ns; 32 B per burst: 38.4 GB/s per PC, x 4 = 153.6.
    const [stack] = hbmStackPeaks(
      buildMachine(graphOf(", impl: hbm_ctrl_v2, preset: hbm3e"), { registry: defaultRegistry() }),
    );
    expect(stack?.ports).toBe(4);
    expect(stack?.bytesPerNs).toBeCloseTo(153.6, 9);
    // hbm2: tBL = 2 ns: 16 GB/s per PC, x 4 = 64.
    const [slow] = hbmStackPeaks(
      buildMachine(graphOf(", impl: hbm_ctrl_v2, preset: hbm2"), { registry: defaultRegistry() }),
    );
    expect(slow?.bytesPerNs).toBeCloseTo(64, 9);
  });

  it("kb probe reports the requester's stack peak and times a PC's bus at the model's rate", () => {
    const fast = runProbe(graphOf(", impl: hbm_ctrl_v2, preset: hbm3e"));
    const base = runProbe(graphOf(", impl: hbm_ctrl_v2, preset: hbm3"));
    expect(fast.hbmPeak).toEqual({
      id: "sip0.cube0.hbm",
      impl: "hbm_ctrl_v2",
      ports: 4,
      bytesPerNs: expect.closeTo(153.6, 9),
    });
    // hbm3: 32 B / 1.25 ns = 25.6 GB/s per PC (as pc_bw_gbs); hbm3e 38.4 GB/s. The 32 KiB read's
    // bus term (its links run at 64 GB/s or more, so the bus is the slowest part) shrinks by
    // 32768 / 25.6 - 32768 / 38.4 = 1280 - 853.33 = 426.67 ns; nothing else differs.
    expect(formulaOf(base, "dma-read-local") - formulaOf(fast, "dma-read-local")).toBeCloseTo(426.667, 2);
    expect(formulaOf(base, "dma-write-local") - formulaOf(fast, "dma-write-local")).toBeCloseTo(426.667, 2);
  });
});
