/**
 * How much CPU this process gets with 1 and with 2 busy threads (README.md beside this file):
 *
 *   node benches/dist/perf/pdes-cpu-share.js [--seconds 8] [--runs 2]
 *
 * Each thread spins for --seconds of wall time; the process's user CPU over that time is what the
 * kernel gave it. Where the cores are shared between sessions (sched_autogroup), 2 threads get
 * about what 1 gets, and a parallel engine cannot be faster in wall time than one thread.
 */
import { parseArgs } from "node:util";
import { isMainThread, Worker, workerData } from "node:worker_threads";

function spin(ms: number): number {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x++;
  return x;
}

async function cpuWith(threads: number, ms: number): Promise<number> {
  const start = process.cpuUsage();
  const workers = Array.from(
    { length: threads - 1 },
    () => new Worker(new URL(import.meta.url), { workerData: ms }),
  );
  spin(ms);
  await Promise.all(workers.map((worker) => new Promise((resolve) => worker.once("exit", resolve))));
  return process.cpuUsage(start).user / 1e6;
}

if (!isMainThread) {
  spin(workerData as number);
} else {
  const { values } = parseArgs({
    options: { seconds: { type: "string", default: "8" }, runs: { type: "string", default: "2" } },
  });
  const ms = Number(values.seconds) * 1000;
  for (let run = 0; run < Number(values.runs); run++) {
    for (const threads of [1, 2]) {
      const cpu = await cpuWith(threads, ms);
      process.stdout.write(
        `${threads} thread(s): ${cpu.toFixed(2)} s of user CPU in ${ms / 1000} s of wall time\n`,
      );
    }
  }
}
