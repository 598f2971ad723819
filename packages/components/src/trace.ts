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
  /** One event at simulated time `tNs` on component `componentId`; `label` names the message or command. */
  record(type: TraceEventType, tNs: number, componentId: string, label: string): void;
}

/** One recorded event. */
export interface RecordedTraceEvent {
  readonly type: TraceEventType;
  readonly tNs: number;
  readonly component: string;
  readonly label: string;
}

/** A Chrome trace-event JSON document (the "JSON object format"; opens in Perfetto and chrome://tracing). */
export interface ChromeTrace {
  readonly traceEvents: readonly ChromeTraceEvent[];
  readonly displayTimeUnit: "ns";
  readonly otherData: Readonly<Record<string, string>>;
}

/** One Chrome trace event (`ph` B/E slices, i instants, M metadata). `ts` is in microseconds. */
export interface ChromeTraceEvent {
  readonly name: string;
  readonly ph: "B" | "E" | "i" | "M";
  readonly ts: number;
  readonly pid: number;
  readonly tid: number;
  readonly cat?: string;
  readonly s?: "t";
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

  record(type: TraceEventType, tNs: number, componentId: string, label: string): void {
    this.events.push({ type, tNs, component: componentId, label });
  }

  /** The events as a Chrome trace-event document (deterministic: same run, same JSON). */
  toChromeTrace(name = "kernbench-ts"): ChromeTrace {
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
    const body: ChromeTraceEvent[] = [];
    for (const event of this.events) {
      const { pid, tid } = trackOf(event.component);
      const ts = event.tNs / 1000;
      if (event.type === "engine_start") {
        body.push({ name: event.label, ph: "B", ts, pid, tid, cat: "service" });
      } else if (event.type === "engine_complete") {
        body.push({ name: event.label, ph: "E", ts, pid, tid, cat: "service" });
      } else {
        body.push({ name: `${event.type}: ${event.label}`, ph: "i", s: "t", ts, pid, tid, cat: event.type });
      }
    }
    return { traceEvents: [...meta, ...body], displayTimeUnit: "ns", otherData: { generator: name } };
  }
}

/** The Perfetto process a component's track belongs to: its cube, else its SIP, else the id. */
function groupOf(component: string): string {
  const parts = component.split(".");
  if (parts.length >= 2 && parts[1]?.startsWith("cube")) return `${parts[0]}.${parts[1]}`;
  return parts[0] ?? component;
}
