import { CounterSampler, DEFAULT_COUNTER_INTERVAL_NS } from "./counter-sampler.js";

/**
 * The trace events of ADR-0014 D6, plus the worker loop's service slices and the launch markers.
 * `engine_start` / `engine_complete` bracket every message a component services.
 */
export type TraceEventType =
  | "command_submitted"
  | "sub_command_dispatched"
  | "engine_start"
  | "engine_complete"
  | "tile_ready"
  | "command_complete"
  | "launch"
  | "launch_complete";

/**
 * Receives trace events. Attach one with `buildMachine(..., { tracer })`; with none attached the
 * machine pays one null check per event site.
 */
export interface Tracer {
  /**
   * One event at simulated time `tNs` on component `componentId`; `label` names the message or
   * command. `flow` (on `engine_start`) identifies what travels through several components (a
   * tile token: its PE, command and tile), for flow arrows. `site` (on `engine_start`, from
   * `@kb/runtime`'s per-line tally) is the kernel line (`file:line`) whose command the message
   * serves.
   */
  record(
    type: TraceEventType,
    tNs: number,
    componentId: string,
    label: string,
    flow?: string,
    site?: string,
  ): void;
  /** A sampled value of a component (queue depth, HBM bandwidth), when the tracer wants them. */
  counter?(name: string, tNs: number, componentId: string, value: number): void;
  /**
   * True when the tracer reads nothing but the engine slices that carry a flow: an
   * `engine_start` with `flow` and the next `engine_complete` of its track (`@kb/runtime`'s
   * per-line tally with no trace behind it). Components then skip every other record, and the
   * tracks and labels they would build for them (an HBM answer makes two records). Read at each
   * record site: a tracer may change its answer during a run.
   */
  readonly flowsOnly?: boolean;
  /**
   * Registers `hook` to run once before the trace is exported (`TraceRecorder` runs the hooks in
   * `flushCounters`): a component that aggregates a counter over the run (the HBM bandwidth per
   * 1 µs bin) emits its points there, with `counter`.
   */
  onFlush?(hook: () => void): void;
}

/** One recorded event. */
export interface RecordedTraceEvent {
  readonly type: TraceEventType | "counter";
  readonly tNs: number;
  readonly component: string;
  readonly label: string;
  /** engine_start: the flow it belongs to; counter: undefined. */
  readonly flow?: string;
  /** counter: the value. */
  readonly value?: number;
  /** engine_start: the kernel line (`file:line`) whose command it serves, when known. */
  readonly site?: string;
}

/** What {@link TraceRecorder.toChromeTrace} keeps: components matching a glob, a time window. */
export interface TraceFilter {
  /** Component ids to keep: `*` matches within a dot-separated part, `**` across parts (`sip0.cube1.**`, `**.pe_gemm`). */
  readonly components?: string;
  /** Keep events at or after this simulated time, ns. */
  readonly fromNs?: number;
  /** Keep events at or before this simulated time, ns. */
  readonly toNs?: number;
}

/** A Chrome trace-event JSON document (the "JSON object format"; opens in Perfetto and chrome://tracing). */
export interface ChromeTrace {
  readonly traceEvents: readonly ChromeTraceEvent[];
  readonly displayTimeUnit: "ns";
  readonly otherData: Readonly<Record<string, string>>;
}

/**
 * One Chrome trace event (`ph` B/E slices, i instants, M metadata, C counters, s/t flow arrows
 * bound to the enclosing slice). `ts` is in microseconds.
 */
export interface ChromeTraceEvent {
  readonly name: string;
  readonly ph: "B" | "E" | "i" | "M" | "C" | "s" | "t";
  readonly ts: number;
  readonly pid: number;
  readonly tid: number;
  readonly cat?: string;
  readonly s?: "t";
  readonly id?: number;
  readonly bp?: "e";
  readonly args?: Readonly<Record<string, unknown>>;
}

/** Options of a {@link TraceRecorder}. */
export interface TraceRecorderOptions {
  /**
   * Counter sampling, ns of simulated time: a counter (a name on a track) gets a point only when
   * its value changed, and at most one per interval; a change within the interval is drawn when it
   * elapses, so the plotted step function stays right (see {@link CounterSampler}). 0 keeps every
   * change. Default {@link DEFAULT_COUNTER_INTERVAL_NS} (1 µs).
   */
  readonly counterIntervalNs?: number;
}

