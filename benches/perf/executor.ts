/**
 * The @kb/data-executor speed suite: `pnpm bench:executor [--part NAME] [--sizes LIST]
 * [--dtypes LIST] [--threads LIST] [--runs N] [--json FILE]`.
 *
 * Part `gemm`: the GEMM of phase 2 (the op-log replay). For each dtype, square size and thread
 * count, one timed operation is what the replay does for a GEMM op: decode A and B from their
 * bytes to f32 (`toFloat32`: a copy for f32, a table look-up for f16, a shift for bf16), then
 * C = A @ B in f32 on a `GemmPool` of that many threads (1: the calling thread alone; 2: split by
 * rows of C between the calling thread and a worker). Also times the bulk conversions alone.
 *
 * Every run is checked: 64 sampled entries of C (and its corners) against an f64 dot product of
 * the decoded inputs, within (k + 2) * 2^-23 * sum |a b|, and C must be bit-identical whatever the
 * thread count and run. A failed check exits with code 1. Nothing here asserts a speed.
 */
import { availableParallelism } from "node:os";
import { fromFloat32, toFloat32, verify } from "@kb/data-executor";
import { GemmPool } from "@kb/data-executor/node";
import { MemorySink, OpLogger } from "@kb/oplog";
import { replay } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";
import type { Dtype, Tensor } from "@kb/tensor";
import gemmBench from "../gemm.js";
import { failUsage, median, parseSuiteOptions, printTable, topologyFile, writeJson } from "./report.js";

const SCRIPT = "bench:executor";

/** One row of the JSON output (every part's rows carry `part`). */
interface GemmResult {
  part: "gemm";
  dtype: Dtype;
  m: number;
  n: number;
  k: number;
  threads: number;
  /** 2 m n k. */
  flops: number;
  /** Decoding A and B to f32, median over the runs, ms. */
  decodeMedianMs: number;
  /** The GEMM alone (copies into and out of the kernel's memory included), median, ms. */
  gemmMedianMs: number;
  gemmMs: number[];
  /** flops / gemmMedianMs. */
  gflops: number;
  /** flops / (decode + GEMM) medians. */
  gflopsWithDecode: number;
  /** gflops over the 1-thread row's (null without one). */
  speedup: number | null;
  /** Entries of C checked against the f64 reference in each run. */
  checkedEntries: number;
}

interface ConversionResult {
  part: "gemm";
  conversion: "toFloat32" | "fromFloat32";
  dtype: Dtype;
  elements: number;
  medianMs: number;
  /** Millions of elements per second. */
  melementsPerS: number;
}

/** The phase-2 wall time of `kb run gemm --verify` (the replay alone, and the reference). */
interface Phase2Result {
  part: "phase2";
  bench: "gemm";
  topology: string;
  m: number;
  n: number;
  k: number;
  dtype: Dtype;
  /** Op records replayed. */
  ops: number;
  threads: number;
  /** Phase 1 (the bench's run with an op logger), ms. */
  phase1Ms: number;
  /** The replay (DataExecutor over the op log), median and each run, ms. */
  replayMedianMs: number;
  replayMs: number[];
  /** Computing the host reference and comparing (once), ms. */
  referenceMs: number;
}

/** The rows of every part (a new part adds its row type here). */
type SuiteResult = GemmResult | ConversionResult | Phase2Result;

/** A part of the suite: runs its measurements and checks, prints its tables, returns its rows. */
interface SuitePart {
  readonly name: string;
  readonly run: (context: PartContext) => Promise<SuiteResult[]>;
}

interface PartContext {
  readonly runs: number;
  readonly extra: Readonly<Record<string, string | undefined>>;
}

// The parts in the order they run; `--part NAME` picks one.
const PARTS: readonly SuitePart[] = [
  { name: "gemm", run: gemmPart },
  { name: "phase2", run: phase2Part },
];

