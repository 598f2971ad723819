import { KbError } from "@kb/errors";
import { GEMM_TASK_BYTES, GEMM_TRANS_A, GemmEngine, gemmKernelModule } from "./kernel.js";
import {
  checkGemmArguments,
  copyGemmIn,
  copyGemmOut,
  type GemmCall,
  type GemmOptions,
  type GemmPlacement,
  gemmFlags,
  placeGemm,
} from "./sgemm.js";
import { DEFAULT_MIN_SPLIT_FLOPS, type GemmRowSlice, splitGemmRows } from "./split.js";

/** One GEMM of a {@link GemmPool} batch: C (m x n) = op(A) (m x k) @ op(B) (k x n) [+ C]. */
export interface GemmProblem extends GemmOptions {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly a: Float32Array;
  readonly b: Float32Array;
  readonly c: Float32Array;
  /** Row stride of A in elements; default its row length (k, or m when transA). */
  readonly lda?: number;
  /** Row stride of B in elements; default its row length (n, or k when transB). */
  readonly ldb?: number;
  /** Row stride of C in elements; default n. */
  readonly ldc?: number;
}

/** Options of {@link GemmPool.create}. */
export interface GemmPoolOptions {
  /**
   * Batches of fewer flops (2 m n k summed) run on the calling thread alone. Default
   * {@link DEFAULT_MIN_SPLIT_FLOPS} (2^24), measured on the reference machine.
   */
  readonly minSplitFlops?: number;
  /**
   * Run the threads' shares one after the other on the calling thread instead of in worker
   * threads: same plan, same results, no speed-up. For tests and for hosts without
   * `node:worker_threads`. Default false.
   */
  readonly inThread?: boolean;
  /** How long a batch waits for a worker before it fails, in ms. Default 600000 (10 min). */
  readonly workerTimeoutMs?: number;
}

// Control words of each worker in the pool's shared Int32Array (SLOT_INTS per worker), then
// MESSAGE_BYTES per worker for the text of an error it caught.
const SLOT_INTS = 8;
const REQUEST = 0; // batch number the main thread asks for; -1 asks the worker to exit
const DONE = 1; // batch number the worker finished
const STATUS = 2; // 0 = ok, 1 = failed (message below)
const TABLE = 3; // byte offset of the worker's task table in kernel memory
const COUNT = 4; // its task count
const MESSAGE_LENGTH = 5;
const MESSAGE_BYTES = 1024;
// Atomics.load polls (about 10 ns each) before an Atomics.wait. Waking a thread from a futex wait
// took 15 us (median) to 70 us (p90) right after it went to sleep, and 200 to 400 us once it had
// slept for a millisecond (a virtual CPU halts when idle) on the reference machine; polling skips
// that between batches that follow each other closely.
/** Polls of a worker after a batch, about 0.5 ms: replayed GEMMs closer than that find it awake. */
const WORKER_SPIN_LOOPS = 50_000;
/** Polls of the calling thread waiting for a worker, about 10 ms (it has nothing else to do). */
const CALLER_SPIN_LOOPS = 1_000_000;

// The worker: instantiates the kernel over the shared memory, then runs task tables when asked,
// blocked in Atomics.wait in between (it never returns to its event loop, so the main thread
// drives it synchronously). An eval'd CommonJS script: no file to resolve, in vitest or a bundle.
const WORKER_SOURCE = `"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const { module, memory, control, slot, work } = workerData;
const kernel = new WebAssembly.Instance(module, { env: { memory } }).exports;
const state = new Int32Array(control);
const base = slot * ${SLOT_INTS};
const message = new Uint8Array(control, state.byteLength - ${MESSAGE_BYTES} * (slot + 1), ${MESSAGE_BYTES});
parentPort.postMessage("ready");
let seen = 0;
for (;;) {
  // Spin a little before sleeping: back-to-back batches then skip the futex wake-up.
  for (let spin = 0; spin < ${WORKER_SPIN_LOOPS} && Atomics.load(state, base + ${REQUEST}) === seen; spin++);
  Atomics.wait(state, base + ${REQUEST}, seen);
  const request = Atomics.load(state, base + ${REQUEST});
  if (request === seen) continue;
  if (request < 0) break;
  seen = request;
  let status = 0;
  try {
    kernel.run_tasks(state[base + ${TABLE}], state[base + ${COUNT}], work);
  } catch (error) {
    status = 1;
    const text = new TextEncoder().encode(String(error && error.stack || error)).subarray(0, ${MESSAGE_BYTES});
    message.set(text);
    state[base + ${MESSAGE_LENGTH}] = text.length;
  }
  state[base + ${STATUS}] = status;
  Atomics.store(state, base + ${DONE}, request);
  Atomics.notify(state, base + ${DONE});
}
`;

