import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineStageEngine, type EnergyTable, energyPj, energyUnitOf, processScale } from "../index.js";

// A model's energy table as a plug-in author writes it: checked with the definition (a located
// COMPONENT_INVALID_DEFINITION), kept on what define* returns, the unit read from the name.

const engine = (energy: unknown) => ({
  kind: "pe_gemm" as const,
  impl: "fast_gemm",
  description: "ceil(m/64) x ceil(n/64) x k cycles at 1 GHz.",
  params: z.strictObject({}),
  timing: () => 1,
  energy: energy as EnergyTable,
});

const table: EnergyTable = {
  costs: [
    { name: "mac_f16_pj", per: "macs.f16", value: 0.2, description: "One f16 MAC.", source: "datasheet" },
    { name: "static_mw", per: "time_ns", value: 3, description: "Leakage.", source: "assumption" },
  ],
  node: { process_nm: 5, vdd_v: 0.7 },
};

describe("energy tables", () => {
  it("are kept on the definition", () => {
    expect(defineStageEngine(engine(table)).energy).toBe(table);
  });

  it.each([
    [{ costs: [{ ...table.costs[0], name: "mac_f16" }] }, 'cost "mac_f16" must end with its unit'],
    [
      { costs: [{ ...table.costs[1], per: "ops" }] },
      'is a power (mW): per must be time_ns or busy_ns, got "ops"',
    ],
    [{ costs: [{ ...table.costs[0], value: -1 }] }, "needs a value >= 0, got -1"],
    [{ costs: [{ ...table.costs[0], source: "" }] }, "needs a description and a source"],
    [{ costs: [table.costs[0], table.costs[0]] }, 'unique in the table, got "mac_f16_pj"'],
    [{ ...table, node: { process_nm: 0, vdd_v: 1 } }, "energy.node must be { process_nm, vdd_v }"],
    [[], "energy must be { costs: ["],
  ])("refuse a malformed table: %j", (energy, message) => {
    expect(() => defineStageEngine(engine(energy))).toThrow(
      expect.objectContaining({
        code: "COMPONENT_INVALID_DEFINITION",
        message: expect.stringContaining(message),
      }),
    );
    expect(() => defineStageEngine(engine(energy))).toThrow('defineStageEngine("fast_gemm"): energy');
  });

  it("read the unit from the name: pJ per unit, pJ per bit of bytes, mW x ns", () => {
    expect(energyUnitOf("act_pj")).toBe("pJ");
    expect(energyUnitOf("link_pj_per_bit")).toBe("pJ/bit");
    expect(energyUnitOf("static_mw")).toBe("mW");
    expect(energyUnitOf("act")).toBeNull();
    expect(energyPj("act_pj", 700, 3)).toBe(2100);
    expect(energyPj("link_pj_per_bit", 0.5, 64)).toBe(256); // 64 bytes = 512 bits
    expect(energyPj("static_mw", 2, 1000)).toBe(2000); // 2 mW for 1 us = 2 nJ
  });

  it("scale with the node and the voltage squared", () => {
    // (7 / 45) x (0.75 / 0.9)^2 = 0.15556 x 0.69444
    expect(processScale({ process_nm: 45, vdd_v: 0.9 }, { process_nm: 7, vdd_v: 0.75 })).toBeCloseTo(
      0.108025,
      6,
    );
    expect(processScale({ process_nm: 45, vdd_v: 0.9 }, { process_nm: 45, vdd_v: 0.9 })).toBe(1);
  });
});
