import type { CommandSource, Machine, TraceEventType, Tracer } from "@kb/components";
import { Event } from "@kb/des";
import type { PeCommand } from "@kb/spec";
import type { LaunchSites, SiteRow } from "./sites-results.js";

// The per-line attribution of a launch (docs/reports.md, "By line"): each command a PE_CPU takes
// is tied to the kernel line whose tl call issued it; the program's time waiting on it, the engine
// time its tiles took and the bytes it moved are added to that line.

/** What a command's tl call tells about where it was made (tl's `CallSite`: `line` is `file:line`). */
export interface IssuingCall {
  readonly call: string;
  readonly line: string | null;
}

/** The figures of one kernel line, as they add up during a launch. */
interface LineTally {
  readonly line: string;
  readonly calls: Set<string>;
  count: number;
  waitNs: number;
  readonly busyNs: Map<string, number>;
  bytes: number;
}

/** An engine's slice in progress: the line its command came from, its kind and start. */
interface OpenSlice {
  readonly tally: LineTally;
  readonly kind: string;
  readonly startNs: number;
}

/**
 * The launch's tallies: {@link SiteSource}s add the waits, the {@link SiteTap} the engine time.
 * One per launch ({@link SiteTap.begin} to {@link SiteTap.finish}); launches of host streams
 * overlap, each with its own.
 */
export class LaunchTally {
  constructor(readonly name: string) {}

  readonly lines = new Map<string, LineTally>();
  /** Per PE, the line of each command it took, by its PE_CPU position. */
  readonly positions = new Map<string, (LineTally | null)[]>();
  /** The programs' time, summed: every wait of every command, at a line or not. */
  programNs = 0;

  tally(line: string): LineTally {
    let tally = this.lines.get(line);
    if (tally === undefined) {
      tally = { line, calls: new Set(), count: 0, waitNs: 0, busyNs: new Map(), bytes: 0 };
      this.lines.set(line, tally);
    }
    return tally;
  }
}

/**
 * A PE's command source seen from the side: each command it hands the PE_CPU is tied to the line
 * of the tl call in flight then (`siteOf`), and the time until the PE_CPU asks for the next one
 * (the command done, or an async one handed on) is the program's wait at that line.
 */
export class SiteSource implements CommandSource {
  readonly name: string;
  private readonly positions: (LineTally | null)[] = [];
  private pending: LineTally | null = null;
  private handedAtNs = Number.NaN;
  private lastCall: IssuingCall | null = null;

  constructor(
    private readonly inner: CommandSource,
    pe: string,
    private readonly launch: LaunchTally,
    private readonly machine: Machine,
    private readonly siteOf: () => IssuingCall | null,
  ) {
    this.name = inner.name;
    launch.positions.set(pe, this.positions);
  }

  next(): PeCommand | null | Event<PeCommand | null> {
    const now = this.machine.env.now;
    if (!Number.isNaN(this.handedAtNs)) {
      const waited = now - this.handedAtNs;
      this.launch.programNs += waited;
      if (this.pending !== null) this.pending.waitNs += waited;
      this.handedAtNs = Number.NaN;
    }
    const answer = this.inner.next();
    if (answer instanceof Event) {
      answer.addCallback((event) => {
        if (event.ok && event.value !== null) this.handOut(event.value as PeCommand);
      });
    } else if (answer !== null) this.handOut(answer);
    return answer;
  }

  private handOut(command: PeCommand): void {
    const call = this.siteOf();
    const line = call?.line ?? null;
    const tally = line === null ? null : this.launch.tally(line);
    if (tally !== null && call !== null) {
      // A call that charges dispatch cycles issues two commands: it is one call.
      if (call !== this.lastCall) {
        tally.count++;
        tally.calls.add(call.call);
      }
      tally.bytes += commandBytes(command);
    }
    this.lastCall = call;
    this.positions.push(tally);
    this.pending = tally;
    this.handedAtNs = this.machine.env.now;
  }
}

/** Bytes a command moves through the PE_DMA or the inter-PE queues: the copies of a DMA (its mask's runs), an IPCQ send. */
function commandBytes(command: PeCommand): number {
  if (command.kind === "ipcq_send") return command.bytes;
  if (command.kind !== "dma") return 0;
  const runs = command.mask?.runs ?? command.indexed?.runs;
  if (runs === undefined) return command.bytes;
  let bytes = 0;
  for (let index = 1; index < runs.length; index += 2) bytes += runs[index] as number;
  return bytes;
}

/**
 * A tracer in front of the run's own (a trace recorder, a progress tap, or none) that adds each
 * engine slice of a command's tiles to the line that issued the command. Tiles name their command
 * in their flow (`pe:kernel#position/t3`); a slice is an `engine_start` with a flow and the next
 * `engine_complete` of its track; the run's tracer gets the line with the slice's `engine_start`
 * (`Tracer.record`'s `site`: a trace slice's `args.site`). It adds no simulation events: results
 * are the same without it.
 */
export class SiteTap implements Tracer {
  counter?: NonNullable<Tracer["counter"]>;
  onFlush?: NonNullable<Tracer["onFlush"]>;
  private machine: Machine | null = null;
  /** The launches in flight, oldest first. */
  private readonly launches: LaunchTally[] = [];
  private readonly open = new Map<string, OpenSlice>();
  private readonly kinds = new Map<string, string>();
  /** The op log's record count at the previous event: records started since are the current message's. */
  private loggedFrom = 0;

  /**
   * True when nothing behind the tap reads the trace (no tracer, or one that reads only flows)
   * and no op log is annotated: the tally needs only the slices of flows (`Tracer.flowsOnly`).
   * With an op log every record counts, since records logged before an `engine_start` are its
   * message's.
   */
  get flowsOnly(): boolean {
    const inner = this.inner;
    return (inner === null || inner.flowsOnly === true) && (this.machine?.opLogger ?? null) === null;
  }

