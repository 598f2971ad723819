import type { RunResults } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { busiestByEnergy, energyByKind, energyHeadline, energyNames, energyPhrase } from "./energy-model.js";

type RunEnergy = NonNullable<RunResults["energy"]>;

// A run of 2 us that spent 3.5 uJ: 2.5 dynamic + 1 static (1.75 W, EDP 3.5e-6 x 2e-6 J s).
const part = (dynamicJ: number, staticJ: number) => ({ dynamicJ, staticJ, totalJ: dynamicJ + staticJ });
const energy: RunEnergy = {
  processNm: 7,
  vddV: 0.75,
  ...part(2.5e-6, 1e-6),
  averagePowerW: 1.75,
  edpJs: 7e-12,
  tokens: null,
  jPerToken: null,
  byKind: {
    pe_gemm: { count: 8, ...part(0.5e-6, 0.25e-6) },
    hbm: { count: 1, ...part(1.5e-6, 0.5e-6) },
    m_cpu: { count: 1, ...part(0, 0) },
    links: { count: 12, ...part(0.5e-6, 0.25e-6) },
  },
  busiest: [
    { id: "sip0.cube0.hbm", kind: "hbm", impl: "hbm_ctrl_v2", ...part(1.5e-6, 0.5e-6) },
    { id: "sip0.cube0.pe0.pe_gemm", kind: "pe_gemm", impl: "pe_gemm", ...part(0.1e-6, 0.03e-6) },
  ],
  links: { wire_pj_per_bit: 0.5e-6 },
};

describe("the energy section's model", () => {
  it("breaks the run down by kind, most first, ties by name, kinds that spent nothing left out", () => {
    expect(energyByKind({ energy })).toEqual([
      { name: "hbm", dynamicJ: 1.5e-6, staticJ: 0.5e-6, totalJ: 2e-6 },
      { name: "links", dynamicJ: 0.5e-6, staticJ: 0.25e-6, totalJ: 0.75e-6 },
      { name: "pe_gemm", dynamicJ: 0.5e-6, staticJ: 0.25e-6, totalJ: 0.75e-6 },
    ]);
  });

  it("lists the components that spent the most, and the union of names over several runs", () => {
    const busiest = busiestByEnergy({ energy }) ?? [];
    expect(busiest.map((row) => [row.name, row.totalJ])).toEqual([
      ["sip0.cube0.hbm", 2e-6],
      ["sip0.cube0.pe0.pe_gemm", 0.13e-6],
    ]);
    expect(energyNames([busiest.slice(1), busiest])).toEqual(["sip0.cube0.pe0.pe_gemm", "sip0.cube0.hbm"]);
  });

  it("writes the headline as kb run prints it: total, split with shares, W, EDP, per token, node", () => {
    expect(energyHeadline({ energy })).toEqual([
      { label: "energy", text: "3.5 µJ" },
      { label: "dynamic", text: "2.5 µJ (71.4%)" },
      { label: "static", text: "1 µJ (28.6%)" },
      { label: "average power", text: "1.75 W" },
      { label: "energy-delay product", text: "7e-12 J s" },
      { label: "per token", text: "- (the bench counts no tokens)" },
      { label: "logic scaled to", text: "7 nm, 0.75 V" },
    ]);
    // 32 tokens: 3.5 uJ / 32 = 109.4 nJ each.
    const llm = { energy: { ...energy, tokens: 32, jPerToken: 3.5e-6 / 32 } };
    expect(energyHeadline(llm)?.[5]).toEqual({ label: "per token", text: "109.4 nJ (32 tokens)" });
    expect(energyPhrase(llm)).toBe("3.5 µJ, 1.75 W, 109.4 nJ per token");
    expect(energyPhrase({ energy })).toBe("3.5 µJ, 1.75 W");
  });

  it("has nothing for results written before energy was reported", () => {
    expect(energyByKind({})).toBeNull();
    expect(busiestByEnergy({})).toBeNull();
    expect(energyHeadline({})).toBeNull();
    expect(energyPhrase({})).toBe("");
  });
});
