import { failUsage, median, parseSuiteOptions, printTable, writeJson } from "../report.js";
import { expectedResults, type Workload, workloads } from "./workloads.js";

/** One row of the JSON output. */
interface BenchResult {
  bench: string;
  params: Record<string, number>;
  units: string;
  simEnd: number;
  checksum: number | null;
  wallMedianS: number;
  /** Median user CPU of the timed runs: on a shared machine, less disturbed by load than wall. */
  cpuUserMedianS: number;
}

const USAGE = `Usage: pnpm bench:des [--bench NAME] [--params k=v,...] [--runs N] [--json FILE]

Runs the event-engine workloads (${workloads.map((workload) => workload.name).join(", ")}) and prints
simulated end time, checksum and speed, per wall second and per user CPU second (on a shared
machine the CPU figure is the steadier one). Without --bench: every workload on its defaults
plus the fanout scaling series (NPE=1, 64, 4096 with 204800 tokens in all).

  --bench NAME      run only this workload (fanout: defaults and the scaling series)
  --params k=v,...  override parameters (needs --bench), e.g. --params NPE=64,TPE=3200
  --runs N          timed runs per case, after one warm-up run (default 3)
  --json FILE       also write the results as a JSON array
  --help            show this help

End times and checksums are checked against the spec wherever it gives them; a mismatch
exits with code 1.`;

/** A full collection when node runs with --expose-gc (the bench:des script does). */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function fail(message: string): never {
  return failUsage("bench:des", message);
}

function parseParams(text: string, workload: Workload): Record<string, number> {
  const params: Record<string, number> = { ...workload.defaults };
  for (const pair of text.split(",").filter((part) => part.trim() !== "")) {
    const match = /^\s*([A-Za-z_]\w*)\s*=\s*(\S+)\s*$/.exec(pair);
    if (match === null) fail(`--params: "${pair}" is not of the form name=value`);
    const [, name, rawValue] = match as unknown as [string, string, string];
    if (!(name in workload.defaults)) {
      fail(
        `--params: ${workload.name} has no parameter "${name}"; its parameters are ${Object.keys(workload.defaults).join(", ")}`,
      );
    }
    const value = Number(rawValue);
    if (!Number.isInteger(value) || value < 1)
      fail(`--params: ${name} must be a positive integer, got "${rawValue}"`);
    params[name] = value;
  }
  return params;
}

function sameParams(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

function formatParams(params: Readonly<Record<string, number>>): string {
  return Object.entries(params)
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
}

function formatRate(unitsPerSecond: number): string {
  return unitsPerSecond >= 1e6
    ? `${(unitsPerSecond / 1e6).toFixed(3)} M`
    : `${(unitsPerSecond / 1e3).toFixed(1)} k`;
}

function main(): void {
  const parsed = parseSuiteOptions("bench:des", USAGE, ["bench", "params"], 3);
  if (parsed === null) return;
  const { runs } = parsed;
  const options = { bench: parsed.extra.bench, params: parsed.extra.params, json: parsed.json };

  let cases: { workload: Workload; params: Record<string, number> }[];
  if (options.bench === undefined) {
    if (options.params !== undefined) fail("--params needs --bench to say which workload it is for");
    cases = expectedResults.map((expected) => ({
      workload: workloads.find((workload) => workload.name === expected.bench) as Workload,
      params: { ...expected.params },
    }));
  } else {
    const workload = workloads.find((candidate) => candidate.name === options.bench);
    if (workload === undefined) {
      fail(
        `unknown bench "${options.bench}"; the benches are ${workloads.map((candidate) => candidate.name).join(", ")}`,
      );
    }
    cases =
      options.params !== undefined
        ? [{ workload, params: parseParams(options.params, workload) }]
        : expectedResults
            .filter((expected) => expected.bench === workload.name)
            .map((expected) => ({ workload, params: { ...expected.params } }));
  }

  const header = [
    "bench",
    "params",
    "sim end",
    "checksum",
    "spec",
    "wall median s",
    "units/s",
    "cpu median s",
    "units/cpu s",
  ];
  const rows: string[][] = [];
  const results: BenchResult[] = [];
  let mismatches = 0;
  process.stdout.write(
    `@kb/des speed suite: ${runs} timed run(s) per case after one warm-up (node ${process.version})\n\n`,
  );
  for (const { workload, params } of cases) {
    collectGarbage();
    const warmup = workload.run(params);
    const walls: number[] = [];
    const cpus: number[] = [];
    for (let run = 0; run < runs; run++) {
      // Every timed run starts from a collected heap, so a case does not pay for the garbage of
      // the one before (the NPE=4096 fanout varied 2x with what ran before it).
      collectGarbage();
      const start = process.hrtime.bigint();
      const cpuStart = process.cpuUsage().user;
      const result = workload.run(params);
      cpus.push((process.cpuUsage().user - cpuStart) / 1e6);
      walls.push(Number(process.hrtime.bigint() - start) / 1e9);
      if (result.simEnd !== warmup.simEnd || result.checksum !== warmup.checksum) {
        fail(
          `${workload.name} ${formatParams(params)} gave different results on two runs: the engine is not deterministic`,
        );
      }
    }
    const wallMedianS = median(walls);
    const cpuUserMedianS = median(cpus);
    const expected = expectedResults.find(
      (candidate) => candidate.bench === workload.name && sameParams(candidate.params, params),
    );
    let verdict = "-";
    if (expected !== undefined) {
      const ok = expected.simEnd === warmup.simEnd && expected.checksum === warmup.checksum;
      verdict = ok ? "ok" : `MISMATCH (spec ${expected.simEnd} / ${expected.checksum})`;
      if (!ok) mismatches += 1;
    }
    results.push({
      bench: workload.name,
      params,
      units: workload.units,
      simEnd: warmup.simEnd,
      checksum: warmup.checksum,
      wallMedianS,
      cpuUserMedianS,
    });
    rows.push([
      workload.name,
      formatParams(params),
      String(warmup.simEnd),
      warmup.checksum === null ? "-" : String(warmup.checksum),
      verdict,
      wallMedianS.toFixed(4),
      `${formatRate(warmup.units / wallMedianS)} ${workload.units}/s`,
      cpuUserMedianS.toFixed(4),
      `${formatRate(warmup.units / cpuUserMedianS)}/s`,
    ]);
  }

  printTable(header, rows);

  const rate = (npe: number, cpu = false) => {
    const result = results.find(
      (candidate) =>
        candidate.bench === "fanout" &&
        candidate.params.NPE === npe &&
        candidate.params.NPE * (candidate.params.TPE ?? 0) === 204800,
    );
    return result === undefined ? undefined : 204800 / (cpu ? result.cpuUserMedianS : result.wallMedianS);
  };
  const single = rate(1);
  const wide = rate(4096);
  const singleCpu = rate(1, true);
  const wideCpu = rate(4096, true);
  if (single !== undefined && wide !== undefined && singleCpu !== undefined && wideCpu !== undefined) {
    process.stdout.write(
      `\nfanout scaling: NPE=1 -> NPE=4096 tokens/s falls ${(single / wide).toFixed(2)}x (${formatRate(single)} -> ${formatRate(wide)}); per user CPU second ${(singleCpu / wideCpu).toFixed(2)}x (${formatRate(singleCpu)} -> ${formatRate(wideCpu)})\n`,
    );
  }

  if (options.json !== undefined) {
    writeJson(options.json, results);
  }
  if (mismatches > 0) {
    process.stderr.write(`\nbench:des: ${mismatches} case(s) differ from the spec's end time or checksum\n`);
    process.exit(1);
  }
}

main();
