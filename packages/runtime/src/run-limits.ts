import { formatNs, formatSimTime, groupDigits, KbError } from "@kb/errors";
import type { KernelHost, KernelRunner, RunSlices, StallReport } from "@kb/tl";
import { kernelWaitLines, stalledKernelLines } from "./stalled-kernels.js";

/**
 * Bounds on a simulation, checked between slices of {@link SLICE_EVENTS} events (the stall
 * detector at the tl calls themselves): a run that reaches one stops with `RUN_LIMIT`, naming the
 * limit and, for each kernel still running, its PE, the tl call it waits on and since when. Within
 * the limits a run is the same with or without them (the checks add no simulation events, and
 * count events, simulated time and calls, never wall time, except `timeoutMs`).
 */
export interface RunLimits {
  /**
   * DES events of one wait of the host program (from the call of a launch, a copy or a
   * synchronisation the host program awaits until it returns; with host streams, until one of
   * the streams' operations ends): a kernel that never ends stops here however long the run, and
   * a whole model of many launches is not cut short. Default {@link DEFAULT_MAX_EVENTS};
   * `Infinity` for none.
   */
  readonly maxEvents?: number;
  /** Simulated time, ns. Default none. */
  readonly maxSimTimeNs?: number;
  /** Wall-clock time from the simulator's creation, ms. Default none. */
  readonly timeoutMs?: number;
  /**
   * The stall detector: tl calls in a row, of all kernels together, that may leave the machine
   * without progress (no component processed a message: no byte moved, nothing computed, nothing
   * passed through a queue) before the run stops. Catches a kernel that loops for ever on
   * `tl.cycles`, `tl.wait` or any call that does no work, whether simulated time advances or
   * stands still (`tl.cycles(0)`), in seconds rather than hours. A call that does work (a load,
   * a store, a compute op) or one in flight is progress. Default
   * {@link DEFAULT_MAX_STALL_CALLS}; `Infinity` for none.
   *
   * **Gotchas**: a kernel that models a long stretch of scalar work as many small `tl.cycles`
   * calls while nothing else in the machine works can reach it: model the work as one
   * `tl.cycles(n)`, or raise the limit.
   */
  readonly maxStallCalls?: number;
  /**
   * How the `RUN_LIMIT` message names each limit, for a front end whose limits are not `kb run`'s
   * options (a page's fields: `{ maxEvents: "Max events" }`). Default {@link LIMIT_OPTIONS}.
   */
  readonly names?: Readonly<Partial<Record<LimitName, string>>>;
}

/** The limits of {@link RunLimits} that stop a run. */
export type LimitName = "maxEvents" | "maxSimTimeNs" | "timeoutMs" | "maxStallCalls";

/** How messages name each limit by default: the `kb run` option that sets it. */
export const LIMIT_OPTIONS: Readonly<Record<LimitName, string>> = Object.freeze({
  maxEvents: "--max-events",
  maxSimTimeNs: "--max-sim-time",
  timeoutMs: "--timeout",
  maxStallCalls: "--max-stall-calls",
});

/**
 * The default event cap of one wait of the host program ({@link RunLimits.maxEvents}): 500
 * million DES events, six times the largest the repository's runs make (the llama3-8b prefill
 * layer at seq 2048 on ref-4sip with `hbm_ctrl_v2`: 80 million for the whole layer, its 11
 * launches awaited one by one). A kernel that never ends (`while (true) await tl.cycles(1)`)
 * stops here rather than running forever; a 32-layer model (2.6 billion events) is not cut short.
 */
export const DEFAULT_MAX_EVENTS = 500_000_000;

/**
 * The default stall budget: 250,000 tl calls with no progress, about 1 s of an endless
 * `tl.cycles` loop (3-4 µs a call). The shipped benches' longest stretch without progress is 13
 * calls (see packages/runtime/README.md, "The stall detector").
 */
export const DEFAULT_MAX_STALL_CALLS = 250_000;

/** Events between two checks of the limits. */
export const SLICE_EVENTS = 200_000;

/** Wall time after which the run lets the event loop turn (signals, timers), ms. */
const YIELD_EVERY_MS = 50;

/**
 * Throws `RUNTIME_INVALID` for a limit that is not a number > 0 (`Infinity` allowed).
 * @internal
 */
export function checkRunLimits(limits: RunLimits): void {
  for (const key of Object.keys(LIMIT_OPTIONS) as LimitName[]) {
    const value = limits[key];
    if (value !== undefined && !(typeof value === "number" && value > 0)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `limits.${key} must be a number > 0 (Infinity for no limit), got ${String(value)}.`,
      );
    }
  }
}

/**
 * The slices a simulator drives its kernel host with: between slices, checks `limits` against the
 * host's engine and `clock` (ms), and lets the event loop turn every 50 ms of wall time so a
 * signal handler (SIGINT) or a timer can run during a long simulation. The stall detector reads
 * `progress` (`machineProgress` of the machine; see `StallBudget.progress` of @kb/tl).
 * @internal
 */