const OPTIONS = ["part", "sizes", "dtypes", "threads", "phase2-size"];

const USAGE = `Usage: pnpm ${SCRIPT} [--part NAME] [--sizes LIST] [--dtypes LIST] [--threads LIST] [--phase2-size N] [--runs N] [--json FILE]

Speed of phase 2 (the op-log replay with real arithmetic) of @kb/data-executor, in parts:

  gemm    decode A and B to f32 + C = A @ B (f32 accumulation) on a GemmPool, square sizes,
          and the bulk dtype conversions alone
  phase2  kb run gemm --verify for M = N = K = --phase2-size (default 2048) on default.yaml, f16:
          the replay of its op log on 1 and 2 threads, and the reference

  --part NAME      run only this part (${PARTS.map((part) => part.name).join(", ")})
  --sizes LIST     GEMM sizes M = N = K, comma-separated (default 256,512,1024)
  --dtypes LIST    input dtypes among f32, f16, bf16 (default f32,f16,bf16)
  --threads LIST   GemmPool thread counts (default 1,2)
  --phase2-size N  M = N = K of the phase2 part (default 2048)
  --runs N         timed runs per point after one warm-up (default 5)
  --json FILE      also write the results as a JSON array
  --help           show this help

Every GEMM run is checked (sampled entries against an f64 reference, identical results on any
thread count), every replay is verified against the bench's reference; a failed check exits
with code 1.`;

function fail(message: string): never {
  return failUsage(SCRIPT, message);
}

function checkFailed(message: string): never {
  process.stderr.write(`${SCRIPT}: check failed: ${message}\n`);
  process.exit(1);
}

function positiveList(name: string, text: string | undefined, fallback: readonly number[]): number[] {
  if (text === undefined) return [...fallback];
  const values = text.split(",").map((item) => Number(item.trim()));
  if (values.length === 0 || values.some((value) => !Number.isInteger(value) || value < 1)) {
    fail(`--${name} must be a comma-separated list of positive integers, got "${text}"`);
  }
  return values;
}

const GEMM_DTYPES: readonly Dtype[] = ["f32", "f16", "bf16"];

function dtypeList(text: string | undefined): Dtype[] {
  if (text === undefined) return [...GEMM_DTYPES];
  const values = text.split(",").map((item) => item.trim());
  for (const value of values) {
    if (!(GEMM_DTYPES as readonly string[]).includes(value)) {
      fail(`--dtypes takes ${GEMM_DTYPES.join(", ")}, got "${value}"`);
    }
  }
  return values as Dtype[];
}

/** `length` values uniform in [-1, 1) from a seeded generator (mulberry32): same inputs every run. */
function seededValues(length: number, seed: number): Float32Array {
  const values = new Float32Array(length);
  let state = seed >>> 0;
  for (let i = 0; i < length; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    values[i] = ((t ^ (t >>> 14)) >>> 0) / 2 ** 31 - 1;
  }
  return values;
}

function elapsedMs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Entries of C checked: 64 seeded ones and the four corners. */
function sampleEntries(m: number, n: number): [number, number][] {
  const entries: [number, number][] = [
    [0, 0],
    [0, n - 1],
    [m - 1, 0],
    [m - 1, n - 1],
  ];
  const picks = seededValues(128, 99);
  for (let i = 0; i < 64; i++) {
    entries.push([
      Math.min(m - 1, Math.floor(((picks[2 * i] as number) + 1) * 0.5 * m)),
      Math.min(n - 1, Math.floor(((picks[2 * i + 1] as number) + 1) * 0.5 * n)),
    ]);
  }
  return entries;
}

