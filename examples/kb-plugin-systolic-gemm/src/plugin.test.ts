import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultRegistry, peGemmV2Cycles, peGemmV2Params } from "@kb/builtins";
import { buildMachine, gemmTimingOf, type Machine, type PeCommand, tcmAddress } from "@kb/components";
import { buildMachineFromFile } from "@kb/components/node";
import { MemorySink, OpLogger, type OpRecord, stripTimes } from "@kb/oplog";
import { runProbe } from "@kb/probe";
import { encodeAddress, expandTopology, parseTopology } from "@kb/topology";
import { afterAll, describe, expect, it } from "vitest";
import plugin, { systolicGemmCycles, systolicGemmNs, systolicGemmParams } from "./index.js";

const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
const source = fileURLToPath(new URL("./index.ts", import.meta.url));
const IMPL = "kb-plugin-systolic-gemm:systolic_gemm";
const PLUGIN_LINES = [
  "plugins: [kb-plugin-systolic-gemm]",
  "overrides:",
  '  - match: "sip*.cube*.pe*.pe_gemm"',
  `    impl: "${IMPL}"`,
];

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
// 256^3 in 128^3 tiles (the scheduler's default): 8 GEMM tiles, K accumulated over 2 of them.
const COMMANDS: readonly PeCommand[] = [
  {
    kind: "composite_gemm",
    a: hbm(0),
    b: hbm(1 << 20),
    c: hbm(2 << 20),
    m: 256,
    n: 256,
    k: 256,
    dtype: "f16",
  },
];

interface Run {
  readonly endNs: number;
  readonly records: readonly OpRecord[];
}

function run(machine: Machine, sink: MemorySink, logger: OpLogger, commands = COMMANDS): Run {
  machine.run(machine.submit("sip0.cube0.pe0", commands));
  logger.close();
  return { endNs: machine.env.now, records: sink.records };
}

/** default.yaml, with the plug-in's impl on every PE_GEMM when `withPlugin`. */
function runDefault(withPlugin: boolean, commands = COMMANDS): Run {
  const topology = parseTopology(readFileSync(defaultYaml, "utf8"), defaultYaml);
  const graph = expandTopology(
    withPlugin
      ? {
          ...topology,
          plugins: ["kb-plugin-systolic-gemm"],
          overrides: [{ match: "sip*.cube*.pe*.pe_gemm", impl: IMPL }],
        }
      : topology,
  );
  const sink = new MemorySink();
  const logger = new OpLogger(sink);
  return run(
    buildMachine(graph, { registry: defaultRegistry(withPlugin ? [plugin] : []), opLogger: logger }),
    sink,
    logger,
    commands,
  );
}

const gemmDurations = (records: readonly OpRecord[]) =>
  records.filter((record) => record.op_kind === "gemm").map((record) => record.t_end - record.t_start);

