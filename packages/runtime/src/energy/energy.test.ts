import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { HBM_CTRL_V1_ENERGY, sramPjPerBit } from "@kb/builtins";
import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { type DeviceTensor, type RunResults, RunResultsSchema, Simulator } from "../index.js";
import { failure } from "../test-support.js";
import { linkClassOf } from "./reading.js";

// Energy by hand, per component kind (docs/energy.md): a 128^3 f16 dot on one PE of default.yaml.
// Every figure is a count the run reports (MACs, bytes, messages) or the simulated time, times the
// table's cost; nothing here pins a time, so a change of the PE's timing leaves these true.

const defaultYaml = readFileSync(
  fileURLToPath(new URL("../../../../topologies/default.yaml", import.meta.url)),
  "utf8",
);

/** The logic tables' factor at default.yaml's 7 nm and 0.75 V: (7 / 45) x (0.75 / 0.9)^2. */
const SCALE = (7 / 45) * (0.75 / 0.9) ** 2;
const PJ = 1e-12;
const PE = "sip0.cube0.pe0";

async function dot(extraYaml = ""): Promise<{ sim: Simulator; results: RunResults }> {
  const sim = await Simulator.fromTopology(defaultYaml + extraYaml);
  const A = await sim.toDevice(sim.random([128, 128], "f16", { seed: 1 }));
  async function dotKernel(tl: TL, a: DeviceTensor) {
    const t = await tl.load(a, [128, 128], "f16");
    await tl.dot(t, t);
  }
  await sim.launch(dotKernel, { grid: { pes: 1, cubes: 1 }, args: [A] });
  return { sim, results: RunResultsSchema.parse(sim.results("dot", {})) };
}

function row(results: RunResults, id: string) {
  const found = results.components.find((each) => each.id === id);
  if (found?.energy === undefined) throw new Error(`${id} has no energy`);
  return { ...found, energy: found.energy };
}

describe("energy of a 128^3 f16 dot on default.yaml, by hand", async () => {
  const { sim, results } = await dot();
  const simNs = results.simTimeNs;

  it("PE_GEMM: 128^3 MACs x 1.5 pJ (45 nm) scaled, plus 0.0005 mW x 32 x 32 for the run", () => {
    const gemm = row(results, `${PE}.pe_gemm`);
    expect(gemm.energy.byCost.mac_f16_pj).toBeCloseTo(128 ** 3 * 1.5 * SCALE * PJ, 18);
    expect(gemm.energy.byCost.mac_i8_pj).toBe(0);
    expect(gemm.energy.byCost.static_mw).toBeCloseTo(0.0005 * 32 * 32 * SCALE * simNs * PJ, 18);
    expect(gemm.energy.dynamicJ).toBeCloseTo(128 ** 3 * 1.5 * SCALE * PJ, 18);
  });

  it("HBM (hbm_ctrl_v1): each byte at hbm3's burst and row energy, not scaled, and the stack's standby", () => {
    const hbm = row(results, "sip0.cube0.hbm");
    // The host's copy in (32 KiB) and the kernel's load (32 KiB).
    expect(hbm.bytes).toBe(2 * 128 * 128 * 2);
    const values = HBM_CTRL_V1_ENERGY.values?.({ channels: 8, pseudo_channels: 2, row_bytes: 1024 }) ?? {};
    expect(hbm.energy.byCost.access_pj_per_bit).toBeCloseTo(
      65536 * 8 * (values.access_pj_per_bit ?? 0) * PJ,
      18,
    );
    expect(hbm.energy.byCost.row_pj_per_bit).toBeCloseTo(65536 * 8 * (values.row_pj_per_bit ?? 0) * PJ, 18);
    // 16 pseudo-channels x (33 mW standby + 64680 pJ of refresh every 3900 ns).
    expect(hbm.energy.staticJ).toBeCloseTo(16 * (33 + 64680 / 3900) * simNs * PJ, 15);
  });

  it("TCM: 2 mW each and its bytes at (10 / 64) x sqrt(4 MiB / 8 KiB) pJ/bit scaled; hops at 0.3 pJ/bit; CPUs 70 pJ a message", () => {
    // Every TCM of the 16 PEs: 2 mW of leakage, scaled, for the run; its bytes (those the engines
    // charged at it) at the 4 MiB array's cost.
    expect(sramPjPerBit(4 * 2 ** 20)).toBeCloseTo((10 / 64) * Math.sqrt(512), 12);
    const tcm = results.energy?.byKind.pe_tcm;
    expect(tcm?.count).toBe(16);
    expect(tcm?.staticJ).toBeCloseTo(16 * 2 * SCALE * simNs * PJ, 15);
    const tcmBytes = results.components
      .filter((each) => each.kind === "pe_tcm")
      .reduce((sum, each) => sum + each.bytes, 0);
    expect(tcm?.dynamicJ).toBeCloseTo(tcmBytes * 8 * sramPjPerBit(4 * 2 ** 20) * SCALE * PJ, 18);
    const xbar = results.components.find((each) => each.kind === "xbar" && each.bytes > 0);
    expect(xbar?.energy?.byCost.hop_pj_per_bit).toBeCloseTo((xbar?.bytes ?? 0) * 8 * 0.3 * SCALE * PJ, 18);
    const cpu = row(results, `${PE}.pe_cpu`);
    expect(cpu.energy.byCost.op_pj).toBeCloseTo(cpu.ops * 70 * SCALE * PJ, 18);
  });

  it("links: on-die bytes x mm x 0.2 pJ/bit/mm scaled; the run is the sum of its parts", () => {
    let bitMm = 0;
    for (const link of sim.machine.fabric.usedLinks()) {
      expect(linkClassOf(link.edge)).toBe(
        link.edge.src === "host" || link.edge.dst === "host"
          ? "host_link"
          : link.edge.src.includes("cube") && link.edge.dst.includes("cube")
            ? "on_die"
            : "package",
      );
      if (linkClassOf(link.edge) === "on_die") bitMm += link.bytes * 8 * link.edge.lengthMm;
    }
    const energy = results.energy;
    expect(energy?.links.wire_pj_per_bit).toBeCloseTo(bitMm * 0.2 * SCALE * PJ, 18);
    const kinds = Object.values(energy?.byKind ?? {});
    expect(kinds.reduce((sum, kind) => sum + kind.totalJ, 0)).toBeCloseTo(energy?.totalJ ?? 0, 15);
    expect(energy?.totalJ).toBeCloseTo((energy?.dynamicJ ?? 0) + (energy?.staticJ ?? 0), 15);
    expect(energy?.averagePowerW).toBeCloseTo((energy?.totalJ ?? 0) / (simNs * 1e-9), 9);
    expect(energy?.edpJs).toBeCloseTo((energy?.totalJ ?? 0) * simNs * 1e-9, 20);
    expect(energy?.jPerToken).toBeNull();
  });

  it("a launch's static energy is the run's static power over its window, and its dynamic holds its MACs", () => {
    const [launch] = results.launches;
    const window = (launch?.endNs ?? 0) - (launch?.startNs ?? 0);
    const staticW = (results.energy?.staticJ ?? 0) / simNs;
    expect(launch?.energy?.staticJ).toBeCloseTo(staticW * window, 15);
    expect(launch?.energy?.dynamicJ).toBeGreaterThan(128 ** 3 * 1.5 * SCALE * PJ);
    expect(launch?.energy?.dynamicJ).toBeLessThan(results.energy?.dynamicJ ?? 0);
  });
});