/** Checks the sampled entries of C (m x n) = A (m x k) @ B (k x n) against f64 dot products. */
function checkProduct(
  label: string,
  a: Float32Array,
  b: Float32Array,
  c: Float32Array,
  n: number,
  k: number,
  entries: readonly [number, number][],
): void {
  for (const [i, j] of entries) {
    let sum = 0;
    let sumAbs = 0;
    for (let p = 0; p < k; p++) {
      const product = (a[i * k + p] as number) * (b[p * n + j] as number);
      sum += product;
      sumAbs += Math.abs(product);
    }
    const value = c[i * n + j] as number;
    const tolerance = (k + 2) * 2 ** -23 * sumAbs;
    if (!(Math.abs(value - sum) <= tolerance)) {
      checkFailed(`${label}: C(${i}, ${j}) = ${value}, expected ${sum} within ${tolerance}`);
    }
  }
}

function sameBits(x: Float32Array, y: Float32Array): boolean {
  const left = new Uint32Array(x.buffer, x.byteOffset, x.length);
  const right = new Uint32Array(y.buffer, y.byteOffset, y.length);
  for (let i = 0; i < left.length; i++) if (left[i] !== right[i]) return false;
  return true;
}

async function gemmPart(context: PartContext): Promise<SuiteResult[]> {
  const sizes = positiveList("sizes", context.extra.sizes, [256, 512, 1024]);
  const dtypes = dtypeList(context.extra.dtypes);
  const threadCounts = positiveList("threads", context.extra.threads, [1, 2]);
  const pools = new Map<number, GemmPool>();
  for (const threads of threadCounts) pools.set(threads, await GemmPool.create(threads));
  warmUp(pools);
  const results: SuiteResult[] = [];
  try {
    for (const dtype of dtypes) {
      for (const size of sizes) results.push(...measureGemm(dtype, size, pools, context.runs));
    }
  } finally {
    for (const pool of pools.values()) await pool.close();
  }
  const gemmRows = results.filter((result): result is GemmResult => "threads" in result);
  printTable(
    ["dtype", "M=N=K", "threads", "decode ms", "gemm ms", "GFLOP/s", "GFLOP/s with decode", "speed-up"],
    gemmRows.map((row) => [
      row.dtype,
      String(row.m),
      String(row.threads),
      row.decodeMedianMs.toFixed(2),
      row.gemmMedianMs.toFixed(2),
      row.gflops.toFixed(1),
      row.gflopsWithDecode.toFixed(1),
      row.speedup === null ? "-" : `${row.speedup.toFixed(2)}x`,
    ]),
    1,
  );
  const conversions = measureConversions(dtypes, context.runs);
  process.stdout.write("\n");
  printTable(
    ["conversion", "dtype", "elements", "median ms", "M elements/s"],
    conversions.map((row) => [
      row.conversion,
      row.dtype,
      String(row.elements),
      row.medianMs.toFixed(2),
      row.melementsPerS.toFixed(0),
    ]),
    2,
  );
  return [...results, ...conversions];
}

/**
 * Runs 256^3 GEMMs on every pool for about half a second each: the kernel is compiled by the
 * baseline compiler first and optimized once it has run enough (about 0.2 s of GEMMs), and an idle
 * CPU takes a while to reach its full clock.
 */
function warmUp(pools: Map<number, GemmPool>): void {
  const size = 256;
  const a = seededValues(size * size, 1);
  const c = new Float32Array(size * size);
  for (const pool of pools.values()) {
    for (let i = 0; i < 400; i++) pool.sgemm(size, size, size, a, size, a, size, c, size);
  }
}