/** What `node:worker_threads` gives that the pool uses. */
interface WorkerHandle {
  once(event: "message" | "error" | "exit", listener: (value: unknown) => void): unknown;
  off(event: "message" | "error" | "exit", listener: (value: unknown) => void): unknown;
  unref(): void;
  terminate(): Promise<number>;
}

/**
 * Runs batches of f32 GEMMs on `threads` threads: the calling thread and `threads - 1` workers
 * (`node:worker_threads`), all on one kernel instance each over one shared WebAssembly memory.
 *
 * A batch is copied into that memory, split by {@link splitGemmRows} (whole GEMMs per thread for
 * a batch of many, rows of C for one big GEMM), run, and copied out; `batch` blocks until every
 * thread is done (the calling thread works on its share meanwhile), so it can be called from
 * synchronous code. Results are bit-identical to {@link sgemm}'s whatever the split: a row of C
 * is computed the same way on any thread.
 *
 * **When to use**: GEMMs or batches from about 2^24 flops (200^3) up, on a machine with a free
 * core per thread. On the reference machine (2 cores) two threads ran 256^3 1.65x, 512^3 1.9x and
 * 1024^3 1.95x as fast as one (README, "GEMM speed"); smaller batches run on the calling thread
 * alone (`minSplitFlops`), since waking a worker that has slept can cost half a millisecond.
 *
 * **Gotchas**: the copies in and out run on the calling thread only. After a batch a worker
 * polls for the next one for about 0.5 ms (a busy core) before it sleeps in `Atomics.wait`;
 * workers are unref'd, so an open pool does not keep node alive, but call `close()` to free them.
 * A pool runs one batch at a time, and its memory stays at the largest batch's size.
 */
export class GemmPool {
  /** Threads a batch is split over, the calling thread included. */
  readonly threads: number;
  /** The row slices each thread ran in the last batch (thread 0 = the calling thread). */
  lastPlan: readonly (readonly GemmRowSlice[])[] = [];
  private readonly engine: GemmEngine;
  private readonly workers: readonly WorkerHandle[];
  private readonly state: Int32Array;
  private readonly minSplitFlops: number;
  private readonly timeoutMs: number;
  private request = 0;
  private failure: string | null = null;

  private constructor(
    threads: number,
    engine: GemmEngine,
    workers: readonly WorkerHandle[],
    state: Int32Array,
    options: GemmPoolOptions,
  ) {
    this.threads = threads;
    this.engine = engine;
    this.workers = workers;
    this.state = state;
    this.minSplitFlops = options.minSplitFlops ?? DEFAULT_MIN_SPLIT_FLOPS;
    this.timeoutMs = options.workerTimeoutMs ?? 600_000;
    for (const worker of workers) {
      worker.once("error", (error) => {
        this.failure ??= `a GemmPool worker failed: ${String(error)}`;
      });
      worker.once("exit", () => {
        this.failure ??= "a GemmPool worker exited";
      });
    }
  }