/** A Chrome trace whose events come one at a time (for writing a large trace without holding it). */
export interface ChromeTraceStream extends Omit<ChromeTrace, "traceEvents"> {
  /** The events, generated as they are read: iterate once. */
  readonly traceEvents: Iterable<ChromeTraceEvent>;
}

/**
 * A tracer that keeps every event in memory and exports Chrome trace-event JSON: one process per
 * SIP/cube (`sip0.cube1`, or `sip0` / `host` above cube level), one thread (track) per component,
 * `engine_start`/`engine_complete` as B/E slices named by the message (with `args.site`, the
 * kernel line, when the runtime's per-line tally knew it), the other D6 events as
 * instants, counters sampled (see {@link TraceRecorderOptions.counterIntervalNs}) with the
 * component as their args key (`{"name":"queue depth","args":{"sip0.cube0.xbar0":3}}`: Perfetto
 * draws a counter track per process, name and key). Timestamps are simulated ns written as
 * microseconds rounded to the ps (`ts = round(ns * 1000) / 1e6`: exact to the ps, so sub-ns slices
 * keep their length, without the float noise of `ns / 1000`).
 */
export class TraceRecorder implements Tracer {
  readonly events: RecordedTraceEvent[] = [];
  /** The counter sampling interval, ns (0: every change). */
  readonly counterIntervalNs: number;
  private readonly sampler: CounterSampler;
  /** The latest time recorded, ns: where pending counter changes end and cut slices close. */
  private endNs = 0;
  private readonly flushHooks: (() => void)[] = [];

  /** Throws `MACHINE_INVALID_COMMAND` for a counter interval that is negative or not finite. */
  constructor(options: TraceRecorderOptions = {}) {
    this.sampler = new CounterSampler(
      options.counterIntervalNs ?? DEFAULT_COUNTER_INTERVAL_NS,
      (label, tNs, component, value) => {
        this.events.push({ type: "counter", tNs, component, label, value });
      },
    );
    this.counterIntervalNs = this.sampler.intervalNs;
  }

  record(
    type: TraceEventType,
    tNs: number,
    componentId: string,
    label: string,
    flow?: string,
    site?: string,
  ): void {
    if (tNs > this.endNs) this.endNs = tNs;
    this.events.push(
      site !== undefined
        ? { type, tNs, component: componentId, label, ...(flow !== undefined ? { flow } : {}), site }
        : flow === undefined
          ? { type, tNs, component: componentId, label }
          : { type, tNs, component: componentId, label, flow },
    );
  }

  onFlush(hook: () => void): void {
    this.flushHooks.push(hook);
  }

  counter(name: string, tNs: number, componentId: string, value: number): void {
    if (tNs > this.endNs) this.endNs = tNs;
    this.sampler.sample(name, tNs, componentId, value);
  }

  /**
   * Adds the counter changes still pending (each at the time its interval elapses, or at the
   * latest time recorded when that comes first) to {@link events}. The exports call it; call it
   * yourself before reading `events` at the end of a run.
   */
  flushCounters(): void {
    for (const hook of this.flushHooks.splice(0)) hook();
    this.sampler.flush(this.endNs);
  }

  /**
   * The events as a Chrome trace-event document (deterministic: same run, same JSON). With a
   * filter, only the components it matches and the events in its window are kept; a slice cut by
   * the window's end is closed there, one opened before its start is dropped. Flushes the pending
   * counter changes first ({@link flushCounters}).
   */
  toChromeTrace(name = "kernbench-ts", filter: TraceFilter = {}): ChromeTrace {
    const { traceEvents, ...rest } = this.toChromeTraceStream(name, filter);
    return { traceEvents: [...traceEvents], ...rest };
  }

  /**
   * {@link toChromeTrace} with the events generated one at a time, in the same order: a trace of
   * millions of events is written without building their array. Flushes the pending counter
   * changes first.
   */
  toChromeTraceStream(name = "kernbench-ts", filter: TraceFilter = {}): ChromeTraceStream {
    this.flushCounters();
    return {
      traceEvents: chromeTraceEvents(this.events, this.endNs, filter),
      displayTimeUnit: "ns",
      otherData: { generator: name },
    };
  }
}

