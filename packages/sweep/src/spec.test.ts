import { describe, expect, it } from "vitest";
import { parseConstraint } from "./constraint.js";
import { planSweep, pointInputs } from "./points.js";
import { parseSweepSpec } from "./spec.js";

const SPEC = `
name: gemm-hbm
bench: gemm
topology: ref-cube
params: { M: 256, N: 256, K: 256 }
axes:
  hbm:
    path: topology.cube.hbm.preset
    values: [hbm2e, hbm3]
  pes:
    path: [topology.cube.noc.rows, topology.cube.noc.cols]
    values: [[2, 4], [4, 8]]
  tile:
    path: params.tile
    values: [[32, 32, 32], [64, 64, 64], [128, 128, 128]]
constraints:
  - "tile[0] <= params.M / 2"
  - "!(hbm == 'hbm2e' && pes[0] * pes[1] > 8)"
metrics:
  time: simTimeNs
`;

describe("sweep spec", () => {
  it("fills in the defaults: grid design, no plug-ins, 4 GB per point, no retries", () => {
    const spec = parseSweepSpec(SPEC, "gemm-hbm.yaml");
    expect(spec.design).toEqual({ kind: "grid" });
    expect(spec.plugins).toEqual([]);
    expect(spec.run).toEqual({ verify: false, memoryMb: 4096, retries: 0 });
  });

  it("locates a bad key with its line", () => {
    expect(() => parseSweepSpec("name: x\nbench: gemm\naxes: {}\ndesing: grid\n", "s.yaml")).toThrow(
      /s\.yaml:4:1/,
    );
  });

  it("refuses an axis path outside topology, params and plugins", () => {
    expect(() =>
      parseSweepSpec("name: x\nbench: gemm\naxes:\n  a: { path: sim.foo, values: [1] }\n", "s.yaml"),
    ).toThrow(/expected topology/);
  });

  it("refuses a constraint that does not parse, naming it", () => {
    expect(() =>
      parseSweepSpec(`${SPEC}\n`.replace('"tile[0] <= params.M / 2"', '"tile[0] <= "'), "s.yaml"),
    ).toThrow(/constraints\[0\] "tile\[0\] <= ": the expression ends too early/);
  });

  it("refuses a two-path axis whose values are not pairs", () => {
    expect(() => parseSweepSpec(SPEC.replace("[[2, 4], [4, 8]]", "[[2, 4], 8]"), "s.yaml")).toThrow(
      /each of its values must be a list of 2 \(found 8\)/,
    );
  });
});

describe("planning a sweep", () => {
  const base = { name: "ref-cube", cube: { hbm: { channels: 16 }, noc: { rows: 4, cols: 8 } } };

  it("writes a point's values into the topology and params", () => {
    const spec = parseSweepSpec(SPEC, "s.yaml");
    const inputs = pointInputs(spec, base, { hbm: "hbm3", pes: [2, 4], tile: [64, 64, 64] });
    expect(inputs.topology).toEqual({
      name: "ref-cube",
      cube: { hbm: { channels: 16, preset: "hbm3" }, noc: { rows: 2, cols: 4 } },
    });
    expect(inputs.params).toEqual({ M: 256, N: 256, K: 256, tile: [64, 64, 64] });
    // The base is not changed.
    expect(base.cube.noc).toEqual({ rows: 4, cols: 8 });
  });

  it("skips the points a constraint rules out and keeps the grid order of the rest", () => {
    // 2 x 2 x 3 = 12 points; tile 256/2 = 128 passes; hbm2e with 32 PEs fails (3 points).
    const plan = planSweep(parseSweepSpec(SPEC, "s.yaml"), base);
    expect(plan.points.map((point) => point.index)).toEqual([0, 1, 2, 6, 7, 8, 9, 10, 11]);
    expect(plan.skipped.map((point) => point.index)).toEqual([3, 4, 5]);
    expect(plan.skipped[0]?.constraint).toBe("!(hbm == 'hbm2e' && pes[0] * pes[1] > 8)");
  });

  it("applies set: before the axes, so an axis wins over it", () => {
    const spec = parseSweepSpec(
      "name: x\nbench: gemm\nset:\n  topology.cube.hbm.impl: hbm_ctrl_v2\n  params.M: 64\naxes:\n  m: { path: params.M, values: [128] }\n",
      "s.yaml",
    );
    const inputs = pointInputs(spec, { name: "b" }, { m: 128 });
    expect(inputs.topology).toEqual({ name: "b", cube: { hbm: { impl: "hbm_ctrl_v2" } } });
    expect(inputs.params).toEqual({ M: 128 });
  });

  it("appends overrides and adds plug-ins", () => {
    const spec = parseSweepSpec(
      "name: x\nbench: gemm\nplugins: [a]\naxes:\n  o:\n    path: topology.overrides[]\n    values: [null, { match: 'sip0.cube0.pe0.pe_gemm', impl: 'pe_gemm_v2' }]\n  p:\n    path: plugins\n    values: [null, b]\n",
      "s.yaml",
    );
    const plan = planSweep(spec, { overrides: [{ match: "x", impl: "y" }] });
    expect(plan.points.map((point) => [point.inputs.topology.overrides, point.inputs.plugins])).toEqual([
      [[{ match: "x", impl: "y" }], ["a"]],
      [[{ match: "x", impl: "y" }], ["a", "b"]],
      [
        [
          { match: "x", impl: "y" },
          { match: "sip0.cube0.pe0.pe_gemm", impl: "pe_gemm_v2" },
        ],
        ["a"],
      ],
      [
        [
          { match: "x", impl: "y" },
          { match: "sip0.cube0.pe0.pe_gemm", impl: "pe_gemm_v2" },
        ],
        ["a", "b"],
      ],
    ]);
  });
});

describe("constraints", () => {
  it("follow precedence: * before +, comparisons before &&, && before ||", () => {
    expect(parseConstraint("1 + 2 * 3 == 7").evaluate({})).toBe(true);
    expect(parseConstraint("a > 1 && b < 2 || c").evaluate({ a: 0, b: 0, c: true })).toBe(true);
    expect(parseConstraint("a > 1 && (b < 2 || c)").evaluate({ a: 0, b: 0, c: true })).toBe(false);
    expect(parseConstraint("7 % 4 == 3 && -a == 2").evaluate({ a: -2 })).toBe(true);
  });

  it("compare lists by value and read fields", () => {
    expect(parseConstraint("tile == [64, 64, 64]").evaluate({ tile: [64, 64, 64] })).toBe(true);
    expect(parseConstraint('noc.rows * noc["cols"] >= 8').evaluate({ noc: { rows: 2, cols: 4 } })).toBe(true);
  });

  it("name an unknown value and list the known ones", () => {
    expect(() => parseConstraint("tiles > 1").evaluate({ tile: 1, hbm: "x" })).toThrow(
      /no value named "tiles"; known: tile, hbm/,
    );
  });

  it("point at a syntax error's column", () => {
    expect(() => parseConstraint("a > > 1")).toThrow(/unexpected ">" at column 5/);
    expect(() => parseConstraint("a < b < c")).toThrow(/unexpected "<" at column 7/);
  });
});
