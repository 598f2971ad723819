import type { Environment, Event } from "@kb/des";
import { KbError } from "@kb/errors";
import { philox4x32, philoxKey } from "@kb/spec";
import type { Machine } from "./machine.js";
import type { Link, Stop } from "./packet.js";
import { Transfer } from "./transfer.js";

/**
 * Synthetic traffic between fabric endpoints (`startTraffic`): every endpoint starts a packet in
 * a cycle with probability `packetsPerCycle` (Bernoulli injection), to the endpoint the
 * `destination` pattern names, into an unbounded source queue (the endpoint's first link, FIFO).
 */
export interface TrafficOptions {
  /**
   * The endpoints, as topology node ids (PE_DMAs, `host`, anything a fabric path can start and
   * end at): endpoint `i` of the pattern is `endpoints[i]`.
   */
  readonly endpoints: readonly string[];
  /**
   * The destination (an endpoint index) of a packet from endpoint `source`; `random()` draws a
   * number in [0, 1) from the source's own seeded stream (`trafficPattern` gives BookSim 2's).
   */
  readonly destination: (source: number, random: () => number) => number;
  /** Bytes per packet (> 0). */
  readonly packetBytes: number;
  /** The probability an endpoint starts a packet in a cycle, in (0, 1]. */
  readonly packetsPerCycle: number;
  /** The cycle, ns (packets are created at whole cycles). */
  readonly cycleNs: number;
  /** The seed of the random streams (same seed, same packets). */
  readonly seed: number;
  /** Called for each packet once the fabric knows when its tail arrives (at or before that time). */
  readonly delivered: (packet: TrafficPacket) => void;
}

/** A packet of synthetic traffic, as `TrafficOptions.delivered` reports it. */
export interface TrafficPacket {
  /** Source and destination endpoint indices. */
  readonly source: number;
  readonly destination: number;
  /** When it was created (entered its source queue), ns. */
  readonly createdNs: number;
  /** When its head entered the network (left the source queue onto the endpoint's first link), ns. */
  readonly injectedNs: number;
  /** When its tail reached the destination, ns. */
  readonly arrivedNs: number;
}

/** A running traffic generator. */
export interface TrafficRun {
  /** Packets created so far. */
  readonly created: number;
  /** Packets whose arrival is known so far. */
  readonly delivered: number;
  /** Creates no packet from now on (packets already created still arrive). */
  stop(): void;
}

/**
 * Starts synthetic traffic on `machine`'s fabric from the current time: each endpoint draws its
 * packet starts and destinations from its own Philox stream (key `seed`, counter = endpoint and
 * draw number), so a run is the same on every machine and Node version. A Bernoulli process is
 * drawn as geometric gaps (`1 + floor(ln(u) / ln(1 - p))` cycles), one engine event per packet
 * created; the packet then travels as a fabric packet of `packetBytes` (section 2 of
 * docs/latency-model.md) from endpoint to endpoint, reported by `delivered`.
 *
 * Throws `MACHINE_INVALID_COMMAND` for an empty or unknown endpoint list, a rate outside (0, 1],
 * or a size or cycle that is not positive; a destination outside the endpoints is reported when
 * the pattern returns it.
 */
export function startTraffic(machine: Machine, options: TrafficOptions): TrafficRun {
  checkOptions(machine, options);
  return new Generator(machine, options);
}

class Generator implements TrafficRun {
  created = 0;
  delivered = 0;
  private stopped = false;
  private readonly key: [number, number];
  /** Per endpoint: random words drawn (the Philox counter is draws / 4) and the last four words. */
  private readonly draws: Float64Array;
  private readonly words: Uint32Array;
  private readonly logStay: number;
  private readonly randoms: (() => number)[];

  constructor(
    private readonly machine: Machine,
    private readonly options: TrafficOptions,
  ) {
    const count = options.endpoints.length;
    this.key = philoxKey(options.seed);
    this.draws = new Float64Array(count);
    this.words = new Uint32Array(4 * count);
    this.logStay = Math.log1p(-options.packetsPerCycle);
    this.randoms = Array.from({ length: count }, (_, source) => () => this.uniform(source));
    const start = Math.ceil(machine.env.now / options.cycleNs - 1e-9);
    for (let source = 0; source < count; source++) this.schedule(source, start + this.gap(source) - 1);
  }

