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
   * tile token: its PE, command and tile), for flow arrows.
   */
  record(type: TraceEventType, tNs: number, componentId: string, label: string, flow?: string): void;
  /** A sampled value of a component (queue depth, HBM bandwidth), when the tracer wants them. */
  counter?(name: string, tNs: number, componentId: string, value: number): void;
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

/**
 * A tracer that keeps every event in memory and exports Chrome trace-event JSON: one process per
 * SIP/cube (`sip0.cube1`, or `sip0` / `host` above cube level), one thread (track) per component,
 * `engine_start`/`engine_complete` as B/E slices named by the message, the other D6 events as
 * instants. Timestamps are simulated ns written as microseconds (`ts = ns / 1000`).
 */
export class TraceRecorder implements Tracer {
  readonly events: RecordedTraceEvent[] = [];

  record(type: TraceEventType, tNs: number, componentId: string, label: string, flow?: string): void {
    this.events.push(
      flow === undefined
        ? { type, tNs, component: componentId, label }
        : { type, tNs, component: componentId, label, flow },
    );
  }

  counter(name: string, tNs: number, componentId: string, value: number): void {
    this.events.push({ type: "counter", tNs, component: componentId, label: name, value });
  }

  /**
   * The events as a Chrome trace-event document (deterministic: same run, same JSON). With a
   * filter, only the components it matches and the events in its window are kept; a slice cut by
   * the window's end is closed there, one opened before its start is dropped.
   */
  toChromeTrace(name = "kernbench-ts", filter: TraceFilter = {}): ChromeTrace {
    const pids = new Map<string, number>();
    const tids = new Map<string, { pid: number; tid: number }>();
    const meta: ChromeTraceEvent[] = [];
    const trackOf = (component: string): { pid: number; tid: number } => {
      let track = tids.get(component);
      if (track !== undefined) return track;
      const group = groupOf(component);
      let pid = pids.get(group);
      if (pid === undefined) {
        pid = pids.size + 1;
        pids.set(group, pid);
        meta.push({ name: "process_name", ph: "M", ts: 0, pid, tid: 0, args: { name: group } });
      }
      track = { pid, tid: tids.size + 1 };
      tids.set(component, track);
      meta.push({ name: "thread_name", ph: "M", ts: 0, pid, tid: track.tid, args: { name: component } });
      return track;
    };
    const matches = filter.components === undefined ? null : globMatcher(filter.components);
    const from = filter.fromNs ?? Number.NEGATIVE_INFINITY;
    const to = filter.toNs ?? Number.POSITIVE_INFINITY;
    const flows = new Map<string, number>();
    /** Open slices per track (filtered): closed at the window's end if the run left them open. */
    const open = new Map<string, number>();
    const body: ChromeTraceEvent[] = [];
    for (const event of this.events) {
      if (event.tNs < from || event.tNs > to) continue;
      const component = event.component;
      // A lane's track (`...pe_dma#1`) belongs to its component.
      if (matches !== null && !matches(component) && !matches(component.replace(/#\d+$/, ""))) continue;
      const { pid, tid } = trackOf(component);
      const ts = event.tNs / 1000;
      switch (event.type) {
        case "engine_start": {
          body.push({ name: event.label, ph: "B", ts, pid, tid, cat: "service" });
          open.set(component, (open.get(component) ?? 0) + 1);
          if (event.flow !== undefined) {
            const known = flows.get(event.flow);
            const id = known ?? flows.size + 1;
            if (known === undefined) flows.set(event.flow, id);
            body.push({
              name: "tile",
              ph: known === undefined ? "s" : "t",
              ts,
              pid,
              tid,
              cat: "tile",
              id,
              bp: "e",
            });
          }
          break;
        }
        case "engine_complete": {
          const depth = open.get(component) ?? 0;
          if (depth === 0) break; // opened before the window
          open.set(component, depth - 1);
          body.push({ name: event.label, ph: "E", ts, pid, tid, cat: "service" });
          break;
        }
        case "counter":
          body.push({
            name: event.label,
            ph: "C",
            ts,
            pid,
            tid,
            cat: "counter",
            args: { value: event.value },
          });
          break;
        default:
          body.push({
            name: `${event.type}: ${event.label}`,
            ph: "i",
            s: "t",
            ts,
            pid,
            tid,
            cat: event.type,
          });
      }
    }
    // Close what the window cut (in track order, at the window's end or the last event).
    const end = (Number.isFinite(to) ? to : (this.events[this.events.length - 1]?.tNs ?? 0)) / 1000;
    for (const [component, depth] of open) {
      const { pid, tid } = trackOf(component);
      for (let i = 0; i < depth; i++)
        body.push({ name: "(cut by the trace window)", ph: "E", ts: end, pid, tid, cat: "service" });
    }
    return { traceEvents: [...meta, ...body], displayTimeUnit: "ns", otherData: { generator: name } };
  }
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