  /**
   * A pool of `threads` threads (an integer from 1 to 256; 1 means no workers): starts the
   * workers and waits until each has instantiated the kernel. Throws `RUNTIME_INVALID` for a bad
   * `threads` or when a worker cannot start.
   */
  static async create(threads: number, options: GemmPoolOptions = {}): Promise<GemmPool> {
    if (!Number.isInteger(threads) || threads < 1 || threads > 256) {
      throw new KbError(
        "RUNTIME_INVALID",
        `GemmPool.create: threads must be an integer from 1 to 256, got ${threads}.`,
      );
    }
    const minSplitFlops = options.minSplitFlops ?? DEFAULT_MIN_SPLIT_FLOPS;
    if (!(minSplitFlops >= 0)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `GemmPool.create: minSplitFlops must be >= 0, got ${minSplitFlops}.`,
      );
    }
    const engine = new GemmEngine(threads, true);
    const control = new SharedArrayBuffer(threads * (SLOT_INTS * 4 + MESSAGE_BYTES));
    const state = new Int32Array(control, 0, threads * SLOT_INTS);
    const workers: WorkerHandle[] = [];
    if (threads > 1 && options.inThread !== true) {
      const { Worker } = await import("node:worker_threads");
      try {
        for (let slot = 1; slot < threads; slot++) {
          const worker = new Worker(WORKER_SOURCE, {
            eval: true,
            workerData: {
              module: gemmKernelModule(true),
              memory: engine.memory,
              control,
              slot,
              work: engine.workspace(slot),
            },
          }) as unknown as WorkerHandle;
          workers.push(worker);
          await started(worker, slot);
          worker.unref();
        }
      } catch (error) {
        await Promise.all(workers.map((worker) => worker.terminate()));
        throw error;
      }
    }
    return new GemmPool(threads, engine, workers, state, options);
  }

  /**
   * Runs every GEMM of `problems` (independent of each other: a C must not be another
   * problem's A or B) and returns when all are done. Arguments are checked first, as in
   * {@link sgemm}: a `TENSOR_INVALID` KbError names the problem, and nothing is computed.
   */
  batch(problems: readonly GemmProblem[]): void {
    if (this.failure !== null) throw new Error(`GemmPool: ${this.failure}; create a new pool.`);
    const calls = problems.map((problem, index) => toCall(problem, index));
    const placements: GemmPlacement[] = [];
    let at = this.engine.operandBase;
    for (const call of calls) {
      const place = placeGemm(call, at);
      placements.push(place);
      at = place.end;
    }
    const plan = splitGemmRows(calls, this.threads, this.minSplitFlops);
    const tasks = plan.reduce((sum, slices) => sum + slices.length, 0);
    this.engine.reserve(at + tasks * GEMM_TASK_BYTES);
    const f32 = this.engine.f32;
    calls.forEach((call, index) => {
      copyGemmIn(f32, call, placements[index]!);
    });
    // Each thread's task table, one after the other.
    const i32 = this.engine.i32;
    const tables: number[] = [];
    let record = at >>> 2;
    for (const slices of plan) {
      tables.push(record * 4);
      for (const slice of slices) {
        writeTask(i32, record, calls[slice.problem]!, placements[slice.problem]!, slice);
        record += GEMM_TASK_BYTES / 4;
      }
    }
    this.lastPlan = plan;
    this.request++;
    const busy: number[] = [];
    for (let thread = 1; thread < this.threads; thread++) {
      if (plan[thread]!.length === 0) continue;
      if (this.workers.length === 0) {
        this.engine.kernel.run_tasks(tables[thread]!, plan[thread]!.length, this.engine.workspace(thread));
        continue;
      }
      const base = thread * SLOT_INTS;
      this.state[base + TABLE] = tables[thread]!;
      this.state[base + COUNT] = plan[thread]!.length;
      Atomics.store(this.state, base + REQUEST, this.request);
      Atomics.notify(this.state, base + REQUEST);
      busy.push(thread);
    }
    this.engine.kernel.run_tasks(tables[0]!, plan[0]!.length, this.engine.workspace(0));
    for (const thread of busy) this.wait(thread);
    calls.forEach((call, index) => {
      copyGemmOut(f32, call, placements[index]!);
    });
  }

  /**
   * One GEMM, with {@link sgemm}'s arguments, split over the pool's threads by rows of C (when it
   * has at least `minSplitFlops` flops).
   */
  sgemm(
    m: number,
    n: number,
    k: number,
    a: Float32Array,
    lda: number,
    b: Float32Array,
    ldb: number,
    c: Float32Array,
    ldc: number,
    options: GemmOptions = {},
  ): void {
    this.batch([{ ...options, m, n, k, a, lda, b, ldb, c, ldc }]);
  }

  /** Stops the workers; the pool cannot be used after. */
  async close(): Promise<void> {
    this.failure ??= "the pool was closed";
    for (let thread = 1; thread < this.threads; thread++) {
      Atomics.store(this.state, thread * SLOT_INTS + REQUEST, -1);
      Atomics.notify(this.state, thread * SLOT_INTS + REQUEST);
    }
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  /** Blocks until worker `thread` finished the current request; throws its error if it failed. */
  private wait(thread: number): void {
    const base = thread * SLOT_INTS;
    // Waits in slices of a second and counts them: a timeout with no wall clock.
    let waitedMs = 0;
    let spins = 0;
    for (;;) {
      const done = Atomics.load(this.state, base + DONE);
      if (done === this.request) break;
      if (waitedMs >= this.timeoutMs) {
        this.failure = `worker ${thread} did not finish its GEMMs within ${this.timeoutMs} ms`;
        throw new Error(`GemmPool: ${this.failure}; the pool cannot be used any more.`);
      }
      if (spins < CALLER_SPIN_LOOPS) {
        spins++;
        continue;
      }
      const slice = Math.min(1000, this.timeoutMs - waitedMs);
      if (Atomics.wait(this.state, base + DONE, done, slice) === "timed-out") waitedMs += slice;
    }
    if (this.state[base + STATUS] !== 0) {
      const length = this.state[base + MESSAGE_LENGTH]!;
      const start = this.state.buffer.byteLength - MESSAGE_BYTES * (thread + 1);
      const text = new TextDecoder().decode(new Uint8Array(this.state.buffer, start, length).slice());
      this.failure = `worker ${thread} failed: ${text}`;
      throw new Error(`GemmPool: ${this.failure}`);
    }
  }
}