  stop(): void {
    this.stopped = true;
  }

  /** A number in (0, 1] from endpoint `source`'s stream. */
  private uniform(source: number): number {
    const draw = this.draws[source] as number;
    const slot = draw % 4;
    if (slot === 0) {
      const fresh = philox4x32([(draw / 4) >>> 0, source, Math.floor(draw / 2 ** 34) >>> 0, 0], this.key);
      this.words.set(fresh, 4 * source);
    }
    this.draws[source] = draw + 1;
    return ((this.words[4 * source + slot] as number) + 1) * 2 ** -32;
  }

  /** Cycles from one packet start to the next (>= 1) under Bernoulli injection. */
  private gap(source: number): number {
    const u = this.uniform(source);
    return this.logStay === Number.NEGATIVE_INFINITY ? 1 : 1 + Math.floor(Math.log(u) / this.logStay);
  }

  private schedule(source: number, cycle: number): void {
    const env = this.machine.env;
    const at = cycle * this.options.cycleNs;
    env.timeout(Math.max(0, at - env.now), { source, cycle }).addCallback(this.create);
  }

  private readonly create = (event: Event<{ source: number; cycle: number }>): void => {
    if (this.stopped) return;
    const { source, cycle } = event.value;
    const options = this.options;
    const destination = options.destination(source, this.randoms[source] as () => number);
    const endpoints = options.endpoints;
    const dst = endpoints[destination];
    if (dst === undefined || !Number.isInteger(destination)) {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `startTraffic: the destination pattern sent a packet from endpoint ${source} (${endpoints[source]}) to ${String(destination)}, which is not an endpoint index (0..${endpoints.length - 1}).`,
        { context: { nodeId: endpoints[source] as string, simTimeNs: this.machine.env.now } },
      );
    }
    const src = endpoints[source] as string;
    const fabric = this.machine.fabric;
    const path = fabric.path(src, dst, "sink");
    const first = (path.stops[1] as Stop | undefined)?.links[0] as Link | undefined;
    const now = this.machine.env.now;
    const injectedNs = first === undefined ? now : Math.max(now, first.freeAt);
    const report = new Delivery(this.machine.env, this, source, destination, now, injectedNs);
    report.expect();
    fabric.notify(src, dst, report, options.packetBytes);
    this.created++;
    this.schedule(source, cycle + this.gap(source));
  };

  /** @internal */
  arrived(packet: TrafficPacket): void {
    this.delivered++;
    this.options.delivered(packet);
  }
}

/** The transfer of one synthetic packet: reports its arrival instead of waiting for it. */
class Delivery extends Transfer implements TrafficPacket {
  arrivedNs = 0;

  constructor(
    env: Environment,
    private readonly run: Generator,
    readonly source: number,
    readonly destination: number,
    readonly createdNs: number,
    readonly injectedNs: number,
  ) {
    super(env);
  }

  override packetsDone(t: number): void {
    this.arrivedNs = t;
    this.run.arrived(this);
  }
}

function checkOptions(machine: Machine, options: TrafficOptions): void {
  const bad = (what: string) => new KbError("MACHINE_INVALID_COMMAND", `startTraffic: ${what}`);
  if (options.endpoints.length === 0) throw bad("needs at least one endpoint.");
  for (const id of options.endpoints) {
    if (!machine.graph.has(id)) {
      throw bad(`endpoint "${id}" is not a node of topology "${machine.graph.topology.name}".`);
    }
  }
  const rate = options.packetsPerCycle;
  if (!(rate > 0 && rate <= 1)) {
    throw bad(`packetsPerCycle is ${String(rate)}; a probability per cycle must be in (0, 1].`);
  }
  if (!(options.packetBytes > 0 && Number.isFinite(options.packetBytes))) {
    throw bad(`packetBytes is ${String(options.packetBytes)}; a packet carries at least 1 byte.`);
  }
  if (!(options.cycleNs > 0 && Number.isFinite(options.cycleNs))) {
    throw bad(`cycleNs is ${String(options.cycleNs)}; the cycle must be a positive number of ns.`);
  }
}
