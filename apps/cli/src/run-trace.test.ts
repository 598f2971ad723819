import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { runKb } from "./test-support.js";

// kb run --trace FILE.json.gz and --trace-counter-ns.

const fixture = (name: string) => fileURLToPath(new URL(`__fixtures__/${name}`, import.meta.url));
const copyBench = fixture("copy-bench.ts");
const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
const gemmBench = fileURLToPath(new URL("../../../benches/gemm.ts", import.meta.url));
/** A GEMM of 12 µs of simulated time: long enough for counters to be sampled. */
const gemm = ["--topology", defaultYaml, "--param", "M=256", "--param", "N=256", "--param", "K=256"];

const run = (...argv: string[]) => runKb(["run", ...argv]);

const scratch = mkdtempSync(join(tmpdir(), "kb-cli-trace-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface TraceEvent {
  readonly name: string;
  readonly ph: string;
  readonly ts: number;
  readonly tid: number;
  readonly args?: Readonly<Record<string, number>>;
}

/** The counter points of a trace by counter (name on a track): [ts, value] in file order. */
function counterSeries(events: readonly TraceEvent[]): Map<string, [number, number][]> {
  const series = new Map<string, [number, number][]>();
  for (const event of events) {
    if (event.ph !== "C") continue;
    const key = `${event.tid} ${event.name}`;
    const points = series.get(key) ?? [];
    points.push([event.ts, Object.values(event.args ?? {})[0] as number]);
    series.set(key, points);
  }
  return series;
}

function traceOf(file: string): TraceEvent[] {
  return (JSON.parse(readFileSync(file, "utf8")) as { traceEvents: TraceEvent[] }).traceEvents;
}

describe("kb run --trace FILE.json.gz", () => {
  it("writes the same trace gzip-compressed: gunzipped, byte-identical to --trace FILE.json", async () => {
    const plain = join(scratch, "copy.trace.json");
    const packed = join(scratch, "copy.trace.json.gz");
    expect((await run(copyBench, "--topology", defaultYaml, "--trace", plain)).code).toBe(0);
    expect((await run(copyBench, "--topology", defaultYaml, "--trace", packed)).code).toBe(0);
    const bytes = readFileSync(packed);
    expect([...bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b]); // the gzip magic number
    const text = readFileSync(plain);
    expect(gunzipSync(bytes).equals(text)).toBe(true);
    expect(bytes.length).toBeLessThan(text.length / 5);
    expect(readdirSync(scratch).filter((name) => name.includes(".tmp-"))).toEqual([]);
  });

  it("a failed run leaves no compressed trace nor its temporary file", async () => {
    const dir = mkdtempSync(join(scratch, "failed-"));
    const failed = await run(fixture("throwing-kernel-bench.ts"), "--trace", join(dir, "t.json.gz"));
    expect(failed.code).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("kb run --trace-counter-ns", () => {
  it("samples each counter at most once per interval (default 1 µs); 0 keeps every change", async () => {
    const sampled = join(scratch, "sampled.trace.json");
    const every = join(scratch, "every.trace.json");
    const coarse = join(scratch, "coarse.trace.json");
    expect((await run(gemmBench, ...gemm, "--trace", sampled)).code).toBe(0);
    expect((await run(gemmBench, ...gemm, "--trace", every, "--trace-counter-ns", "0")).code).toBe(0);
    expect((await run(gemmBench, ...gemm, "--trace", coarse, "--trace-counter-ns", "5000")).code).toBe(0);
    const all = counterSeries(traceOf(every));
    // 0: a point per change, never the same value twice in a row.
    for (const [key, points] of all) {
      for (let i = 1; i < points.length; i++) {
        expect(points[i]?.[1], `${key} at ${points[i]?.[0]} µs`).not.toBe(points[i - 1]?.[1]);
      }
    }
    for (const [file, intervalUs] of [
      [sampled, 1],
      [coarse, 5],
    ] as const) {
      const series = counterSeries(traceOf(file));
      // The same counters, each starting where it starts with every change kept.
      expect([...series.keys()].sort()).toEqual([...all.keys()].sort());
      for (const [key, points] of series) {
        expect(points[0]).toEqual(all.get(key)?.[0]);
        // Points at least the interval apart; only the last (the end of the run) may come sooner.
        for (let i = 1; i < points.length - 1; i++) {
          expect((points[i]?.[0] as number) - (points[i - 1]?.[0] as number), key).toBeGreaterThanOrEqual(
            intervalUs - 1e-9,
          );
        }
      }
    }
    const count = (series: Map<string, unknown[]>) => [...series.values()].reduce((n, p) => n + p.length, 0);
    expect(count(counterSeries(traceOf(coarse)))).toBeLessThan(count(counterSeries(traceOf(sampled))));
    expect(count(counterSeries(traceOf(sampled)))).toBeLessThan(count(all));
    // Everything but the counters is the same.
    const rest = (file: string) => traceOf(file).filter((event) => event.ph !== "C");
    expect(rest(sampled)).toEqual(rest(every));
  });

  it("is refused without --trace, and for a negative number", async () => {
    const alone = await run(copyBench, "--trace-counter-ns", "100");
    expect(alone.code).toBe(1);
    expect(alone.stderr).toMatch(
      /^\[CLI_USAGE\] --trace-counter-ns samples the counters of the trace; add --trace FILE/,
    );
    const negative = await run(copyBench, "--trace", join(scratch, "n.json"), "--trace-counter-ns", "-5");
    expect(negative.code).toBe(1);
    expect(negative.stderr).toContain('--trace-counter-ns needs a number >= 0, such as 1000 or 0; got "-5"');
  });
});