/** Resolves when `worker` says it is ready; rejects when it fails or exits first. */
function started(worker: WorkerHandle, slot: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = () => {
      done();
      resolve();
    };
    const onError = (error: unknown) => {
      done();
      reject(new KbError("RUNTIME_INVALID", `GemmPool: worker ${slot} could not start: ${String(error)}`));
    };
    const onExit = (code: unknown) => onError(`it exited with code ${String(code)}`);
    const done = () => {
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
    };
    worker.once("message", onMessage);
    worker.once("error", onError);
    worker.once("exit", onExit);
  });
}

/** `problem` checked and with its default leading dimensions. */
function toCall(problem: GemmProblem, index: number): GemmCall {
  const { m, n, k, a, b, c } = problem;
  const lda = problem.lda ?? Math.max(1, problem.transA === true ? m : k);
  const ldb = problem.ldb ?? Math.max(1, problem.transB === true ? k : n);
  const ldc = problem.ldc ?? Math.max(1, n);
  checkGemmArguments(
    `GemmPool.batch, problem ${index}`,
    m,
    n,
    k,
    a.length,
    lda,
    b.length,
    ldb,
    c.length,
    ldc,
    problem,
  );
  return { m, n, k, a, lda, b, ldb, c, ldc, flags: gemmFlags(problem) };
}

/** Writes the task record of rows [rowStart, rowEnd) of `call` at int index `record` of `i32`. */
function writeTask(
  i32: Int32Array,
  record: number,
  call: GemmCall,
  place: GemmPlacement,
  slice: GemmRowSlice,
): void {
  const row = slice.rowStart;
  i32[record] = slice.rowEnd - row;
  i32[record + 1] = call.n;
  i32[record + 2] = call.k;
  // Row `row` of op(A) starts `row` elements in when A is stored transposed, `row` rows in if not.
  i32[record + 3] = place.a + 4 * ((call.flags & GEMM_TRANS_A) !== 0 ? row : row * call.lda);
  i32[record + 4] = call.lda;
  i32[record + 5] = place.b;
  i32[record + 6] = call.ldb;
  i32[record + 7] = place.c + 4 * row * call.ldc;
  i32[record + 8] = call.ldc;
  i32[record + 9] = call.flags;
}
