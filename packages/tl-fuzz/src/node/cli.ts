#!/usr/bin/env node
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { fuzz } from "../fuzz.js";

// `pnpm fuzz:tl [--runs N] [--seed S] [--max-steps K] [--out DIR]`: random tl kernels through
// phase 1 and phase 2 against the independent evaluator. Exit 0 when every program agreed, 1 with
// a repro bench written to DIR when one did not, 2 on a usage error.

const usage = `usage: pnpm fuzz:tl [--runs N] [--seed S] [--max-steps K] [--out DIR]

Runs N random tl kernels (default 10000) from seed S (default: the date, printed) through the
simulator (phase 1) and the op-log replay (phase 2), and compares every output with the
independent evaluator of packages/tl-fuzz/src/reference. The first disagreement is shrunk to a
minimal kernel and written to DIR (default fuzz-tl-failures/) as a bench: kb run FILE --verify.`;

function main(): Promise<number> | number {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        runs: { type: "string" },
        seed: { type: "string" },
        "max-steps": { type: "string" },
        out: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage}\n`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const number = (name: string, fallback: number): number | null => {
    const text = values[name];
    if (text === undefined) return fallback;
    const value = Number(text);
    return Number.isInteger(value) && value >= 0 ? value : null;
  };
  const today = new Date();
  const runs = number("runs", 10_000);
  const seed = number(
    "seed",
    today.getUTCFullYear() * 10_000 + (today.getUTCMonth() + 1) * 100 + today.getUTCDate(),
  );
  const maxSteps = number("max-steps", 10);
  if (runs === null || seed === null || maxSteps === null || maxSteps < 1) {
    process.stderr.write(
      `--runs, --seed and --max-steps take whole numbers (--max-steps >= 1).\n\n${usage}\n`,
    );
    return 2;
  }
  return run(runs, seed, maxSteps, resolve(String(values.out ?? "fuzz-tl-failures")));
}

async function run(runs: number, seed: number, maxSteps: number, outDir: string): Promise<number> {
  const start = performance.now();
  const tty = process.stderr.isTTY === true;
  let shown = 0;
  process.stdout.write(`fuzz:tl seed ${seed}, ${runs} programs of up to ${maxSteps} steps\n`);
  const report = await fuzz({
    runs,
    seed,
    maxSteps,
    onProgress: (done) => {
      const now = performance.now();
      if (!tty || now - shown < 200) return;
      shown = now;
      process.stderr.write(`\r\x1b[K${done} programs, ${((now - start) / 1000).toFixed(1)} s`);
    },
  });
  if (tty) process.stderr.write("\r\x1b[K");
  const seconds = (performance.now() - start) / 1000;
  const rate = (report.runs / seconds).toFixed(0);
  const steps = Object.entries(report.steps)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([kind, count]) => `${kind} ${count}`)
    .join(", ");
  if (report.failure === null) {
    process.stdout.write(
      `${report.runs} programs agreed with the evaluator (${report.ops} op-log records replayed, ${report.loadsCompared} loaded tiles compared with phase 2, ${report.commandLists} kernel instances compared with command-list mode) in ${seconds.toFixed(1)} s, ${rate} programs/s; seed ${seed}\nsteps: ${steps}\n`,
    );
    return 0;
  }
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `fuzz-tl-seed-${seed}.mjs`);
  writeFileSync(file, report.failure.repro);
  process.stdout.write(
    `FAIL after ${report.runs} programs (${seconds.toFixed(1)} s), seed ${seed}: ${report.failure.failure.kind}\n${report.failure.failure.summary}\nshrunk repro: ${file}\n  kb run ${file} --verify\n`,
  );
  return 1;
}

Promise.resolve(main()).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 2;
  },
);
