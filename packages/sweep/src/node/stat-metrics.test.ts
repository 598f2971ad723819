import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DeviceTensor, type RunResults, Simulator, sha256Hex } from "@kb/runtime";
import type { TL } from "@kb/tl";
import { afterAll, describe, expect, it } from "vitest";
import type { SweepJob } from "../executor.js";
import { parseSweepSpec } from "../spec.js";
import { FakeExecutor } from "../test-support.js";
import { runSweep } from "./run-sweep.js";

// A sweep metric can name a model counter: stats.<component id | kind | impl>.<counter>.

const scratch = mkdtempSync(join(tmpdir(), "kb-sweep-stats-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const N = 256; // f32: 1 KiB per operand

async function vectorAdd(tl: TL, x: DeviceTensor, y: DeviceTensor, z: DeviceTensor) {
  const a = await tl.load(x, [N], "f32");
  const b = await tl.load(y, [N], "f32");
  await tl.store(z, await tl.add(a, b));
}

/** The results of a vector add on one PE, its stack timed by hbm_ctrl_v2 with `pagePolicy`. */
async function vectorAddResults(pagePolicy: string): Promise<RunResults> {
  const sim = await Simulator.fromTopology({
    name: "t",
    cube: {
      hbm: {
        impl: "hbm_ctrl_v2",
        channels: 8,
        pseudo_channels: 2,
        params: { refresh: "none", page_policy: pagePolicy },
      },
    },
  });
  const x = await sim.toDevice(sim.random([N], "f32", { seed: 1 }));
  const y = await sim.toDevice(sim.random([N], "f32", { seed: 2 }));
  const z = sim.empty([N], "f32");
  await sim.launch(vectorAdd, { grid: { pes: 1, cubes: 1 }, args: [x, y, z] });
  return sim.results();
}

const SPEC = `name: s
bench: ./bench.ts
set:
  topology.cube.hbm.impl: hbm_ctrl_v2
axes:
  page:
    path: topology.cube.hbm.params.page_policy
    values: [open, closed]
metrics:
  wr: stats.hbm_ctrl.wr
  hits: stats.hbm_ctrl_v2.row_hits
  acts: stats.sip0.cube0.hbm.act
  stalls: stats.hbm_ctrl.credit_stalls
`;

describe("a model counter as a sweep metric", () => {
  it("yields its column: summed over the components named, null where no model publishes it", async () => {
    const dir = mkdtempSync(join(scratch, "s-"));
    const benchFile = join(dir, "bench.ts");
    const topologyFile = join(dir, "t.yaml");
    writeFileSync(benchFile, "export default {};\n");
    writeFileSync(topologyFile, "name: t\ncube: { hbm: { channels: 8, pseudo_channels: 2, params: {} } }\n");
    const digest = await sha256Hex("export default {};\n");
    const byPolicy = new Map([
      ["open", await vectorAddResults("open")],
      ["closed", await vectorAddResults("closed")],
    ]);
    const executor = new FakeExecutor((job: SweepJob) => {
      const hbm = (
        job.inputs.topology as { cube: { hbm: { impl: string; params: { page_policy: string } } } }
      ).cube.hbm;
      expect(hbm.impl).toBe("hbm_ctrl_v2");
      const results = byPolicy.get(hbm.params.page_policy);
      return {
        status: "ok",
        results: { ...results, manifest: { digest: `m${job.point}`, bench: { digest } } },
      };
    });
    const spec = parseSweepSpec(SPEC, "s.yaml");
    const summary = await runSweep({ spec, benchFile, topologyFile, outDir: join(dir, "out"), executor });
    expect(summary).toMatchObject({ ok: 2, failed: 0 });
    const csv = readFileSync(join(dir, "out", "results.csv"), "utf8").split("\n");
    expect(csv[0]).toBe("point,status,page,wr,hits,acts,stalls,digest,key,reason");
    const rows = csv.slice(1, 3).map((line) => line.split(","));
    // Both write 3072 B (the store, two copies in): 96 bursts of 32 B. Closed page: no row is
    // open when a run comes, so no hits, and every ACT is a miss.
    expect(rows.map((row) => row.slice(0, 4))).toEqual([
      ["0", "ok", "open", "96"],
      ["1", "ok", "closed", "96"],
    ]);
    expect(rows[1]?.[4]).toBe("0");
    const closed = byPolicy.get("closed")?.components.find((row) => row.id === "sip0.cube0.hbm");
    expect(rows[1]?.[5]).toBe(String(closed?.stats?.find((stat) => stat.name === "row_misses")?.total));
    expect(Number(rows[0]?.[5])).toBeGreaterThan(0);
    // No model publishes credit_stalls: an empty cell.
    expect(rows.map((row) => row[6])).toEqual(["", ""]);
  }, 60_000);
});

describe("a sweep spec's model counters are checked where they are written", () => {
  const spec = (metric: string) =>
    `name: s\nbench: gemm\naxes:\n  n: { path: params.M, values: [64] }\nmetrics:\n  m: ${metric}\n`;

  it("a counter a built-in impl does not publish lists what it publishes, at its line and column", () => {
    expect(() => parseSweepSpec(spec("stats.hbm_ctrl_v2.row_hit"), "s.yaml")).toThrow(
      /s\.yaml:6:6.*hbm_ctrl_v2 publishes no counter "row_hit"; it publishes row_hits, row_misses, row_conflicts, act, pre, rd, wr, ref/s,
    );
    expect(() => parseSweepSpec(spec("stats.hbm_ctrl_v1.row_hits"), "s.yaml")).toThrow(
      /s\.yaml:6:6.*hbm_ctrl_v1 publishes no counters \(kb components list/s,
    );
  });

  it("a stats. path without a component and a counter says how to write one", () => {
    expect(() => parseSweepSpec(spec("stats.row_hits"), "s.yaml")).toThrow(
      /s\.yaml:6:6.*write stats\.<component id \| kind \| impl>\.<counter>/s,
    );
  });

  it("a kind's, a component's or a plug-in's counter is accepted (known only after a run)", () => {
    expect(parseSweepSpec(spec("stats.hbm_ctrl.credit_stalls"), "s.yaml").metrics).toEqual({
      m: "stats.hbm_ctrl.credit_stalls",
    });
    expect(parseSweepSpec(spec("stats.sip0.cube0.hbm.act"), "s.yaml").metrics.m).toBe(
      "stats.sip0.cube0.hbm.act",
    );
  });
});