describe("hbm_ctrl_v2: DRAMPower's energy per command it counted", () => {
  it("each ACT, PRE, RD, WR and REF at hbm3's formula; standby of 16 pseudo-channels for the run", async () => {
    const sim = await Simulator.fromTopology({
      name: "v2",
      cube: {
        hbm: { impl: "hbm_ctrl_v2", preset: "hbm3", channels: 8, pseudo_channels: 2, pc_bw_gbs: 25.6 },
      },
    });
    const X = await sim.toDevice(sim.random([64, 64], "f32", { seed: 2 }));
    const Y = sim.empty([64, 64], "f32");
    async function copy(tl: TL, x: DeviceTensor, y: DeviceTensor) {
      await tl.store(y, await tl.load(x, [64, 64], "f32"));
    }
    await sim.launch(copy, { grid: { pes: 1, cubes: 1 }, args: [X, Y] });
    const results = sim.results();
    const hbm = row(results, "sip0.cube0.hbm");
    const count = (name: string) => hbm.stats?.find((stat) => stat.name === name)?.total ?? Number.NaN;
    // 16 KiB in by the host, 16 KiB read and 16 KiB written by the kernel: 1536 bursts of 32 B.
    expect(count("rd") + count("wr")).toBe(1536);
    const by = hbm.energy.byCost;
    expect(by.act_pj).toBeCloseTo(count("act") * 1.1 * (55 - 32) * 28.125 * PJ, 18);
    expect(by.pre_pj).toBeCloseTo(count("pre") * 1.1 * (55 - 30) * 16.25 * PJ, 18);
    expect(by.rd_pj).toBeCloseTo(count("rd") * 1.1 * (260 - 32) * 1.25 * PJ, 18);
    expect(by.wr_pj).toBeCloseTo(count("wr") * 1.1 * (250 - 32) * 1.25 * PJ, 18);
    expect(by.ref_pj).toBeCloseTo(count("ref") * 1.1 * (200 - 32) * 350 * PJ, 18);
    expect(by.io_pj_per_bit).toBeCloseTo(1536 * 32 * 8 * 0.25 * PJ, 18);
    expect(by.background_mw).toBeCloseTo(16 * 1.1 * 30 * results.simTimeNs * PJ, 15);
  });
});

describe("the topology's energy section", () => {
  it("scales the logic to process_nm and vdd_v, and costs replace a table's values unscaled", async () => {
    const at45 = await dot("\nenergy: { process_nm: 45, vdd_v: 0.9 }\n");
    expect(row(at45.results, `${PE}.pe_gemm`).energy.byCost.mac_f16_pj).toBeCloseTo(128 ** 3 * 1.5 * PJ, 15);
    expect(at45.results.energy).toMatchObject({ processNm: 45, vddV: 0.9 });
    const given = await dot(
      "\nenergy: { costs: { pe_gemm: { mac_f16_pj: 0.2 }, links: { host_link_pj_per_bit: 0 } } }\n",
    );
    expect(row(given.results, `${PE}.pe_gemm`).energy.byCost.mac_f16_pj).toBeCloseTo(128 ** 3 * 0.2 * PJ, 15);
    expect(given.results.energy?.links.host_link_pj_per_bit).toBe(0);
  });

  it("a cost no table has is a TOPOLOGY_INVALID naming it and the names the table has", async () => {
    const error = await failure(dot("\nenergy: { costs: { pe_gemm: { mac_f17_pj: 1 } } }\n"));
    expect(error).toMatchObject({ code: "TOPOLOGY_INVALID" });
    expect(error.message).toContain(
      'energy.costs.pe_gemm.mac_f17_pj: the table of "pe_gemm" has mac_i8_pj, mac_f16_pj',
    );
    const kind = await failure(dot("\nenergy: { costs: { tpu: { op_pj: 1 } } }\n"));
    expect(kind.message).toContain('no component of this topology has kind or impl "tpu"');
  });
});