/** The Chrome events of `events`: the process and thread names first, then the rest in order. */
function* chromeTraceEvents(
  events: readonly RecordedTraceEvent[],
  endNs: number,
  filter: TraceFilter,
): Generator<ChromeTraceEvent> {
  const matches = filter.components === undefined ? null : globMatcher(filter.components);
  const from = filter.fromNs ?? Number.NEGATIVE_INFINITY;
  const to = filter.toNs ?? Number.POSITIVE_INFINITY;
  const componentKept = new Map<string, boolean>();
  const kept = (event: RecordedTraceEvent): boolean => {
    if (event.tNs < from || event.tNs > to) return false;
    if (matches === null) return true;
    const component = event.component;
    let keep = componentKept.get(component);
    if (keep === undefined) {
      // A lane's track (`...pe_dma#1`) belongs to its component.
      keep = matches(component) || matches(component.replace(/#\d+$/, ""));
      componentKept.set(component, keep);
    }
    return keep;
  };
  // First pass: the tracks (a process per group, a thread per component) in order of appearance.
  const pids = new Map<string, number>();
  const tids = new Map<string, { pid: number; tid: number }>();
  for (const event of events) {
    const component = event.component;
    if (tids.has(component) || !kept(event)) continue;
    const group = groupOf(component);
    let pid = pids.get(group);
    if (pid === undefined) {
      pid = pids.size + 1;
      pids.set(group, pid);
      yield { name: "process_name", ph: "M", ts: 0, pid, tid: 0, args: { name: group } };
    }
    const track = { pid, tid: tids.size + 1 };
    tids.set(component, track);
    yield { name: "thread_name", ph: "M", ts: 0, pid, tid: track.tid, args: { name: component } };
  }
  const flows = new Map<string, number>();
  /** Open slices per track (filtered): closed at the window's end if the run left them open. */
  const open = new Map<string, number>();
  for (const event of events) {
    if (!kept(event)) continue;
    const component = event.component;
    const { pid, tid } = tids.get(component) as { pid: number; tid: number };
    const ts = microseconds(event.tNs);
    switch (event.type) {
      case "engine_start": {
        yield event.site === undefined
          ? { name: event.label, ph: "B", ts, pid, tid, cat: "service" }
          : { name: event.label, ph: "B", ts, pid, tid, cat: "service", args: { site: event.site } };
        open.set(component, (open.get(component) ?? 0) + 1);
        if (event.flow !== undefined) {
          const known = flows.get(event.flow);
          const id = known ?? flows.size + 1;
          if (known === undefined) flows.set(event.flow, id);
          yield { name: "tile", ph: known === undefined ? "s" : "t", ts, pid, tid, cat: "tile", id, bp: "e" };
        }
        break;
      }
      case "engine_complete": {
        const depth = open.get(component) ?? 0;
        if (depth === 0) break; // opened before the window
        open.set(component, depth - 1);
        yield { name: event.label, ph: "E", ts, pid, tid, cat: "service" };
        break;
      }
      case "counter":
        // Perfetto keeps one counter track per process, name and args key: the component as the
        // key gives each component its own track ("queue depth sip0.cube0.xbar0"), not one per cube.
        yield {
          name: event.label,
          ph: "C",
          ts,
          pid,
          tid,
          cat: "counter",
          args: { [component]: event.value },
        };
        break;
      default:
        yield { name: `${event.type}: ${event.label}`, ph: "i", s: "t", ts, pid, tid, cat: event.type };
    }
  }
  // Close what the window cut (in track order, at the window's end or the latest time recorded).
  const end = microseconds(Number.isFinite(to) ? to : endNs);
  for (const [component, depth] of open) {
    const { pid, tid } = tids.get(component) as { pid: number; tid: number };
    for (let i = 0; i < depth; i++)
      yield { name: "(cut by the trace window)", ph: "E", ts: end, pid, tid, cat: "service" };
  }
}

/**
 * Simulated ns as the `ts` of a Chrome event: µs rounded to the ps. The nearest double to a
 * decimal of a few digits prints as that decimal (`1208.18` ns -> `1.20818`, not the
 * `1.2081799999999998` of `1208.18 / 1000`).
 */
function microseconds(ns: number): number {
  return Math.round(ns * 1000) / 1e6;
}

/** A matcher for a component glob: `*` within a dot-separated part, `**` across parts. */
export function globMatcher(glob: string): (id: string) => boolean {
  const pattern = glob
    .split("**")
    .map((part) =>
      part
        .split("*")
        .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^.]*"),
    )
    .join(".*");
  const regex = new RegExp(`^${pattern}$`);
  return (id) => regex.test(id);
}

/** The Perfetto process a component's track belongs to: its cube, else its SIP, else the id. */
function groupOf(component: string): string {
  const parts = component.split(".");
  if (parts.length >= 2 && parts[1]?.startsWith("cube")) return `${parts[0]}.${parts[1]}`;
  return parts[0] ?? component;
}