/** One dtype and size on every pool: a warm-up, then `runs` rounds of every pool in turn. */
function measureGemm(dtype: Dtype, size: number, pools: Map<number, GemmPool>, runs: number): GemmResult[] {
  const m = size;
  const n = size;
  const k = size;
  // The inputs as the replay finds them: bytes of `dtype`; `a` and `b` are their exact values.
  const aBytes = fromFloat32(seededValues(m * k, 2 * size + 1), dtype);
  const bBytes = fromFloat32(seededValues(k * n, 2 * size + 2), dtype);
  const a = new Float32Array(m * k);
  const b = new Float32Array(k * n);
  const entries = sampleEntries(m, n);
  const label = (threads: number) => `${dtype} ${m}x${n}x${k} on ${threads} thread(s)`;
  let first: Float32Array | null = null;
  const runOnce = (threads: number, pool: GemmPool): [number, number] => {
    const c = new Float32Array(m * n).fill(Number.NaN);
    const start = process.hrtime.bigint();
    toFloat32(aBytes, dtype, a);
    toFloat32(bBytes, dtype, b);
    const decodeMs = elapsedMs(start);
    const gemmStart = process.hrtime.bigint();
    pool.sgemm(m, n, k, a, k, b, n, c, n);
    const gemmMs = elapsedMs(gemmStart);
    checkProduct(label(threads), a, b, c, n, k, entries);
    if (first === null) first = c;
    else if (!sameBits(first, c)) checkFailed(`${label(threads)}: C differs from the first run's`);
    return [decodeMs, gemmMs];
  };
  const order = [...pools.entries()];
  for (const [threads, pool] of order) runOnce(threads, pool);
  const decode = new Map<number, number[]>(order.map(([threads]) => [threads, []]));
  const gemm = new Map<number, number[]>(order.map(([threads]) => [threads, []]));
  for (let run = 0; run < runs; run++) {
    for (const [threads, pool] of order) {
      const [decodeMs, gemmMs] = runOnce(threads, pool);
      decode.get(threads)!.push(decodeMs);
      gemm.get(threads)!.push(gemmMs);
    }
  }
  const flops = 2 * m * n * k;
  const rows = order.map(([threads]): GemmResult => {
    const decodeMedianMs = median(decode.get(threads)!);
    const gemmMedianMs = median(gemm.get(threads)!);
    return {
      part: "gemm",
      dtype,
      m,
      n,
      k,
      threads,
      flops,
      decodeMedianMs,
      gemmMedianMs,
      gemmMs: gemm.get(threads)!,
      gflops: flops / gemmMedianMs / 1e6,
      gflopsWithDecode: flops / (decodeMedianMs + gemmMedianMs) / 1e6,
      speedup: null,
      checkedEntries: entries.length,
    };
  });
  const single = rows.find((row) => row.threads === 1);
  if (single !== undefined) for (const row of rows) row.speedup = row.gflops / single.gflops;
  return rows;
}

/** toFloat32 and fromFloat32 of 2^20 elements per dtype; round trips are checked. */
function measureConversions(dtypes: readonly Dtype[], runs: number): ConversionResult[] {
  const elements = 2 ** 20;
  const values = seededValues(elements, 7);
  const results: ConversionResult[] = [];
  for (const dtype of dtypes) {
    const bytes = fromFloat32(values, dtype);
    const decoded = new Float32Array(elements);
    const encoded = new Uint8Array(bytes.length);
    const decodeMs: number[] = [];
    const encodeMs: number[] = [];
    for (let run = 0; run <= runs; run++) {
      let start = process.hrtime.bigint();
      toFloat32(bytes, dtype, decoded);
      if (run > 0) decodeMs.push(elapsedMs(start));
      start = process.hrtime.bigint();
      fromFloat32(decoded, dtype, encoded);
      if (run > 0) encodeMs.push(elapsedMs(start));
      // Decoding then encoding values that are already of `dtype` gives the same bytes back.
      for (let i = 0; i < bytes.length; i += 4099) {
        if (encoded[i] !== bytes[i]) checkFailed(`${dtype} round trip changed byte ${i}`);
      }
    }
    for (const [conversion, times] of [
      ["toFloat32", decodeMs],
      ["fromFloat32", encodeMs],
    ] as const) {
      const medianMs = median(times);
      results.push({
        part: "gemm",
        conversion,
        dtype,
        elements,
        medianMs,
        melementsPerS: elements / medianMs / 1e3,
      });
    }
  }
  return results;
}

