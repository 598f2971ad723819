/**
 * The parallel-DES prototype on 2 threads (README.md beside this file):
 *
 *   node benches/dist/perf/pdes-prototype.js [--tokens 64] [--stations 8] [--stages 20]
 *     [--hops 20] [--link-ns 500] [--max-work 40] [--burn 3000] [--seed 1] [--runs 5]
 *
 * Runs the synthetic two-partition workload (synthetic.ts) on one thread (both partitions on one
 * `Environment`) and on two (partition 0 on the main thread, partition 1 in a worker thread, the
 * window loop of windowed.ts synchronised by a barrier on a SharedArrayBuffer with
 * `Atomics.wait` / `Atomics.notify`, crossings handed over in double-buffered mailboxes in the
 * same buffer), alternately, --runs times each. Every threaded result must equal the
 * single-thread one byte for byte (JSON of the log, end times, steps and CPU-work checksums),
 * else the script exits with code 1. Prints the medians of wall time and of user CPU (both
 * threads), and the speed-up in wall time.
 */
import { parseArgs } from "node:util";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { type Crossing, type SyntheticParams, type SyntheticResult, syntheticResult } from "./synthetic.js";
import { nextWindow, runSequential, WindowedPartition } from "./windowed.js";

/** Floats per crossing in a mailbox, and the mailbox header (count, sender's next event time). */
const CROSSING_FLOATS = 4;
const HEADER_FLOATS = 2;

interface SideInput {
  readonly params: SyntheticParams;
  readonly shared: SharedArrayBuffer;
}

interface SideOutput {
  readonly result: SyntheticResult;
  readonly windows: number;
  /** performance.timeOrigin + performance.now() when the loop ended, ms. */
  readonly endMs: number;
}

const capacityOf = (params: SyntheticParams) => 2 * params.tokens;
const mailboxFloats = (params: SyntheticParams) => HEADER_FLOATS + capacityOf(params) * CROSSING_FLOATS;

function sharedFor(params: SyntheticParams): SharedArrayBuffer {
  // 8 bytes of arrival counters, then 4 mailboxes (2 sides x 2 parities).
  return new SharedArrayBuffer(8 + 4 * mailboxFloats(params) * 8);
}

function mailbox(
  shared: SharedArrayBuffer,
  params: SyntheticParams,
  side: number,
  parity: number,
): Float64Array {
  const floats = mailboxFloats(params);
  return new Float64Array(shared, 8 + (side * 2 + parity) * floats * 8, floats);
}

/** This side arrives at barrier `round` and sleeps until the other side has too. */
function barrier(flags: Int32Array, self: number, round: number): void {
  Atomics.store(flags, self, round);
  Atomics.notify(flags, self);
  const other = 1 - self;
  for (;;) {
    const seen = Atomics.load(flags, other);
    if (seen >= round) return;
    Atomics.wait(flags, other, seen);
  }
}

/** One side's window loop: run the window, post its crossings, meet the other side, read theirs. */
function runSide(side: number, input: SideInput): SideOutput {
  const { params, shared } = input;
  const flags = new Int32Array(shared, 0, 2);
  const me = new WindowedPartition(side, params);
  let incoming: Crossing[] = [];
  let k: number | null = 0;
  let round = 0;
  while (k !== null) {
    const next = me.window((k + 1) * params.linkNs, incoming);
    round += 1;
    const out = mailbox(shared, params, side, round & 1);
    const sent = me.outbox;
    me.outbox = [];
    if (sent.length > capacityOf(params)) throw new Error("mailbox overflow");
    out[0] = sent.length;
    out[1] = next;
    for (let i = 0; i < sent.length; i++) {
      const crossing = sent[i] as Crossing;
      const at = HEADER_FLOATS + i * CROSSING_FLOATS;
      out[at] = crossing.at;
      out[at + 1] = crossing.token;
      out[at + 2] = crossing.hop;
      out[at + 3] = crossing.rng;
    }
    barrier(flags, side, round);
    const box = mailbox(shared, params, 1 - side, round & 1);
    incoming = [];
    for (let i = 0; i < (box[0] as number); i++) {
      const at = HEADER_FLOATS + i * CROSSING_FLOATS;
      incoming.push({
        at: box[at] as number,
        token: box[at + 1] as number,
        hop: box[at + 2] as number,
        rng: box[at + 3] as number,
      });
    }
    k = nextWindow(params.linkNs, [next, box[1] as number], [...sent, ...incoming]);
  }
  return {
    result: syntheticResult([me.part]),
    windows: round,
    endMs: performance.timeOrigin + performance.now(),
  };
}