  constructor(readonly inner: Tracer | null) {
    const counter = inner?.counter;
    if (counter !== undefined) this.counter = counter.bind(inner);
    const onFlush = inner?.onFlush;
    if (onFlush !== undefined) this.onFlush = onFlush.bind(inner);
  }

  record(type: TraceEventType, tNs: number, componentId: string, label: string, flow?: string): void {
    let site: string | null = null;
    if (this.launches.length > 0) {
      if (type === "engine_start") {
        if (flow !== undefined) site = this.start(tNs, componentId, flow);
      } else if (type === "engine_complete") this.complete(tNs, componentId);
      // A component logs a message's op records just before its engine_start (component.ts).
      const logger = (this.machine as Machine).opLogger;
      if (logger !== null) {
        if (site !== null) logger.annotate(this.loggedFrom, withoutLane(componentId), site);
        this.loggedFrom = logger.recordCount;
      }
    }
    this.inner?.record(type, tNs, componentId, label, flow, site ?? undefined);
  }

  /**
   * Starts the tallies of launch `name`; wrap each of its PEs' command sources with
   * {@link source}, and end them with {@link finish}.
   */
  begin(machine: Machine, name = "launch"): LaunchTally {
    this.machine = machine;
    const launch = new LaunchTally(name);
    if (this.launches.length === 0) {
      this.open.clear();
      this.loggedFrom = machine.opLogger?.recordCount ?? 0;
    }
    this.launches.push(launch);
    return launch;
  }

  /** `inner`, tied to the tallies of `launch` (between {@link begin} and {@link finish}). */
  source(
    inner: CommandSource,
    pe: string,
    siteOf: () => IssuingCall | null,
    launch: LaunchTally,
  ): CommandSource {
    if (this.machine === null || !this.launches.includes(launch)) return inner;
    return new SiteSource(inner, pe, launch, this.machine, siteOf);
  }

  /** The lines of `launch`, by the programs' wait at them (most first); ends its tallies. */
  finish(launch: LaunchTally): LaunchSites | null {
    const at = this.launches.indexOf(launch);
    if (at < 0) return null;
    this.launches.splice(at, 1);
    for (const [track, slice] of this.open)
      if (launch.lines.get(slice.tally.line) === slice.tally) this.open.delete(track);
    const programNs = launch.programNs;
    const lines: SiteRow[] = [...launch.lines.values()].map((tally) => ({
      line: tally.line,
      calls: [...tally.calls].sort(),
      count: tally.count,
      waitNs: tally.waitNs,
      share: programNs > 0 ? tally.waitNs / programNs : 0,
      busyNs: Object.fromEntries([...tally.busyNs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      bytes: tally.bytes,
    }));
    lines.sort((a, b) => b.waitNs - a.waitNs || (a.line < b.line ? -1 : a.line > b.line ? 1 : 0));
    return { programNs, lines };
  }

  /** Opens the slice of a tile of a command (its flow names it); returns the command's line, or null. */
  private start(tNs: number, track: string, flow: string): string | null {
    const colon = flow.indexOf(":");
    const hash = flow.lastIndexOf("#");
    const slash = flow.indexOf("/t", hash);
    if (colon < 0 || hash < colon || slash < 0) return null;
    const launch = this.launchOf(flow.slice(0, colon), flow.slice(colon + 1, hash));
    const tally = launch?.positions.get(flow.slice(0, colon))?.[Number(flow.slice(hash + 1, slash))];
    if (tally == null) return null;
    this.open.set(track, { tally, kind: this.kindOf(track), startNs: tNs });
    return tally.line;
  }

  private complete(tNs: number, track: string): void {
    const slice = this.open.get(track);
    if (slice === undefined) return;
    this.open.delete(track);
    const busy = slice.tally.busyNs;
    busy.set(slice.kind, (busy.get(slice.kind) ?? 0) + tNs - slice.startNs);
  }

  /**
   * The launch in flight whose program on PE `pe` issued a command of program `program`: the one
   * launch on that PE, or of several (host streams on one PE), the one of that name.
   */
  private launchOf(pe: string, program: string): LaunchTally | null {
    const launches = this.launches;
    if (launches.length === 1) return launches[0] as LaunchTally;
    let found: LaunchTally | null = null;
    for (const launch of launches) {
      if (!launch.positions.has(pe)) continue;
      if (launch.name === program) return launch;
      found ??= launch;
    }
    return found;
  }

  /** The component kind of a track (`sip0.cube0.pe0.pe_dma#1` is a lane of a PE_DMA). */
  private kindOf(track: string): string {
    let kind = this.kinds.get(track);
    if (kind === undefined) {
      const id = withoutLane(track);
      const machine = this.machine as Machine;
      kind = machine.has(id) ? machine.component(id).kind : id;
      this.kinds.set(track, kind);
    }
    return kind;
  }
}

/** The component of a track: `sip0.cube0.pe0.pe_dma#1` is a lane of `sip0.cube0.pe0.pe_dma`. */
function withoutLane(track: string): string {
  const lane = track.indexOf("#");
  return lane < 0 ? track : track.slice(0, lane);
}

/**
 * The tracer a simulator's machine is built with: `tracer` behind a {@link SiteTap}, unless
 * `sites` is false (`SimulatorOptions.sites`).
 */
export function machineTracer(options: {
  readonly tracer?: Tracer | null;
  readonly sites?: boolean;
}): Tracer | null {
  const tracer = options.tracer ?? null;
  return options.sites === false ? tracer : new SiteTap(tracer);
}
