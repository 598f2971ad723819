/**
 * What synchronising two threads costs on this machine, for the parallel-DES study
 * (benches/perf/pdes/README.md):
 *
 *   node benches/dist/perf/pdes-pingpong.js [--rounds 20000] [--runs 5]
 *
 * The main thread and one worker thread run the skeleton of a window-barrier conservative engine
 * with no simulation in it:
 *
 * - `barrier (Atomics.wait)`: per window each side adds to a shared counter and sleeps in
 *   `Atomics.wait` until the other side has arrived (`Atomics.notify` wakes it): one window barrier;
 * - `barrier (spin)`: the same, polling `Atomics.load` instead of sleeping;
 * - `message (SAB ring)`: per window the main thread writes a cross-partition message (4 float64:
 *   time, source, target, payload) into a shared ring, then both sides meet at the barrier and
 *   the worker reads it: a barrier plus a message, so message = this minus the barrier;
 * - `message (postMessage)`: a round trip of a small object through `postMessage`, the other
 *   way to hand a message over.
 *
 * Per case, the median over --runs of the wall time and of the process's user and system CPU
 * (both threads) per round, in us. Nothing here is simulated; the figures are the floor a parallel engine pays
 * per window and per message.
 */
import { parseArgs } from "node:util";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

type CaseName = "wait" | "spin" | "ring" | "post";

interface WorkerInput {
  readonly kind: CaseName;
  readonly rounds: number;
  readonly shared: SharedArrayBuffer;
}

/** The shared words: [0] arrivals of main, [1] arrivals of the worker; the ring after them. */
const RING_SLOTS = 1024;

function arrive(flags: Int32Array, self: number, other: number, round: number, spin: boolean): void {
  Atomics.store(flags, self, round);
  Atomics.notify(flags, self);
  if (spin) {
    while (Atomics.load(flags, other) < round) {
      // poll
    }
    return;
  }
  for (;;) {
    const seen = Atomics.load(flags, other);
    if (seen >= round) return;
    Atomics.wait(flags, other, seen);
  }
}

function workerSide(input: WorkerInput): void {
  const flags = new Int32Array(input.shared, 0, 2);
  const ring = new Float64Array(input.shared, 8, RING_SLOTS * 4);
  let sum = 0;
  for (let round = 1; round <= input.rounds; round++) {
    arrive(flags, 1, 0, round, input.kind === "spin");
    if (input.kind === "ring") {
      const slot = (round % RING_SLOTS) * 4;
      sum += (ring[slot] as number) + (ring[slot + 3] as number);
    }
  }
  parentPort?.postMessage(sum);
}

async function runCase(
  kind: CaseName,
  rounds: number,
): Promise<{ wallUs: number; cpuUs: number; sysUs: number }> {
  const shared = new SharedArrayBuffer(8 + RING_SLOTS * 4 * 8);
  if (kind === "post") {
    const worker = new Worker(new URL(import.meta.url), { workerData: { kind, rounds, shared } });
    await new Promise<void>((resolve) => worker.once("online", () => resolve()));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      let round = 0;
      worker.on("message", () => {
        round += 1;
        if (round === rounds) resolve();
        else worker.postMessage({ t: round, from: 0, to: 1, payload: round });
      });
      worker.postMessage({ t: 0, from: 0, to: 1, payload: 0 });
    });
    const wallUs = ((performance.now() - t0) * 1000) / rounds;
    const used = process.cpuUsage(cpu0);
    await worker.terminate();
    return { wallUs, cpuUs: used.user / rounds, sysUs: used.system / rounds };
  }
  const worker = new Worker(new URL(import.meta.url), { workerData: { kind, rounds, shared } });
  const done = new Promise<void>((resolve) => worker.once("message", () => resolve()));
  await new Promise<void>((resolve) => worker.once("online", () => resolve()));
  const flags = new Int32Array(shared, 0, 2);
  const ring = new Float64Array(shared, 8, RING_SLOTS * 4);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let round = 1; round <= rounds; round++) {
    if (kind === "ring") {
      const slot = (round % RING_SLOTS) * 4;
      ring[slot] = round;
      ring[slot + 1] = 0;
      ring[slot + 2] = 1;
      ring[slot + 3] = round * 0.5;
    }
    arrive(flags, 0, 1, round, kind === "spin");
  }
  const wallUs = ((performance.now() - t0) * 1000) / rounds;
  await done;
  const used = process.cpuUsage(cpu0);
  await worker.terminate();
  return { wallUs, cpuUs: used.user / rounds, sysUs: used.system / rounds };
}

if (!isMainThread) {
  const input = workerData as WorkerInput;
  if (input.kind === "post") {
    parentPort?.on("message", (message: unknown) => parentPort?.postMessage(message));
  } else {
    workerSide(input);
  }
} else {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "20000" },
      runs: { type: "string", default: "5" },
      json: { type: "boolean", default: false },
    },
  });
  const rounds = Number(values.rounds);
  const runs = Number(values.runs);
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
  };
  const labels: Record<CaseName, string> = {
    wait: "barrier (Atomics.wait)",
    spin: "barrier (spin)",
    ring: "barrier + message (SAB ring)",
    post: "message round trip (postMessage)",
  };
  const results: {
    case: string;
    wallUs: number;
    cpuUs: number;
    sysUs: number;
    runsWallUs: number[];
    runsCpuUs: number[];
  }[] = [];
  for (const kind of ["wait", "spin", "ring", "post"] as const) {
    // Spinning on 2 oversubscribed cores can stall for whole time slices: fewer rounds.
    const n = kind === "spin" ? Math.max(1, Math.floor(rounds / 10)) : rounds;
    const wall: number[] = [];
    const cpu: number[] = [];
    const sys: number[] = [];
    await runCase(kind, Math.min(n, 1000)); // warm-up
    for (let run = 0; run < runs; run++) {
      const result = await runCase(kind, n);
      wall.push(result.wallUs);
      cpu.push(result.cpuUs);
      sys.push(result.sysUs);
    }
    results.push({
      case: labels[kind],
      wallUs: median(wall),
      cpuUs: median(cpu),
      sysUs: median(sys),
      runsWallUs: wall,
      runsCpuUs: cpu,
    });
  }
  if (values.json) process.stdout.write(`${JSON.stringify({ rounds, runs, results }, null, 2)}\n`);
  else {
    process.stdout.write(
      `rounds ${rounds} (spin ${Math.floor(rounds / 10)}), median of ${runs} runs, per round:\n`,
    );
    for (const row of results) {
      process.stdout.write(
        `  ${row.case.padEnd(34)} wall ${row.wallUs.toFixed(2).padStart(9)} us   user CPU ${row.cpuUs.toFixed(2).padStart(8)} us   system CPU ${row.sysUs.toFixed(2).padStart(8)} us\n`,
      );
    }
  }
}
