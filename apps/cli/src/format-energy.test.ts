import { describe, expect, it } from "vitest";
import { formatEnergy } from "./format-energy.js";
import { kb } from "./test-support.js";

const split = (totalJ: number, staticJ: number) => ({ totalJ, dynamicJ: totalJ - staticJ, staticJ });

describe("kb run's energy block", () => {
  it("states the total, its parts, power, EDP, J per token, the kinds and components that spent most, each launch", () => {
    const lines = formatEnergy({
      energy: {
        processNm: 7,
        vddV: 0.75,
        ...split(2e-3, 5e-4),
        averagePowerW: 20,
        edpJs: 2e-7,
        tokens: 32,
        jPerToken: 2e-3 / 32,
        byKind: {
          hbm_ctrl: { count: 2, ...split(1.2e-3, 4e-4) },
          pe_gemm: { count: 16, ...split(6e-4, 1e-4) },
          links: { count: 40, ...split(2e-4, 0) },
          pe_dma: { count: 16, ...split(0, 0) },
        },
        busiest: [
          { id: "sip0.cube0.hbm", kind: "hbm_ctrl", impl: "hbm_ctrl_v1", ...split(7e-4, 2e-4) },
          { id: "sip0.cube1.hbm", kind: "hbm_ctrl", impl: "hbm_ctrl_v1", ...split(5e-4, 2e-4) },
        ],
        links: { wire_pj_per_bit: 2e-4 },
      },
      launches: [{ name: "qkv", energy: { ...split(1e-3, 2e-4), averagePowerW: 25 } }] as never,
    });
    expect(lines).toEqual([
      "energy (counters x the energy tables, logic at 7 nm and 0.75 V; docs/energy.md)",
      "  total     2 mJ (dynamic 1.5 mJ, static 500 µJ); average 20 W; energy-delay 2e-7 J s; 62.5 µJ per token (32 tokens)",
      "  by kind   hbm_ctrl 1.2 mJ (60.0%), pe_gemm 600 µJ (30.0%), links 200 µJ (10.0%)",
      "  most      sip0.cube0.hbm 700 µJ, sip0.cube1.hbm 500 µJ",
      "  launches  qkv 1 mJ",
    ]);
  });

  it("is absent for results written before energy was reported", () => {
    expect(formatEnergy({ launches: [] })).toEqual([]);
  });

  it("kb run prints it, and --json carries the run's, each launch's and each component's energy", async () => {
    const human = await kb("run", "vector-add");
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /\nenergy \(counters x the energy tables, logic at 7 nm and 0\.75 V; docs\/energy\.md\)\n {2}total {2}/,
    );
    const json = await kb("run", "vector-add", "--json");
    const results = JSON.parse(json.stdout);
    expect(results.energy.totalJ).toBeGreaterThan(0);
    expect(results.energy.byKind.hbm_ctrl.totalJ).toBeGreaterThan(0);
    expect(results.launches[0].energy.totalJ).toBeLessThanOrEqual(results.energy.totalJ);
    expect(
      results.components.find((row: { kind: string }) => row.kind === "hbm_ctrl").energy.byCost,
    ).toHaveProperty("access_pj_per_bit");
  }, 60_000);
});