describe("kb-plugin-systolic-gemm", () => {
  const builtin = runDefault(false);
  const systolic = runDefault(true);

  it("times a 128^3 tile as folds * (rows + m + rows + cols - 2) + overhead cycles", () => {
    // folds = ceil(128/32) * ceil(128/32) = 16; 16 * (32 + 128 + 32 + 32 - 2) + 8 = 3560 cycles at 1 GHz.
    expect(systolicGemmNs(systolicGemmParams.parse({}), 128, 128, 128)).toBe(3560);
    expect(systolicGemmNs(systolicGemmParams.parse({ freq_ghz: 2 }), 100, 40, 33)).toBe(
      (Math.ceil(33 / 32) * Math.ceil(40 / 32) * (32 + 100 + 32 + 32 - 2) + 8) / 2,
    );
    const durations = gemmDurations(systolic.records);
    expect(durations).toHaveLength(8);
    for (const ns of durations) expect(ns).toBeCloseTo(3560, 9);
    // The built-in output-stationary array: 16 passes * 128 + 8 = 2056 cycles.
    for (const ns of gemmDurations(builtin.records)) expect(ns).toBeCloseTo(2056, 9);
  });

  it("changes timing only: later end, the same op log without times", () => {
    expect(systolic.endNs).toBeGreaterThan(builtin.endNs);
    expect(builtin.records.length).toBeGreaterThan(0);
    expect(systolic.records.length).toBe(builtin.records.length);
    expect(systolic.records.map(stripTimes)).toEqual(builtin.records.map(stripTimes));
  });

  it("shares the PE's compute slot with PE_MATH: an async GEMM and MATH run one after the other", () => {
    const tcm = (offset: number) => tcmAddress(0, 0, 0, offset);
    const commands: readonly PeCommand[] = [
      {
        kind: "gemm",
        a: tcm(0),
        b: tcm(1 << 16),
        out: tcm(2 << 16),
        m: 128,
        n: 128,
        k: 128,
        dtype: "f16",
        async: true,
      },
      {
        kind: "math",
        op: "exp",
        inputs: [tcm(4 << 16)],
        shape: [128, 128],
        out: tcm(6 << 16),
        dtype: "f16",
        async: true,
      },
      { kind: "wait" },
    ];
    for (const { records } of [runDefault(false, commands), runDefault(true, commands)]) {
      const gemm = records.find((record) => record.op_kind === "gemm");
      const math = records.find((record) => record.op_kind === "math");
      // The MATH op was issued while the GEMM ran, and finished one exp pass (1028 ns) after it.
      expect(math?.t_start).toBeLessThan(gemm?.t_end ?? 0);
      expect((math?.t_end ?? 0) - (gemm?.t_end ?? 0)).toBeCloseTo(1028, 9);
    }
  });

  it("states its timing (GemmTiming), the same as pe_gemm_v2 weight-stationary with 8 overhead cycles", () => {
    const params = systolicGemmParams.parse({ rows: 16, cols: 8 });
    const v2 = peGemmV2Params.parse({ mac_rows: 16, mac_cols: 8, dataflow: "ws", overhead_cycles: 8 });
    for (const [m, n, k] of [
      [128, 128, 128],
      [10, 20, 40],
      [1, 4096, 33],
    ] as const) {
      expect(systolicGemmCycles(params, m, n, k)).toBe(peGemmV2Cycles(v2, m, n, k, "f16"));
    }
    const machine = buildMachine(
      expandTopology({
        ...parseTopology(readFileSync(defaultYaml, "utf8"), defaultYaml),
        plugins: ["kb-plugin-systolic-gemm"],
        overrides: [{ match: "sip*.cube*.pe*.pe_gemm", impl: IMPL }],
      }),
      { registry: defaultRegistry([plugin]) },
    );
    machine.run(machine.submit("sip0.cube0.pe0", COMMANDS));
    const timing = gemmTimingOf(machine.component("sip0.cube0.pe0.pe_gemm"));
    expect(timing).toMatchObject({ macRows: 32, macCols: 32, freqGhz: 1, arrayCycles: 8 * 3560 });
    expect(timing?.gemmCycles(128, 128, 128, "f16")).toBe(3560);
  });

  it("kb probe holds it to its formula: every invariant passes", () => {
    const graph = expandTopology({
      ...parseTopology(readFileSync(defaultYaml, "utf8"), defaultYaml),
      plugins: ["kb-plugin-systolic-gemm"],
      overrides: [{ match: "sip*.cube*.pe*.pe_gemm", impl: IMPL }],
    });
    const report = runProbe(graph, { plugins: [plugin] });
    // 128^3: 16 folds x 222 + 8 = 3560; 32^3: one fold, 32 + 32 + 62 + 8 = 134; 1 x 128 x 128:
    // still 4 x 4 weight folds, each loading 32 rows to stream one: 16 x (32 + 1 + 62) + 8 = 1528.
    expect(report.gemm.map((entry) => [entry.impl, entry.cycles, entry.measuredNs])).toEqual([
      [IMPL, 3560, 3560],
      [IMPL, 134, 134],
      [IMPL, 1528, 1528],
    ]);
    expect(report.invariants.find((invariant) => invariant.id === "gemm_matches_formula")?.status).toBe(
      "pass",
    );
    expect(report.pass).toBe(true);
  });

  it("rejects unknown params (strict schema)", () => {
    expect(systolicGemmParams.safeParse({ row: 16 }).success).toBe(false);
    expect(systolicGemmParams.parse({ rows: 16 })).toEqual({
      rows: 16,
      cols: 32,
      freq_ghz: 1,
      overhead_cycles: 8,
      queue_depth: 4,
    });
  });

  describe("loaded by package name from a topology file", () => {
    // A project with the plug-in installed: node_modules/kb-plugin-systolic-gemm. Its entry links
    // to this package's source, so the test needs no build (the published entry is dist/index.js).
    const project = mkdtempSync(join(tmpdir(), "kb-plugin-systolic-gemm-"));
    afterAll(() => rmSync(project, { recursive: true, force: true }));
    const installed = join(project, "node_modules", "kb-plugin-systolic-gemm");
    mkdirSync(installed, { recursive: true });
    writeFileSync(
      join(installed, "package.json"),
      JSON.stringify({
        name: "kb-plugin-systolic-gemm",
        type: "module",
        exports: { ".": { import: "./index.ts" } },
      }),
    );
    symlinkSync(source, join(installed, "index.ts"));
    const file = join(project, "topology.yaml");
    writeFileSync(file, `${readFileSync(defaultYaml, "utf8")}\n${PLUGIN_LINES.join("\n")}\n`);

    it("buildMachineFromFile resolves the package beside the file and runs like the programmatic build", async () => {
      const sink = new MemorySink();
      const logger = new OpLogger(sink);
      const { topology, machine } = await buildMachineFromFile(file, {
        registryFor: defaultRegistry,
        opLogger: logger,
      });
      expect(topology.plugins).toEqual(["kb-plugin-systolic-gemm"]);
      expect(machine.component("sip0.cube1.pe7.pe_gemm").impl).toBe(IMPL);
      const fromFile = run(machine, sink, logger);
      expect(fromFile.endNs).toBe(systolic.endNs);
      expect(fromFile.records).toEqual(systolic.records);
    });
  });
});