/**
 * `kb run gemm --verify` for M = N = K = `--phase2-size` (default 2048) on default.yaml, f16:
 * phase 1 once with an op logger, then the replay timed `runs` times per thread count (a fresh
 * memory store each time), every replay verified against the bench's reference (computed once).
 */
async function phase2Part(context: PartContext): Promise<SuiteResult[]> {
  const size = positiveList("phase2-size", context.extra["phase2-size"], [2048])[0] as number;
  const threadCounts = positiveList("threads", context.extra.threads, [1, 2]);
  const sink = new MemorySink();
  const sim = await loadSimulator(topologyFile("default.yaml"), { opLogger: new OpLogger(sink) });
  const params = gemmBench.params.parse({ M: size, N: size, K: size, dtype: "f16" });
  const phase1Start = process.hrtime.bigint();
  const outcome = await gemmBench.run(sim, params);
  const phase1Ms = elapsedMs(phase1Start);
  const referenceStart = process.hrtime.bigint();
  const references = new Map<string, Tensor>();
  for (const [name, check] of Object.entries(outcome?.check ?? {}))
    references.set(name, await check.reference());
  const referenceMs = elapsedMs(referenceStart);
  const results: Phase2Result[] = [];
  for (const threads of threadCounts) {
    const pool = threads > 1 ? await GemmPool.create(threads) : null;
    const replayMs: number[] = [];
    try {
      for (let run = 0; run <= context.runs; run++) {
        const start = process.hrtime.bigint();
        const { store } = replay(sim.hostWrites, sink.records, { pool });
        const ms = elapsedMs(start);
        if (run > 0) replayMs.push(ms); // run 0 warms up
        const report = verify(
          Object.fromEntries(
            Object.entries(outcome?.check ?? {}).map(([name, check]) => [
              name,
              store.readTensor(check.actual.address, check.actual.shape, check.actual.dtype),
            ]),
          ),
          Object.fromEntries(references),
        );
        if (!report.pass)
          checkFailed(`phase 2 of gemm ${size}^3 on ${threads} thread(s) failed verification`);
      }
    } finally {
      await pool?.close();
    }
    results.push({
      part: "phase2",
      bench: "gemm",
      topology: "default.yaml",
      m: size,
      n: size,
      k: size,
      dtype: "f16",
      ops: sink.records.length,
      threads,
      phase1Ms,
      replayMedianMs: median(replayMs),
      replayMs,
      referenceMs,
    });
  }
  printTable(
    ["bench", "M=N=K", "dtype", "ops", "threads", "phase 1 ms", "replay median ms", "reference ms"],
    results.map((r) => [
      "gemm",
      String(r.m),
      r.dtype,
      String(r.ops),
      String(r.threads),
      r.phase1Ms.toFixed(0),
      r.replayMedianMs.toFixed(0),
      r.referenceMs.toFixed(0),
    ]),
    2,
  );
  return results;
}

async function main(): Promise<void> {
  const parsed = parseSuiteOptions(SCRIPT, USAGE, OPTIONS, 5);
  if (parsed === null) return;
  const only = parsed.extra.part;
  if (only !== undefined && !PARTS.some((part) => part.name === only)) {
    fail(`unknown part "${only}"; the parts are ${PARTS.map((part) => part.name).join(", ")}`);
  }
  process.stdout.write(
    `@kb/data-executor suite: ${parsed.runs} timed run(s) per point after one warm-up (node ${process.version}, ${availableParallelism()} CPUs)\n`,
  );
  const results: SuiteResult[] = [];
  for (const part of PARTS) {
    if (only !== undefined && part.name !== only) continue;
    process.stdout.write(`\n== ${part.name}\n\n`);
    results.push(...(await part.run({ runs: parsed.runs, extra: parsed.extra })));
  }
  if (parsed.json !== undefined) writeJson(parsed.json, results);
}

await main();
