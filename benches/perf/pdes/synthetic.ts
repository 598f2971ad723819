/**
 * The synthetic two-partition workload of the parallel-DES prototype (README.md beside this file):
 * two partitions (think: two SIPs) joined by one link of latency L each way. In each partition,
 * tokens pass `stages` stages; each stage takes one of the partition's `stations` (a
 * `Resource` of capacity 1, picked by the token's own random stream), holds it for 1..maxWork
 * ns (integers, all < L) and spends `burn` loop iterations of CPU (what a real model's event
 * costs); after its last stage a token crosses the link to the other partition, `hops` times.
 *
 * Partition and token state is the same whether both partitions share one `Environment` (the
 * single-thread reference) or each runs in its own thread; only `send` differs. The log records,
 * per token and stage, the station and the grant time, so any change of same-instant order at a
 * station shows in it.
 */
import { type Environment, Resource } from "@kb/des";

/** The workload's size. */
export interface SyntheticParams {
  /** Tokens that start in each partition. */
  readonly tokens: number;
  /** Stations (capacity-1 resources) per partition. */
  readonly stations: number;
  /** Stages a token passes in a partition before it crosses. */
  readonly stages: number;
  /** Crossings per token before it stops. */
  readonly hops: number;
  /** Link latency between the partitions, ns: the lookahead. */
  readonly linkNs: number;
  /** Largest stage time, ns (< linkNs). */
  readonly maxWork: number;
  /** Loop iterations of CPU work per stage (the cost of a model's event). */
  readonly burn: number;
  readonly seed: number;
}

/** A token crossing the link: it arrives at `at`, with its state. */
export interface Crossing {
  readonly at: number;
  readonly token: number;
  readonly hop: number;
  readonly rng: number;
}

/** Where a partition's crossings go: the other partition, now or through a mailbox. */
export type Send = (crossing: Crossing) => void;

/** One partition: its stations, its log and how tokens arrive. */
export class Partition {
  readonly stations: Resource[];
  /** One line per stage: `token hop stage station grantTime`. */
  readonly log: string[] = [];
  /** Stages run (each is two engine events or more). */
  steps = 0;
  sink = 0;
  /** When this partition's last stage ended, ns. */
  lastNs = 0;

  constructor(
    readonly env: Environment,
    readonly index: number,
    readonly params: SyntheticParams,
    readonly send: Send,
  ) {
    if (params.maxWork >= params.linkNs) {
      throw new Error(`maxWork (${params.maxWork}) must be below the link latency (${params.linkNs} ns)`);
    }
    this.stations = Array.from(
      { length: params.stations },
      (_, i) => new Resource(env, { capacity: 1, name: `p${index}.station${i}` }),
    );
  }

  /** Starts this partition's own tokens at time 0. */
  start(): void {
    for (let i = 0; i < this.params.tokens; i++) {
      const token = this.index * this.params.tokens + i;
      this.env.process(tokenRun(this, token, 0, mix(this.params.seed * 7919 + token + 1)), `t${token}`);
    }
  }

  /** A token arrives from the other partition (at `crossing.at`, which must be now). */
  arrive(crossing: Crossing): void {
    this.env.process(tokenRun(this, crossing.token, crossing.hop, crossing.rng), `t${crossing.token}`);
  }
}

/** A 32-bit xorshift step (the token's random stream; deterministic). */
function mix(x: number): number {
  let v = x | 0 || 0x9e3779b9;
  v ^= v << 13;
  v ^= v >>> 17;
  v ^= v << 5;
  return v >>> 0;
}

function* tokenRun(part: Partition, token: number, hop: number, seed: number): Generator<any, void, any> {
  const { stages, maxWork, burn, hops, linkNs } = part.params;
  const env = part.env;
  let rng = seed;
  for (let stage = 0; stage < stages; stage++) {
    rng = mix(rng);
    const station = rng % part.stations.length;
    const resource = part.stations[station] as Resource;
    const request = resource.request();
    yield request;
    part.log.push(`${token} ${hop} ${stage} ${station} ${env.now}`);
    rng = mix(rng);
    yield env.timeout(1 + (rng % maxWork));
    let acc = rng;
    for (let i = 0; i < burn; i++) acc = (acc * 1103515245 + 12345) >>> 0;
    part.sink ^= acc;
    resource.release(request);
    part.steps += 1;
    part.lastNs = env.now;
  }
  if (hop + 1 < hops) part.send({ at: env.now + linkNs, token, hop: hop + 1, rng });
}

/** What a run produced: compared byte for byte between the two engines. */
export interface SyntheticResult {
  /** The simulated time the last stage of each partition ended at. */
  readonly endNs: readonly number[];
  readonly steps: readonly number[];
  readonly sink: readonly number[];
  /** Each partition's log in the order its stages were granted. */
  readonly log: readonly (readonly string[])[];
}

/** The result of both partitions. */
export function syntheticResult(parts: readonly Partition[]): SyntheticResult {
  return {
    endNs: parts.map((part) => part.lastNs),
    steps: parts.map((part) => part.steps),
    sink: parts.map((part) => part.sink),
    log: parts.map((part) => part.log),
  };
}