export function limitSlices(
  host: KernelHost,
  limits: RunLimits,
  clock: () => number,
  progress: () => number,
): RunSlices {
  const startMs = clock();
  let yieldedMs = startMs;
  const maxEvents = limits.maxEvents ?? DEFAULT_MAX_EVENTS;
  const maxSimTimeNs = limits.maxSimTimeNs ?? Number.POSITIVE_INFINITY;
  const timeoutMs = limits.timeoutMs ?? Number.POSITIVE_INFINITY;
  const maxStallCalls = limits.maxStallCalls ?? DEFAULT_MAX_STALL_CALLS;
  // The events counted before the current wait of the host program (maxEvents counts one wait).
  let waitStart = 0;
  const slices: { -readonly [K in keyof RunSlices]: RunSlices[K] } = {
    events: SLICE_EVENTS,
    ...(Number.isFinite(maxStallCalls) ? { stall: { calls: maxStallCalls, progress } } : {}),
    ...(Number.isFinite(maxSimTimeNs) ? { stopAfterNs: maxSimTimeNs } : {}),
    ...(Number.isFinite(maxEvents)
      ? {
          eventLimit: maxEvents,
          start: () => {
            waitStart = host.env.processedEventCount;
            slices.eventLimit = waitStart + maxEvents;
          },
        }
      : {}),
    between: async () => {
      const env = host.env;
      const nowMs = clock();
      const stall = host.stalled();
      if (stall !== null) throw stallError(host, limits, stall);
      if (env.processedEventCount - waitStart >= maxEvents) {
        throw limitError(host, limits, "maxEvents", `${groupDigits(maxEvents)} DES events`, waitStart);
      }
      if (env.peek() > maxSimTimeNs && env.peek() < Number.POSITIVE_INFINITY) {
        throw limitError(host, limits, "maxSimTimeNs", `${formatSimTime(maxSimTimeNs)} ns of simulated time`);
      }
      if (nowMs - startMs >= timeoutMs) {
        throw limitError(host, limits, "timeoutMs", `${formatSimTime(timeoutMs / 1000)} s of wall time`);
      }
      if (nowMs - yieldedMs >= YIELD_EVERY_MS) {
        yieldedMs = nowMs;
        await new Promise<void>((resolve) => setTimeout(resolve, 0));
      }
    },
  };
  return slices;
}

/**
 * `RUN_LIMIT` for `limit`; `waitStart`: the events before the host program's current wait (the
 * event cap counts one wait: the message says so when the run had events before it).
 */
function limitError(
  host: KernelHost,
  limits: RunLimits,
  limit: LimitName,
  what: string,
  waitStart = 0,
): KbError {
  const name = limits.names?.[limit] ?? LIMIT_OPTIONS[limit];
  const env = host.env;
  const counted =
    waitStart > 0
      ? `${groupDigits(env.processedEventCount - waitStart)} events of one wait of the host program (a launch, a copy or a synchronisation; ${groupDigits(env.processedEventCount)} in the whole run)`
      : `${groupDigits(env.processedEventCount)} events`;
  const running =
    host.active.size === 0
      ? "no kernel was running (the time went to host copies or the machine's own traffic)."
      : `${host.active.size} kernel(s) still running:\n${kernelWaitLines(host).join("\n")}`;
  return new KbError(
    "RUN_LIMIT",
    `the run reached its limit of ${what} (${name}) after ${counted}; ${running}\n` +
      `A kernel that loops forever never ends: check its loop bounds. If the run is just long, raise the limit (${name}).`,
    { context: { simTimeNs: env.now } },
  );
}

function stallError(host: KernelHost, limits: RunLimits, stall: StallReport<KernelRunner>): KbError {
  const name = limits.names?.maxStallCalls ?? LIMIT_OPTIONS.maxStallCalls;
  const env = host.env;
  const time =
    env.now === stall.sinceNs
      ? "and simulated time did not advance"
      : `while simulated time advanced ${formatNs(env.now - stall.sinceNs)}`;
  const stalled = new Set(stall.kernels.map(({ kernel }) => kernel));
  const others = kernelWaitLines(host, stalled);
  const first = stall.kernels[0];
  const site = first?.recent.at(-1)?.site ?? null;
  const location = site?.location ?? null;
  return new KbError(
    "RUN_LIMIT",
    `the run stalled: ${groupDigits(stall.calls)} tl calls in a row left the machine without progress (no byte moved, nothing computed, nothing passed through a queue) ${time} (${name}); ${stall.kernels.length} kernel(s) made those calls:\n` +
      `${stalledKernelLines(stall.kernels).join("\n")}\n` +
      (others.length > 0
        ? `${host.active.size - stalled.size} other kernel(s) still running:\n${others.join("\n")}\n`
        : "") +
      "A kernel that loops until something happens (tl.cycles or tl.wait in a loop) never ends when it never happens: " +
      `check its loop condition. If a kernel really waits this long without work, raise the limit (${name}), or turn the check off with ${name} Infinity.`,
    {
      context: {
        ...(location !== null ? { file: location.file, line: location.line, col: location.col } : {}),
        ...(first !== undefined ? { kernel: first.kernel.name, pe: first.kernel.tl.placement.pe } : {}),
        simTimeNs: env.now,
      },
    },
  );
}
