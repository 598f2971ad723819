/**
 * Reads what record.ts wrote for one run and prints the parallelism a conservative parallel DES
 * on 2 threads could find in it (benches/perf/pdes/README.md):
 *
 *   node benches/dist/perf/pdes-analyze.js /tmp/pdes/8b-128 [--barrier-us 4.1] [--message-us 1.2]
 *
 * (a) the share of events per partition; (b) the lookahead of the topology (recorded with the
 * run); (c) for each way of splitting the partitions over 2 threads and its lookahead L: the
 * windows of width L that hold events (a window-barrier engine that jumps to the next event runs
 * one barrier per such window), events per window and thread; (d) cross-partition messages per
 * window, and those between the two threads. The bound: per window the busier thread's events
 * (events no partition claims go to the idler thread: optimistic), so the event loop takes
 * sum(max) / total of its serial time, plus a barrier per window and a hand-over per message
 * between threads, with the serial rest of the run (machine build, host planning) unchanged.
 * Splits: whole SIPs (L = the SIP links' latency), or cubes (L = the UCIe links' latency, and
 * "+port" with the entered node's first flit added: an upper estimate, since a cube and its SIP
 * level are closer). --barrier-us and --message-us are the costs pingpong.ts measures.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type Strategy, splitTwoThreads, windowStats } from "./windows.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    "barrier-us": { type: "string", default: "0" },
    "message-us": { type: "string", default: "0" },
    "plain-cpu-s": { type: "string" },
    "plain-run-cpu-s": { type: "string" },
    json: { type: "boolean", default: false },
  },
});
const prefix = positionals[0];
if (prefix === undefined) {
  process.stderr.write("pdes-analyze: give the prefix record.ts wrote (--out)\n");
  process.exit(2);
}
const summary = JSON.parse(readFileSync(`${prefix}.json`, "utf8")) as {
  bench: string;
  params: Record<string, string>;
  events: number;
  simTimeNs: number;
  userCpuS: number;
  runUserCpuS: number;
  partitions: string[];
  lookahead: { between: string; minLatencyNs: number; minWithOverheadNs: number }[];
};
const asF64 = (file: string) => {
  const bytes = readFileSync(file);
  return new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
};
const times = asF64(`${prefix}.events.bin`);
const parts = new Uint8Array(readFileSync(`${prefix}.parts.bin`));
const crossBytes = readFileSync(`${prefix}.cross.bin`);
const crossView = new DataView(crossBytes.buffer, crossBytes.byteOffset, crossBytes.byteLength);
const crossCount = crossBytes.byteLength / 18;
const crossTimes = new Float64Array(crossCount);
const crossFrom = new Uint8Array(crossCount);
const crossTo = new Uint8Array(crossCount);
const names = summary.partitions;
const kindOf = (name: string) => (name === "host" ? "host" : name.includes(".cube") ? "cube" : "sip");
/** Per pair of partition kinds: messages and the smallest send -> tail delay seen. */
const crossByKind = new Map<string, { messages: number; minDelayNs: number }>();
for (let i = 0; i < crossCount; i++) {
  crossTimes[i] = crossView.getFloat64(i * 18, true);
  crossFrom[i] = crossView.getUint8(i * 18 + 16);
  crossTo[i] = crossView.getUint8(i * 18 + 17);
  const key = [kindOf(names[crossFrom[i] as number] as string), kindOf(names[crossTo[i] as number] as string)]
    .sort()
    .join("-");
  const row = crossByKind.get(key) ?? { messages: 0, minDelayNs: Number.POSITIVE_INFINITY };
  row.messages += 1;
  row.minDelayNs = Math.min(row.minDelayNs, crossView.getFloat64(i * 18 + 8, true));
  crossByKind.set(key, row);
}
const total = times.length;
const perPartition = new Array<number>(names.length).fill(0);
for (let i = 0; i < total; i++)
  perPartition[parts[i] as number] = (perPartition[parts[i] as number] as number) + 1;

