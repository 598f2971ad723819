import { describe, expect, it } from "vitest";
import { ENERGY_METRIC_PATHS } from "./energy-metrics.js";
import { parseSweepSpec } from "./spec.js";
import { metricsOf } from "./table.js";

const spec = (metrics: string) => `name: energy
bench: gemm
axes:
  dtype: { path: params.dtype, values: [f16, i8] }
metrics:
${metrics}
`;

describe("energy as sweep metrics", () => {
  it("accepts the energy paths of the results: run, kind, link cost, busiest component, launch", () => {
    const parsed = parseSweepSpec(
      spec(`  energy_j: energy.totalJ
  power_w: energy.averagePowerW
  edp: energy.edpJs
  j_per_token: energy.jPerToken
  hbm_j: energy.byKind.hbm_ctrl.totalJ
  ucie_j: energy.links.ucie_pj_per_bit
  top: energy.busiest[0].id
  launch0_j: launches[0].energy.totalJ`),
      "energy.yaml",
    );
    expect(Object.keys(parsed.metrics)).toHaveLength(8);
    // What they read from a run's JSON (hand-made: 3.5 uJ over 2 us).
    const results = {
      energy: {
        totalJ: 3.5e-6,
        averagePowerW: 1.75,
        edpJs: 7e-12,
        jPerToken: null,
        byKind: { hbm_ctrl: { count: 1, totalJ: 2e-6, dynamicJ: 1.5e-6, staticJ: 0.5e-6 } },
        links: { ucie_pj_per_bit: 1e-7 },
        busiest: [{ id: "sip0.cube0.hbm", totalJ: 2e-6 }],
      },
      launches: [{ energy: { totalJ: 3e-6 } }],
    };
    expect(metricsOf(results, parsed.metrics)).toEqual({
      energy_j: 3.5e-6,
      power_w: 1.75,
      edp: 7e-12,
      j_per_token: null,
      hbm_j: 2e-6,
      ucie_j: 1e-7,
      top: "sip0.cube0.hbm",
      launch0_j: 3e-6,
    });
  });

  it("a misspelt energy path is an error where the spec says it, listing the paths there are", () => {
    const bad = (path: string) => () => parseSweepSpec(spec(`  e: ${path}`), "energy.yaml");
    expect(bad("energy.totalj")).toThrow(
      /energy\.yaml:6:\d+.*energy has no field "totalj"; the energy paths/s,
    );
    expect(bad("energy.totalj")).toThrow(/energy\.totalJ, energy\.dynamicJ/);
    expect(bad("launches[0].energy.edpJs")).toThrow(/launches\[0\]\.energy has no field "edpJs"/);
    expect(bad("energy.byKind.hbm_ctrl")).toThrow(
      /energy\.byKind\.<kind>\.\{count, totalJ, dynamicJ, staticJ\}/,
    );
    expect(bad("energy.busiest.id")).toThrow(/energy\.busiest\[n\]/);
  });

  it("lists the paths a metric may name, one per field of the results' energy", () => {
    expect(ENERGY_METRIC_PATHS).toEqual([
      "energy.processNm",
      "energy.vddV",
      "energy.totalJ",
      "energy.dynamicJ",
      "energy.staticJ",
      "energy.averagePowerW",
      "energy.edpJs",
      "energy.tokens",
      "energy.jPerToken",
      "energy.byKind.<kind>.{count,totalJ,dynamicJ,staticJ}",
      "energy.links.<cost>",
      "energy.busiest[n].{id,kind,impl,totalJ,dynamicJ,staticJ}",
      "launches[n].energy.{totalJ,dynamicJ,staticJ,averagePowerW}",
    ]);
  });
});
