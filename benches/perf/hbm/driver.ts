// The closed loop of the memory-fidelity suite (../shared/fidelity/README.md, "The closed
// loop"), driven through a MemoryHarness in simulated time, and the figures of reference.json.
import type { MemoryModel } from "@kb/components";
import type { Event } from "@kb/des";
import type { HarnessResult, MemoryHarness } from "@kb/probe";
import type { Trace } from "./trace.js";

/** What one closed-loop run measured (the figures of reference.json, in its units). */
export interface RunFigures {
  readonly requests: number;
  readonly reads: number;
  readonly writes: number;
  /** Requesters x window. */
  readonly outstanding: number;
  readonly tck_ns: number;
  readonly peak_gbs: number;
  readonly steady_gbs: number;
  readonly whole_gbs: number;
  /** steady_gbs / peak_gbs, in percent (as reference.json). */
  readonly pct_peak: number;
  readonly read_lat_mean_ns: number | null;
  readonly read_lat_p50_ns: number | null;
  readonly read_lat_p99_ns: number | null;
  readonly row_hit_rate: number | null;
  /** The last completion, ns. */
  readonly sim_ns: number;
  readonly t10_ns: number;
  readonly t90_ns: number;
  /** Memory ticks the loop visited (the rest were skipped: nothing could change). */
  readonly ticks_visited: number;
  /** Issue attempts the memory refused (head-of-line stalls). */
  readonly refusals: number;
}

/**
 * The figures of a run from its completion times (reads: data returned; writes: accepted) and
 * read latencies: steady bandwidth between the times 10% and 90% of the requests had completed,
 * whole-run bandwidth, latency mean / p50 / p99 (nearest rank).
 */
export function figuresOf(
  completions: Float64Array,
  latencies: Float64Array,
  lineBytes: number,
  peakGbs: number,
): Pick<
  RunFigures,
  | "steady_gbs"
  | "whole_gbs"
  | "pct_peak"
  | "read_lat_mean_ns"
  | "read_lat_p50_ns"
  | "read_lat_p99_ns"
  | "sim_ns"
  | "t10_ns"
  | "t90_ns"
