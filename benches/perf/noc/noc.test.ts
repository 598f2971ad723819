import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { main, runSeries } from "./cli.js";
import { loadReference, nocFidelityDir } from "./config.js";
import { bySeries, judge, type NocPoint, summarise } from "./judge.js";
import { meshTopology } from "./mesh.js";

const dir = nocFidelityDir();
const scratch = mkdtempSync(join(tmpdir(), "kb-bench-noc-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const point = (offered: number, accepted: number, latency: number, saturated: boolean): NocPoint => ({
  mesh: "8x8",
  routing: "dor-xy",
  traffic: "uniform",
  packet_flits: 1,
  offered,
  accepted,
  packet_latency: latency,
  network_latency: latency,
  flit_latency: latency,
  saturated,
});

/** Runs `main` and returns its exit code and what it printed. */
async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    err += String(chunk);
    return true;
  });
  try {
    return { code: await main(argv), out, err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

describe("bench:noc", () => {
  it.skipIf(dir === undefined)(
    "the saturation rule gives reference.json's own summary from its points",
    () => {
      const reference = loadReference(dir);
      const summary = (
        JSON.parse(readFileSync(join(dir as string, "reference.json"), "utf8")) as { summary: object[] }
      ).summary;
      const mine = bySeries(reference).map((series) => summarise(series));
      expect(mine).toEqual(
        summary.map((entry) =>
          expect.objectContaining(
            Object.fromEntries(
              Object.entries(entry).filter(
                ([key]) => !["zero_load_latency_formula", "mean_routers"].includes(key),
              ),
            ),
          ),
        ),
      );
    },
  );

  it("judges a series: zero-load and saturation errors, and latency up to 0.8 x the reference's saturation", () => {
    const reference = [
      point(0.005, 0.005, 33, false),
      point(0.1, 0.1, 34, false),
      point(0.2, 0.2, 40, false),
      point(0.25, 0.2, 200, true),
    ];
    // Zero-load 33.66 vs 33 (+2%, at the limit); saturation 0.1 vs 0.2 (-50%); at 0.1 (<= 0.8 x
    // 0.2 = 0.16) latency 34 vs 34 (0%); the point at 0.2 is above 0.16 and not judged.
    const bench = [
      point(0.005, 0.005, 33.66, false),
      point(0.1, 0.1, 34, false),
      point(0.2, 0.15, 500, true),
    ];
    const verdict = judge(bench, reference);
    expect(verdict.zeroLoadError).toBeCloseTo(0.02, 12);
    expect(verdict.zeroLoadPass).toBe(true);
    expect(verdict.saturationError).toBeCloseTo(-0.5, 12);
    expect(verdict.saturationPass).toBe(false);
    expect(verdict.latencyErrors).toEqual([
      { offered: 0.005, error: expect.closeTo(0.02, 12) },
      { offered: 0.1, error: 0 },
    ]);
    expect(verdict.latencyPass).toBe(true);
    // A reference rate without a bench point counts as a miss.
    expect(judge([point(0.005, 0.005, 33, false)], reference).latencyPass).toBe(false);
  });

  it("a diagonal pattern on a 2 x 2 mesh at a low rate: every packet takes the zero-load 1 + 5H + P cycles", () => {
    // `neighbor` on 2 x 2 sends (x, y) to (x + 1, y + 1) mod 2: the opposite corner, H = 3
    // routers, so 1 + 15 + P = 17 cycles for P = 1 and 20 for P = 4 when no two packets meet.
    const series = (flits: number) =>
      runSeries(
        {
          mesh: "2x2",
          routing: "dor-xy",
          traffic: "neighbor",
          packet_flits: flits,
          offered: [0.0005],
          warmup_cycles: 100,
          measure_cycles: 3500,
          seed: 0,
        },
        {},
        [],
      )[0] as NocPoint;
    expect(series(1)).toMatchObject({
      packet_latency: 17,
      network_latency: 17,
      flit_latency: 17,
      saturated: false,
    });
    expect(series(4)).toMatchObject({
      packet_latency: 20,
      network_latency: 20,
      flit_latency: 17,
      saturated: false,
    });
  });

  it("maps BookSim's router by default (16 B flits at 1 ns, 2 VCs); --param adds to it (vcs=0: the topologies' default router)", () => {
    const params = (router: Parameters<typeof meshTopology>[1]) =>
      meshTopology({ rows: 2, cols: 2 }, router).node("sip0.cube0.noc.r0c0").params;
    expect(params({})).toMatchObject({ flit_bytes: 16, cycle_ns: 1, vcs: 2, first_flit_ns: 4 });
    expect(params({ params: { vcs: 0 } })).toMatchObject({
      flit_bytes: 16,
      cycle_ns: 1,
      vcs: 0,
      first_flit_ns: 4,
    });
  });

  it("writes its points in reference.json's schema, and refuses a config that is not one (exit 2)", async () => {
    const config = join(scratch, "config.json");
    writeFileSync(
      config,
      JSON.stringify({
        runs: [
          {
            mesh: "2x2",
            routing: "dor-xy",
            traffic: "uniform",
            packet_flits: 1,
            offered: [0.01, 0.02],
            warmup_cycles: 100,
            measure_cycles: 500,
            seed: 0,
          },
        ],
      }),
    );
    const out = join(scratch, "out.json");
    const ok = await run(["--config", config, "--json", out]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/uniform\s+1\s+0\.010/);
    // BookSim has no 2 x 2 point: nothing is judged, and the bench does not say it passes.
    expect(ok.out).toMatch(/no series has a BookSim reference \(.*\): nothing judged;/);
    expect(ok.out).not.toMatch(/every series passes/);
    const written = JSON.parse(readFileSync(out, "utf8")) as { points: NocPoint[]; summary: object[] };
    expect(written.points.map((entry) => Object.keys(entry).sort())).toEqual(
      Array(2).fill([
        "accepted",
        "flit_latency",
        "mesh",
        "network_latency",
        "offered",
        "packet_flits",
        "packet_latency",
        "routing",
        "saturated",
        "traffic",
      ]),
    );
    expect(written.summary).toHaveLength(1);
    writeFileSync(config, JSON.stringify({ runs: [{ mesh: "8by8" }] }));
    const bad = await run(["--config", config]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/config\.json: runs\.0\.mesh: a mesh is "RxC", e\.g\. "8x8"/);
  });
});