/** Both partitions on two threads; the result of both, the windows and the wall time (ms). */
async function runThreaded(
  params: SyntheticParams,
): Promise<{ result: SyntheticResult; windows: number; wallMs: number }> {
  const shared = sharedFor(params);
  const worker = new Worker(new URL(import.meta.url), { workerData: { params, shared } satisfies SideInput });
  const fromWorker = new Promise<SideOutput>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  // The worker starts its loop when it loads; both build their partition first (cheap).
  const startMs = performance.timeOrigin + performance.now();
  const mine = runSide(0, { params, shared });
  const theirs = await fromWorker;
  await worker.terminate();
  const result: SyntheticResult = {
    endNs: [...mine.result.endNs, ...theirs.result.endNs],
    steps: [...mine.result.steps, ...theirs.result.steps],
    sink: [...mine.result.sink, ...theirs.result.sink],
    log: [...mine.result.log, ...theirs.result.log],
  };
  return { result, windows: mine.windows, wallMs: Math.max(mine.endMs, theirs.endMs) - startMs };
}

if (!isMainThread) {
  parentPort?.postMessage(runSide(1, workerData as SideInput));
} else {
  const { values } = parseArgs({
    options: {
      tokens: { type: "string", default: "64" },
      stations: { type: "string", default: "8" },
      stages: { type: "string", default: "20" },
      hops: { type: "string", default: "20" },
      "link-ns": { type: "string", default: "500" },
      "max-work": { type: "string", default: "40" },
      burn: { type: "string", default: "3000" },
      seed: { type: "string", default: "1" },
      runs: { type: "string", default: "5" },
    },
  });
  const params: SyntheticParams = {
    tokens: Number(values.tokens),
    stations: Number(values.stations),
    stages: Number(values.stages),
    hops: Number(values.hops),
    linkNs: Number(values["link-ns"]),
    maxWork: Number(values["max-work"]),
    burn: Number(values.burn),
    seed: Number(values.seed),
  };
  const runs = Number(values.runs);
  const median = (xs: readonly number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
  };
  const seqWall: number[] = [];
  const seqCpu: number[] = [];
  const parWall: number[] = [];
  const parCpu: number[] = [];
  let reference: string | null = null;
  let windows = 0;
  let steps = 0;
  let endNs = 0;
  for (let run = 0; run <= runs; run++) {
    // Run 0 warms both up and is not counted.
    let cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const sequential = runSequential(params);
    const wall1 = performance.now() - t0;
    const cpu1 = process.cpuUsage(cpu0).user / 1000;
    cpu0 = process.cpuUsage();
    const threaded = await runThreaded(params);
    const cpu2 = process.cpuUsage(cpu0).user / 1000;
    const a = JSON.stringify(sequential);
    const b = JSON.stringify(threaded.result);
    if (a !== b) {
      process.stderr.write(
        `pdes-prototype: run ${run}: the 2-thread result differs from the single-thread one\n`,
      );
      process.exit(1);
    }
    if (reference !== null && a !== reference) {
      process.stderr.write(`pdes-prototype: run ${run}: the single-thread result changed between runs\n`);
      process.exit(1);
    }
    reference = a;
    windows = threaded.windows;
    steps = sequential.steps.reduce((x, y) => x + y, 0);
    endNs = Math.max(...sequential.endNs);
    if (run === 0) continue;
    seqWall.push(wall1);
    seqCpu.push(cpu1);
    parWall.push(threaded.wallMs);
    parCpu.push(cpu2);
  }
  const f = (x: number) => x.toFixed(0).padStart(7);
  process.stdout.write(
    `${JSON.stringify(params)}\n` +
      `${steps} stages, ${(endNs / 1e3).toFixed(1)} us simulated, ${windows} windows of ${params.linkNs} ns; ` +
      `results byte-identical in all ${runs + 1} runs (${reference?.length} bytes of JSON)\n` +
      `             wall ms  user CPU ms   (median of ${runs}; runs alternate)\n` +
      `  1 thread   ${f(median(seqWall))}  ${f(median(seqCpu))}\n` +
      `  2 threads  ${f(median(parWall))}  ${f(median(parCpu))}\n` +
      `  speed-up (wall) ${(median(seqWall) / median(parWall)).toFixed(2)}x; per run ${seqWall
        .map((w, i) => (w / (parWall[i] as number)).toFixed(2))
        .join(" ")}\n`,
  );
}