> {
  const n = completions.length;
  const done = Float64Array.from(completions).sort();
  const rank = (values: Float64Array, p: number) =>
    values[Math.max(0, Math.ceil(p * values.length) - 1)] as number;
  const t10 = n === 0 ? 0 : rank(done, 0.1);
  const t90 = n === 0 ? 0 : rank(done, 0.9);
  const last = n === 0 ? 0 : (done[n - 1] as number);
  // Requests completed in (t10, t90].
  const upper = (t: number) => {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((done[mid] as number) <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const whole = last > 0 ? (lineBytes * n) / last : 0;
  const steady = t90 > t10 ? (lineBytes * (upper(t90) - upper(t10))) / (t90 - t10) : whole;
  let mean: number | null = null;
  let p50: number | null = null;
  let p99: number | null = null;
  if (latencies.length > 0) {
    let sum = 0;
    for (const value of latencies) sum += value;
    mean = sum / latencies.length;
    const sorted = Float64Array.from(latencies).sort();
    p50 = rank(sorted, 0.5);
    p99 = rank(sorted, 0.99);
  }
  return {
    steady_gbs: steady,
    whole_gbs: whole,
    pct_peak: peakGbs > 0 ? (100 * steady) / peakGbs : 0,
    read_lat_mean_ns: mean,
    read_lat_p50_ns: p50,
    read_lat_p99_ns: p99,
    sim_ns: last,
    t10_ns: t10,
    t90_ns: t90,
  };
}

/**
 * The read row-hit rate a memory model reports, if it reports one. The SDK has no standard
 * counter for it, so this looks for what a bank-aware model exposes on its instance:
 * `stats(port)` with `readHits`, `readMisses`, `readConflicts` summed over the `ports`
 * (hbm_ctrl_v2: runs of read bursts by their first command, so per request), or `rowHitRate()`
 * (a function or a number), or `stats` / `counters` objects with `readRowHits` and `reads` (or
 * `rowHits` and `rowAccesses`). Null when there is none.
 */
export function rowHitRateOf(model: MemoryModel, ports: number): number | null {
  const m = model as unknown as Record<string, unknown>;
  const value = (x: unknown): number | null => (typeof x === "number" && Number.isFinite(x) ? x : null);
  try {
    if (typeof m.stats === "function" && (m.stats as (port: number) => unknown).length === 1) {
      let hits = 0;
      let total = 0;
      for (let port = 0; port < ports; port++) {
        const s = (m.stats as (port: number) => Record<string, unknown>).call(model, port);
        const h = value(s.readHits);
        if (h === null) return null;
        hits += h;
        total += h + (value(s.readMisses) ?? 0) + (value(s.readConflicts) ?? 0);
      }
      return total > 0 ? hits / total : null;
    }
    if (typeof m.rowHitRate === "function") return value((m.rowHitRate as () => unknown).call(model));
    if (typeof m.rowHitRate === "number") return value(m.rowHitRate);
    for (const key of ["stats", "counters"]) {
      const s = (typeof m[key] === "function" ? (m[key] as () => unknown).call(model) : m[key]) as
        | Record<string, unknown>
        | undefined;
      if (s === null || typeof s !== "object") continue;
      if (typeof s.rowHitRate === "number") return value(s.rowHitRate);
      const hits = value(s.readRowHits ?? s.rowHits);
      const total = value(s.reads ?? s.rowAccesses);
      if (hits !== null && total !== null && total > 0) return hits / total;
    }
  } catch {
    return null;
  }
  return null;
}

/**
 * A model's own admission rule, when it has one: `room(port, kind)`, the bursts a request of
 * `kind` could still put into the port's queue (hbm_ctrl_v2: a Ramulator-style front end takes a
 * request only when all its bursts fit). Null for a model without it (then only the port's inbox
 * decides, through `maxPending`).
 */
export function roomOf(model: MemoryModel): ((port: number, kind: "read" | "write") => number) | null {
  const room = (model as unknown as { room?: unknown }).room;
  return typeof room === "function"
    ? (room as (port: number, kind: "read" | "write") => number).bind(model)
    : null;
}

/** How {@link runClosedLoop} runs. */
export interface ClosedLoopOptions {
  /** One memory tick, ns: requesters issue at multiples of it. */
  readonly tckNs: number;
  /** The stack's peak, GB/s (for pct_peak). */
  readonly peakGbs: number;
  /** Stop with an error when simulated time passes this, ns (default: no limit). */
  readonly limitNs?: number;
  /**
   * Stop with an error when nothing is issued and no read returns for this long, ns (a model
   * that holds its queue forever while its timers keep time running; default 100 us).
   */
  readonly stallNs?: number;
  /**
   * Offer each burst-sized part of a line on its own, as Ramulator's driver sends a 64 B line as
   * two 32 B requests: a line's first part may be accepted while a later one is refused (the
   * requester then waits on that part, head-of-line), and a read's latency runs from its first
   * part's acceptance to its last part's data (default false: a line is taken whole or not).
   */
  readonly partialLines?: boolean;
}

/**
 * Runs `trace` through `harness`'s memory with the suite's closed loop:
 *
 * - requester r issues its requests in file order with at most `window` reads outstanding; a read
 *   is outstanding from the tick the memory accepts it until its data has returned, a write is
 *   posted (it leaves the window when accepted);
 * - each tick (t x tCK) the requesters are visited round-robin from t mod R, each issuing as many
 *   requests as its window allows and the memory accepts, stopping at its first refusal
 *   (head-of-line); a request is one `harness.request(kind, address, line_bytes)`, accepted when
 *   every pseudo-channel it touches has room: its inbox (`harness.accepts`) and, for a model with
 *   `room(port, kind)` (hbm_ctrl_v2), all the request's bursts on that port (less the bursts sent
 *   this tick that the model has not taken yet); then the memory runs to the next tick, and the
 *   reads whose data returned before it free their window slots;
 * - after the issue phase every requester is blocked (window full, refused, or done), so nothing
 *   can change before the memory's next event: the loop jumps to the first tick after it.
 *
 * Read latency is the harness's `doneNs - arrivalNs` (from acceptance to the last data leaving
 * the memory). The run ends when every request is issued and every read has returned.
 */
export function runClosedLoop(trace: Trace, harness: MemoryHarness, options: ClosedLoopOptions): RunFigures {
  const env = harness.machine.env;
  const tck = options.tckNs;
  const limit = options.limitNs ?? Number.POSITIVE_INFINITY;
  const stall = options.stallNs ?? 100_000;
  let progressAt = env.now;
  let progressMark = -1;
  const R = trace.requesters;
  const W = trace.window;
  const bytes = trace.lineBytes;
  const map = harness.addressMap;
  const granule = map.granuleBytes;
  const next = new Int32Array(R);
  const outstanding = new Int32Array(R);
  const completions = new Float64Array(trace.requests);
  const latencies = new Float64Array(trace.reads);
  let completed = 0;
  let readsDone = 0;
  let issued = 0;
  let refusals = 0;
  let ticks = 0;

  // The lanes of each request and its bursts on each, found once: for most mappings one or two.
  const burst = map.organisation.burstBytes;
  const piecesOf = (offset: number): number[] => {
    const pieces: number[] = []; // lane, bytes, lane, bytes, ...
    const end = offset + bytes;
    for (let at = offset; at < end; ) {
      const stop = Math.min(end, (Math.floor(at / granule) + 1) * granule);
      const lane = map.lane(at);
      let i = 0;
      while (i < pieces.length && pieces[i] !== lane) i += 2;
      if (i < pieces.length) pieces[i + 1] = (pieces[i + 1] as number) + (stop - at);
      else pieces.push(lane, stop - at);
      at = stop;
    }
    // Bytes -> bursts (the unit of a controller's queue).
    for (let i = 1; i < pieces.length; i += 2) pieces[i] = Math.ceil((pieces[i] as number) / burst);
    return pieces;
  };
  const pieces: number[][][] = trace.addresses.map((list) => Array.from(list, piecesOf));
  // partialLines: a line is offered as parts of one burst each (lane, 1 burst).
  const partial = options.partialLines === true && bytes > burst;
  const parts = partial ? Math.ceil(bytes / burst) : 1;
  const partBytes = partial ? burst : bytes;
  const partNeed = (offset: number): number[] => [map.lane(offset), 1];
  const part = new Int32Array(R); // the next part of each requester's current line
  // The callback of each requester's current read line, shared by its parts.
  const lineCallback: ((event: Event<HarnessResult>) => void)[] = new Array(R);

  // With a model that admits by room (hbm_ctrl_v2), requests sent this tick are still in the
  // port's inbox, unseen by the model: count their bursts against its room until it takes them.
  const room = roomOf(harness.memory.model);
  const lanesTotal = harness.memory.ports;
  const inbox = harness.memory.lanes.map((lane) => lane.inbox);
  const unseen: number[][] = Array.from({ length: lanesTotal }, () => []); // +bursts read, -bursts write
  const unseenRead = new Float64Array(lanesTotal);
  const unseenWrite = new Float64Array(lanesTotal);
  const touched: number[] = [];
  const settleUnseen = (): void => {
    for (const lane of touched) {
      const queue = unseen[lane] as number[];
      const waiting = (inbox[lane] as { size: number }).size;
      while (queue.length > waiting) {
        const b = queue.shift() as number;
        if (b > 0) unseenRead[lane] = (unseenRead[lane] as number) - b;
        else unseenWrite[lane] = (unseenWrite[lane] as number) + b;
      }
    }
    let keep = 0;
    for (const lane of touched) if ((unseen[lane] as number[]).length > 0) touched[keep++] = lane;
    touched.length = keep;
  };
  // Within a tick nothing runs, so a lane's acceptance and room only shrink (by what is sent):
  // a lane refused this tick refuses again, and its room refused n bursts refuses n or more. The
  // refusals are remembered per tick (`ticks`) so the many requesters behind a full lane do not
  // ask the model again (issue 37 point 3: most of the driver's room checks were such repeats).
  const refusedAt = new Float64Array(lanesTotal).fill(-1); // lane refused (accepts) at this tick
  const roomAt = [new Float64Array(lanesTotal).fill(-1), new Float64Array(lanesTotal).fill(-1)];
  const roomNeed = [new Float64Array(lanesTotal), new Float64Array(lanesTotal)]; // least refused
  const fits = (need: number[], write: boolean): boolean => {
    const kind = write ? 1 : 0;
    const stampAt = roomAt[kind] as Float64Array;
    const needAt = roomNeed[kind] as Float64Array;
    for (let i = 0; i < need.length; i += 2) {
      const lane = need[i] as number;
      const bursts = need[i + 1] as number;
      if (refusedAt[lane] === ticks) return false;
      if (stampAt[lane] === ticks && bursts >= (needAt[lane] as number)) return false;
      if (!harness.accepts(lane)) {
        refusedAt[lane] = ticks;
        return false;
      }
      if (room !== null) {
        const queued = write ? (unseenWrite[lane] as number) : (unseenRead[lane] as number);
        if (room(lane, write ? "write" : "read") - queued < bursts) {
          if (stampAt[lane] !== ticks || bursts < (needAt[lane] as number)) needAt[lane] = bursts;
          stampAt[lane] = ticks;
          return false;
        }
      }
    }
    return true;
  };
  const sent = (need: number[], write: boolean): void => {
    if (room === null) return;
    for (let i = 0; i < need.length; i += 2) {
      const lane = need[i] as number;
      const b = need[i + 1] as number;
      const queue = unseen[lane] as number[];
      if (queue.length === 0) touched.push(lane);
      queue.push(write ? -b : b);
      if (write) unseenWrite[lane] = (unseenWrite[lane] as number) + b;
      else unseenRead[lane] = (unseenRead[lane] as number) + b;
    }
  };

  const onRead = (r: number) => (event: Event<HarnessResult>) => {
    const { arrivalNs, doneNs } = event.value;
    latencies[readsDone++] = doneNs - arrivalNs;
    completions[completed++] = doneNs;
    outstanding[r] = (outstanding[r] as number) - 1;
  };
  const readDone = Array.from({ length: R }, (_, r) => onRead(r));
  // partialLines: a read line accepted at `at` is done when its last part is (its parts share
  // this callback).
  const lineOf = (r: number, at: number) => {
    const line = { left: parts, done: 0 };
    return (event: Event<HarnessResult>): void => {
      line.done = Math.max(line.done, event.value.doneNs);
      if (--line.left > 0) return;
      latencies[readsDone++] = line.done - at;
      completions[completed++] = line.done;
      outstanding[r] = (outstanding[r] as number) - 1;
    };
  };

  // Start at the first tick at or after now (a fresh machine: tick 0).
  let t = Math.max(0, Math.ceil(env.now / tck));
  if (t * tck > env.now) env.run(t * tck);
  for (;;) {
    ticks++;
    const now = env.now;
    for (let k = 0; k < R; k++) {
      const r = (t + k) % R;
      const addresses = trace.addresses[r] as Float64Array;
      const writes = trace.writes[r] as Uint8Array;
      const myPieces = pieces[r] as number[][];
      let j = next[r] as number;
      while (j < addresses.length && ((part[r] as number) > 0 || (outstanding[r] as number) < W)) {
        const write = writes[j] === 1;
        // The part of the line offered now (a whole line is its only part).
        const offered = part[r] as number;
        const address = (addresses[j] as number) + offered * partBytes;
        const need = partial ? partNeed(address) : (myPieces[j] as number[]);
        if (!fits(need, write)) {
          refusals++;
          break;
        }
        sent(need, write);
        if (write) {
          harness.request("write", address, partBytes);
        } else {
          if (offered === 0) {
            outstanding[r] = (outstanding[r] as number) + 1;
            if (partial) lineCallback[r] = lineOf(r, now);
          }
          harness
            .request("read", address, partBytes)
            .addCallback((partial ? lineCallback[r] : readDone[r]) as (event: Event<HarnessResult>) => void);
        }
        if (offered + 1 < parts) {
          part[r] = offered + 1;
          continue;
        }
        part[r] = 0;
        if (write) completions[completed++] = now;
        j++;
        issued++;
      }
      next[r] = j;
    }
    if (issued === trace.requests && readsDone === trace.reads) break;
    if (issued + readsDone !== progressMark) {
      progressMark = issued + readsDone;
      progressAt = now;
    } else if (now - progressAt > stall) {
      throw new Error(
        `no progress for ${(now - progressAt).toFixed(0)} ns at ${now} ns: ${trace.requests - issued} request(s) not issued (heads refused), ${trace.reads - readsDone} read(s) unanswered; the model holds its queue.`,
      );
    }
    const upcoming = env.peek();
    if (upcoming === Number.POSITIVE_INFINITY) {
      throw new Error(
        `the memory has no event left at ${now} ns with ${trace.requests - issued} request(s) not issued and ${trace.reads - readsDone} read(s) unanswered: the model never answers or never frees its queue.`,
      );
    }
    // The first tick strictly after the next event sees its effect (run(T) leaves events at T).
    let following = t + 1;
    const seen = Math.floor(upcoming / tck) + 1;
    if (seen > following) following = seen;
    if (following * tck > limit) {
      throw new Error(
        `simulated time passed ${limit} ns with ${trace.reads - readsDone} read(s) unanswered.`,
      );
    }
    env.run(following * tck);
    if (touched.length > 0) settleUnseen();
    t = following;
  }
  const figures = figuresOf(completions, latencies, bytes, options.peakGbs);
  return {
    requests: trace.requests,
    reads: trace.reads,
    writes: trace.requests - trace.reads,
    outstanding: R * W,
    tck_ns: tck,
    peak_gbs: options.peakGbs,
    ...figures,
    row_hit_rate: rowHitRateOf(harness.memory.model, harness.memory.ports),
    ticks_visited: ticks,
    refusals,
  };
}
