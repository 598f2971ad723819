/**
 * The whole-model suite: `pnpm bench:model [--layers LIST] [--preset NAME] [--seq N]
 * [--topology FILE] [--full-data] [--json FILE]`.
 *
 * Runs `kb run llama-layer --param preset=... --param seq=... --param layers=N --topology ...`
 * (through `runBench` of @kb/runtime/node, as kb run does: weights are timing-only data unless
 * --full-data) once per N of the list, each in a child process of its own so that its peak RSS
 * is its own, and prints per layer the wall time, DES events, events/s and simulated time, and
 * per run the totals with the child's peak RSS (issue 38's target: 32 layers of llama3-8b at
 * seq 2048 on ref-4sip in under 10 minutes and 8 GB).
 */
import { fileURLToPath } from "node:url";
import { type RunProgress, runBench } from "@kb/runtime/node";
import llamaLayer from "../llama-layer.js";
import {
  failUsage,
  parseSuiteOptions,
  printTable,
  spawnChildReport,
  topologyFile,
  writeJson,
} from "./report.js";

const SCRIPT = "bench:model";

const USAGE = `Usage: pnpm ${SCRIPT} [--layers LIST] [--preset NAME] [--seq N] [--topology FILE] [--full-data] [--json FILE]

A llama model's prefill, layer by layer: kb run llama-layer with layers = each N of LIST, every
launch of every layer simulated, each run in a child process (node --expose-gc) of its own.

  --layers LIST    layers per run, comma-separated (default 1,2)
  --preset NAME    llama-layer's preset (default llama3-8b)
  --seq N          prompt length (default 2048)
  --topology FILE  topology file (default topologies/ref-4sip.yaml)
  --full-data      make the weights' bytes (kb run --full-data); default: timing-only, as kb run
                   without --verify
  --json FILE      also write the results as JSON
  --help           show this help

Per layer: "wall s" from the layer's first launch to the next layer's (host wall clock), "events"
the DES events in it, "events/s" their rate, "sim ms" its simulated time; per run ("all"): the
whole run (uploads included), the child's peak RSS ("peak RSS MB", max RSS of the process) and
the run's simulated time. (--child N runs one run; the suite passes it.)`;

/** One layer of a run. */
interface LayerRow {
  readonly layer: number;
  readonly wallS: number;
  readonly events: number;
  readonly simNs: number;
}

/** One run (a child's report). */
interface ModelRun {
  readonly layers: number;
  readonly preset: string;
  readonly seq: number;
  readonly topology: string;
  readonly hostData: "full" | "timing-only";
  /** runBench: machine build, uploads and every layer, s. */
  readonly wallS: number;
  readonly events: number;
  readonly simNs: number;
  readonly peakRssBytes: number;
  readonly perLayer: readonly LayerRow[];
}

/** Where a layer started: the wall clock, simulated time and events at its first step. */
interface Mark {
  readonly wallMs: number;
  readonly simNs: number;
  readonly events: number;
}

/** The layer (from 0) a llama-layer progress label names (`layer 3/32 · launch ...`), or null. */
function layerOf(label: string | null): number | null {
  const match = /^layer (\d+)\//.exec(label ?? "");
  return match === null ? null : Number(match[1]) - 1;
}

async function child(layers: number, preset: string, seq: number, topology: string, full: boolean) {
  const starts: Mark[] = [];
  const onProgress = (progress: RunProgress) => {
    if (progress.stage !== "phase1" || progress.plan === null) return;
    const layer = layerOf(progress.plan.label);
    if (layer === null || starts[layer] !== undefined) return;
    starts[layer] = { wallMs: performance.now(), simNs: progress.simTimeNs, events: progress.events };
  };
  const start = performance.now();
  const run = await runBench({
    bench: llamaLayer,
    benchFile: fileURLToPath(new URL("../../llama-layer.ts", import.meta.url)),
    topology,
    params: { preset, seq, layers },
    ...(full ? { hostData: "full" as const } : {}),
    onProgress,
  });
  const end: Mark = {
    wallMs: performance.now(),
    simNs: run.results.simTimeNs,
    events: run.results.events,
  };
  const perLayer: LayerRow[] = starts.map((mark, layer) => {
    const next = starts[layer + 1] ?? end;
    return {
      layer: layer + 1,
      wallS: (next.wallMs - mark.wallMs) / 1000,
      events: next.events - mark.events,
      simNs: next.simNs - mark.simNs,
    };
  });
  const report: ModelRun = {
    layers,
    preset,
    seq,
    topology,
    hostData: full ? "full" : "timing-only",
    wallS: (end.wallMs - start) / 1000,
    events: end.events,
    simNs: end.simNs,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    perLayer,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

function spawnChild(args: readonly string[], layers: number): ModelRun {
  return spawnChildReport<ModelRun>(SCRIPT, import.meta.url, args, `${layers}-layer`);
}

function positiveInt(name: string, text: string, fallback: number): number {
  if (text === "") return fallback;
  const value = Number(text.replaceAll("_", ""));
  if (!Number.isInteger(value) || value < 1)
    failUsage(SCRIPT, `--${name} must be a positive integer, got "${text}"`);
  return value;
}

const ms = (ns: number) => (ns / 1e6).toFixed(3);
const rate = (events: number, s: number) => (s > 0 ? `${(events / s / 1e3).toFixed(1)} k` : "-");

async function main(): Promise<void> {
  const full = process.argv.includes("--full-data");
  if (full) process.argv.splice(process.argv.indexOf("--full-data"), 1);
  const parsed = parseSuiteOptions(SCRIPT, USAGE, ["layers", "preset", "seq", "topology", "child"], 1);
  if (parsed === null) return;
  const { extra } = parsed;
  const preset = extra.preset ?? "llama3-8b";
  const seq = positiveInt("seq", extra.seq ?? "", 2048);
  const topology = extra.topology ?? topologyFile("ref-4sip.yaml");
  if (extra.child !== undefined) {
    await child(positiveInt("child", extra.child, 1), preset, seq, topology, full);
    return;
  }
  const list = (extra.layers ?? "1,2").split(",").map((text) => positiveInt("layers", text.trim(), 1));
  const runs: ModelRun[] = [];
  for (const layers of list) {
    process.stderr.write(`${SCRIPT}: ${preset}, seq ${seq}, ${layers} layer(s)...\n`);
    const args = [
      "--child",
      String(layers),
      "--preset",
      preset,
      "--seq",
      String(seq),
      "--topology",
      topology,
    ];
    runs.push(spawnChild(full ? [...args, "--full-data"] : args, layers));
  }
  const rows: string[][] = [];
  for (const run of runs) {
    for (const layer of run.perLayer) {
      rows.push([
        String(run.layers),
        String(layer.layer),
        layer.wallS.toFixed(1),
        String(layer.events),
        rate(layer.events, layer.wallS),
        ms(layer.simNs),
        "",
      ]);
    }
    rows.push([
      String(run.layers),
      "all",
      run.wallS.toFixed(1),
      String(run.events),
      rate(run.events, run.wallS),
      ms(run.simNs),
      (run.peakRssBytes / 2 ** 20).toFixed(0),
    ]);
  }
  process.stdout.write(
    `${preset}, seq ${seq}, ${runs[0]?.hostData ?? "timing-only"} weights, ${topology.split("/").at(-1)}\n\n`,
  );
  printTable(["layers", "layer", "wall s", "events", "events/s", "sim ms", "peak RSS MB"], rows, 2);
  if (parsed.json !== undefined) writeJson(parsed.json, runs);
}

await main();
