import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RunResultsSchema } from "@kb/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { formatModelCounters } from "./format-run.js";
import { runKb } from "./test-support.js";

// kb run shows what the busiest timing model counts; --json carries every model's counters.

const copyBench = fileURLToPath(new URL("__fixtures__/copy-bench.ts", import.meta.url));
const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "kb-cli-counters-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** default.yaml with its stacks timed by hbm_ctrl_v2 (hbm3: 32 B bursts), refresh off. */
function v2Topology(): string {
  const file = join(scratch, "default-v2.yaml");
  const text = readFileSync(defaultYaml, "utf8").replace(
    /^cube:\n {2}hbm:\n/m,
    "cube:\n  hbm:\n    impl: hbm_ctrl_v2\n    params: { refresh: none }\n",
  );
  writeFileSync(file, text);
  return file;
}

describe("kb run: model counters", () => {
  it("on hbm_ctrl_v2 the summary names the busiest stack and its counters; --json carries them per PC", async () => {
    const topology = v2Topology();
    const human = await runKb(["run", copyBench, "--topology", topology]);
    expect(human.stderr).toBe("");
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /\nmodel counters of sip0\.cube0\.hbm \(hbm_ctrl_v2, [\d.]+% busy: the busiest component whose model publishes counters\)\n {2}row_hits \d+, row_misses \d+, row_conflicts \d+, act \d+, pre \d+, rd 256, wr 512, ref 0,(?:\n {2}| )write_drain_ns [\d.,]+ ns,(?:\n {2}| )read_queue_mean [\d.,]+ bursts,[\s\S]*?write_queue_max [\d,]+ bursts,(?:\n {2}| )active_ns [\d.,]+ ns\n {2}row-buffer hit rate [\d.]+% \([\d,]+ row hits of [\d,]+ runs: hits, misses, conflicts\)\n {2}busiest pc\d+ \(most RD \+ WR\): row_hits \d+, .*, ref 0, write_drain_ns [\d.,]+ ns, read_queue_mean [\d.,]+ bursts, read_queue_max [\d,]+ bursts, write_queue_mean [\d.,]+ bursts, write_queue_max [\d,]+ bursts,(?:\n {2}| )active_ns [\d.,]+ ns\n/,
    );
    const json = await runKb(["run", copyBench, "--topology", topology, "--json"]);
    expect(json.code).toBe(0);
    const results = RunResultsSchema.parse(JSON.parse(json.stdout));
    const hbm = results.components.find((row) => row.id === "sip0.cube0.hbm");
    const stat = (name: string) => hbm?.stats?.find((each) => each.name === name);
    // The copy: 8 KiB copied in by the host and 8 KiB stored (16 KiB written = 512 bursts of
    // 32 B), 8 KiB loaded (256 bursts read).
    expect(stat("wr")).toMatchObject({ unit: "count", total: 512 });
    expect(stat("rd")?.total).toBe(256);
    expect(stat("rd")?.perPort).toHaveLength(16);
    expect(stat("row_hits")?.description).toMatch(/^Row hits: /);
  }, 60_000);

  it("on hbm_ctrl_v1 (no counters) there is no counters line and no HBM stats in the JSON", async () => {
    const human = await runKb(["run", copyBench, "--topology", defaultYaml]);
    expect(human.code).toBe(0);
    // The NOC routers (port_hop_v1) publish counters, but none waited in this copy: all zero, so
    // nothing to show.
    expect(human.stdout).not.toContain("model counters");
    const json = await runKb(["run", copyBench, "--topology", defaultYaml, "--json"]);
    const results = RunResultsSchema.parse(JSON.parse(json.stdout));
    expect(results.components.find((row) => row.id === "sip0.cube0.hbm")?.stats).toBeUndefined();
    const routerStats = results.components
      .filter((row) => row.kind === "noc_router")
      .flatMap((row) => row.stats ?? []);
    expect(routerStats.map((stat) => stat.name)).toContain("port_wait_ns");
    expect(routerStats.every((stat) => stat.total === 0)).toBe(true);
  }, 60_000);
});

describe("formatModelCounters", () => {
  const row = (id: string, utilisation: number, stats?: { name: string; unit: string; total: number }[]) => ({
    id,
    kind: "x",
    impl: "x_v1",
    utilisation,
    ...(stats === undefined ? {} : { stats: stats.map((stat) => ({ ...stat, description: "A counter." })) }),
  });

  it("takes the busiest component that publishes, groups digits, names units other than count, wraps at 100 columns", () => {
    const many = Array.from({ length: 12 }, (_, i) => ({
      name: `counter_${i}`,
      unit: "count",
      total: 1234567,
    }));
    const lines = formatModelCounters({
      components: [
        row("busy.but.silent", 0.9),
        row("a", 0.5, [{ name: "stall_ns", unit: "ns", total: 12.5 }]),
        row("b", 0.6, many),
      ] as never,
    });
    expect(lines[0]).toBe(
      "model counters of b (x_v1, 60.0% busy: the busiest component whose model publishes counters)",
    );
    expect(lines.slice(1).every((line) => line.length <= 100)).toBe(true);
    expect(lines[1]).toMatch(/^ {2}counter_0 1,234,567, counter_1 1,234,567, .*,$/);
    expect(
      lines
        .slice(1)
        .join(" ")
        .match(/counter_\d+ 1,234,567/g),
    ).toHaveLength(12);
    expect(
      formatModelCounters({
        components: [row("a", 0.5, [{ name: "stall_ns", unit: "ns", total: 12.5 }])] as never,
      }),
    ).toEqual([
      "model counters of a (x_v1, 50.0% busy: the busiest component whose model publishes counters)",
      "  stall_ns 12.5 ns",
    ]);
    expect(formatModelCounters({ components: [row("a", 0.5)] as never })).toEqual([]);
  });
});

describe("kb components list: the counters an impl publishes", () => {
  it("lists hbm_ctrl_v2's counters after its params, with unit and description; --json carries them", async () => {
    const human = await runKb(["components", "list"]);
    expect(human.code).toBe(0);
    const section = human.stdout.slice(human.stdout.indexOf("  hbm_ctrl_v2 (built-in)"));
    expect(section).toMatch(
      /\n {4}counters \(components\[\]\.stats of the results\):\n {6}row_hits \(count\): Row hits: /,
    );
    expect(section).toMatch(/\n {6}ref \(count\): Refresh commands/);
    const json = JSON.parse((await runKb(["components", "list", "--json"])).stdout) as {
      impl: string;
      counters?: { name: string }[];
    }[];
    const v2 = json.find((impl) => impl.impl === "hbm_ctrl_v2");
    expect(v2?.counters?.map((counter) => counter.name)).toEqual([
      "row_hits",
      "row_misses",
      "row_conflicts",
      "act",
      "pre",
      "rd",
      "wr",
      "ref",
      "write_drain_ns",
      "read_queue_mean",
      "read_queue_max",
      "write_queue_mean",
      "write_queue_max",
      "active_ns",
    ]);
    // An impl that declares none has no counters field, and no counters line.
    expect(json.find((impl) => impl.impl === "hbm_ctrl_v1")).not.toHaveProperty("counters");
    const v1 = human.stdout.slice(
      human.stdout.indexOf("  hbm_ctrl_v1 (built-in)"),
      human.stdout.indexOf("  hbm_ctrl_v2"),
    );
    expect(v1).not.toContain("counters (");
  });
});