const barrierUs = Number(values["barrier-us"]);
const messageUs = Number(values["message-us"]);
const cpuS = values["plain-cpu-s"] !== undefined ? Number(values["plain-cpu-s"]) : summary.userCpuS;
const runCpuS =
  values["plain-run-cpu-s"] !== undefined ? Number(values["plain-run-cpu-s"]) : summary.runUserCpuS;

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;
const out: string[] = [];
out.push(
  `${summary.bench} ${JSON.stringify(summary.params)}: ${total} events, ${(summary.simTimeNs / 1e3).toFixed(1)} us simulated`,
);
out.push(
  `user CPU ${cpuS.toFixed(2)} s, of which in Environment.run ${runCpuS.toFixed(2)} s (${pct(runCpuS, cpuS)})`,
);
out.push("(a) events per partition:");
const order = perPartition.map((n, i) => [i, n] as const).sort((a, b) => b[1] - a[1]);
for (const [i, n] of order)
  if (n > 0) out.push(`    ${(names[i] as string).padEnd(12)} ${String(n).padStart(10)}  ${pct(n, total)}`);
out.push("(b) lookahead between partitions (min link latency / plus the entered node's first-flit):");
for (const row of summary.lookahead)
  out.push(`    ${row.between.padEnd(10)} ${row.minLatencyNs} ns / ${row.minWithOverheadNs} ns`);
out.push(
  `    cross-partition messages: ${crossCount}; per kind, count and smallest send -> tail delay seen:`,
);
for (const [key, row] of [...crossByKind.entries()].sort())
  out.push(`    ${key.padEnd(10)} ${row.messages}  ${row.minDelayNs.toFixed(3)} ns`);

const sipSip = summary.lookahead.find((row) => row.between === "sip-sip");
const cubeCube = summary.lookahead.find((row) => row.between === "cube-cube");
const strategies: Strategy[] = [];
if (sipSip !== undefined)
  strategies.push({ name: "SIPs split", group: "sip", lookaheadNs: sipSip.minLatencyNs });
if (cubeCube !== undefined) {
  strategies.push({ name: "cubes split, link", group: "cube", lookaheadNs: cubeCube.minLatencyNs });
  strategies.push({ name: "cubes split, +port", group: "cube", lookaheadNs: cubeCube.minWithOverheadNs });
}
const rows: unknown[] = [];
out.push("(c, d) 2 threads: per strategy, the windows of width L holding events and the bound");
for (const strategy of strategies) {
  const threads = splitTwoThreads(names, perPartition, strategy.group);
  const stats = windowStats(times, parts, crossTimes, crossFrom, crossTo, threads, strategy.lookaheadNs);
  const loopShare = stats.sumMax / total;
  const syncS = (stats.windows * barrierUs + stats.crossBetween * messageUs) / 1e6;
  const t2 = cpuS - runCpuS + runCpuS * loopShare + syncS;
  // The barrier cost at which the whole run would still be 1.2x faster (negative: never).
  const breakEvenUs =
    ((cpuS / 1.2 - (cpuS - runCpuS + runCpuS * loopShare) - (stats.crossBetween * messageUs) / 1e6) * 1e6) /
    stats.windows;
  const row = {
    strategy: strategy.name,
    lookaheadNs: strategy.lookaheadNs,
    threadEvents: stats.threadEvents,
    windows: stats.windows,
    windowsBothBusy: stats.windowsBothBusy,
    eventsPerWindow: total / stats.windows,
    crossPerWindow: stats.cross / stats.windows,
    crossBetween: stats.crossBetween,
    loopShare,
    eventBoundSpeedup: total / stats.sumMax,
    syncS,
    speedup: cpuS / t2,
    breakEvenBarrierUs: breakEvenUs,
  };
  rows.push(row);
  out.push(
    `    ${strategy.name} (L = ${strategy.lookaheadNs} ns): threads ${stats.threadEvents[0]} / ${stats.threadEvents[1]} events (+${stats.threadEvents[2]} unclaimed), ` +
      `${stats.windows} windows (${stats.windowsBothBusy} with both threads busy), ${(total / stats.windows).toFixed(2)} events/window, ` +
      `${(stats.cross / stats.windows).toFixed(3)} cross msgs/window (${stats.crossBetween} between threads); ` +
      `event bound ${(total / stats.sumMax).toFixed(3)}x; sync ${syncS.toFixed(2)} s; whole run ${(cpuS / t2).toFixed(3)}x; ` +
      `1.2x needs a barrier under ${breakEvenUs > 0 ? `${breakEvenUs.toFixed(1)} us` : "0 (never)"}`,
  );
}
if (values.json)
  process.stdout.write(
    `${JSON.stringify({ summary: { ...summary, cpuS, runCpuS }, perPartition, crossByKind: Object.fromEntries(crossByKind), rows }, null, 2)}\n`,
  );
else process.stdout.write(`${out.join("\n")}\n`);
