/**
 * The four event-engine workloads of shared/bench-specs/des-workloads.md. Each returns the
 * simulated end time, the arrival checksum (null where the spec defines none) and how many units
 * it simulated; any SimPy-semantics engine must produce the spec's end times and checksums.
 */
import { Environment, type ProcessGenerator, Resource, Store } from "@kb/des";

/** What one workload run produced. */
export interface WorkloadResult {
  readonly simEnd: number;
  readonly checksum: number | null;
  readonly units: number;
}

/** A workload: its parameters with defaults, the unit it counts, and how to run it. */
export interface Workload {
  readonly name: string;
  readonly units: string;
  readonly defaults: Readonly<Record<string, number>>;
  run(params: Readonly<Record<string, number>>): WorkloadResult;
}

const MODULUS = 2147483647;
const MULTIPLIER = 1000003;

/** The spec's checksum step: exact in float64 (every intermediate stays below 2^53). */
export function foldChecksum(checksum: number, value: number): number {
  return (checksum * MULTIPLIER + value) % MODULUS;
}

function param(params: Readonly<Record<string, number>>, name: string): number {
  const value = params[name];
  if (value === undefined) throw new Error(`missing workload parameter ${name}`);
  return value;
}

function* timeoutUser(env: Environment, i: number, K: number): ProcessGenerator<void> {
  for (let k = 0; k < K; k++) yield env.timeout(1 + ((i * 31 + k * 17) % 23));
}

export const timeouts: Workload = {
  name: "timeouts",
  units: "timeouts",
  defaults: { P: 1000, K: 1000 },
  run(params) {
    const P = param(params, "P");
    const K = param(params, "K");
    const env = new Environment();
    for (let i = 0; i < P; i++) env.process(timeoutUser(env, i, K));
    env.run();
    return { simEnd: env.now, checksum: null, units: P * K };
  },
};

// Processes are top-level generator functions taking their parameters, as in SimPy's own
// examples: every process of a kind then shares one function (and one object shape).

function* feeder(first: Store<number>, tokens: number): ProcessGenerator<void> {
  for (let token = 0; token < tokens; token++) yield first.put(token);
}

function* stage(
  env: Environment,
  input: Store<number>,
  output: Store<number>,
  delay: number,
): ProcessGenerator<void> {
  for (;;) {
    const token: number = yield input.get();
    yield env.timeout(delay);
    yield output.put(token);
  }
}

/** The sink's running checksum, read after the run. */
interface Checksum {
  value: number;
}

function* sink(env: Environment, last: Store<number>, checksum: Checksum): ProcessGenerator<void> {
  for (;;) {
    yield last.get();
    checksum.value = foldChecksum(checksum.value, env.now);
  }
}

/** Builds one pipeline (feeder, stages, sink, started in that order) and returns its checksum. */
function buildPipeline(
  env: Environment,
  stages: number,
  capacity: number,
  tokens: number,
  latency: (stage: number) => number,
): Checksum {
  const stores: Store<number>[] = [];
  for (let j = 0; j <= stages; j++) stores.push(new Store<number>(env, { capacity }));
  const checksum: Checksum = { value: 0 };
  env.process(feeder(stores[0]!, tokens));
  for (let j = 0; j < stages; j++) env.process(stage(env, stores[j]!, stores[j + 1]!, latency(j)));
  env.process(sink(env, stores[stages]!, checksum));
  return checksum;
}

const PIPELINE_LATENCY = [2, 1, 4, 3, 2, 1];

export const pipeline: Workload = {
  name: "pipeline",
  units: "tokens",
  defaults: { S: 6, C: 2, T: 200000 },
  run(params) {
    const S = param(params, "S");
    const T = param(params, "T");
    const env = new Environment();
    const checksum = buildPipeline(env, S, param(params, "C"), T, (j) => PIPELINE_LATENCY[j % 6]!);
    env.run();
    return { simEnd: env.now, checksum: checksum.value, units: T };
  },
};

function* resourceUser(env: Environment, shared: Resource, i: number, R: number): ProcessGenerator<void> {
  for (let r = 0; r < R; r++) {
    const request = shared.request();
    yield request;
    yield env.timeout(1 + ((i + r) % 5));
    shared.release(request);
    yield env.timeout(1 + ((i * r) % 7));
  }
}

export const resource: Workload = {
  name: "resource",
  units: "acquisitions",
  defaults: { N: 1000, k: 16, R: 100 },
  run(params) {
    const N = param(params, "N");
    const R = param(params, "R");
    const env = new Environment();
    const shared = new Resource(env, { capacity: param(params, "k") });
    for (let i = 0; i < N; i++) env.process(resourceUser(env, shared, i, R));
    env.run();
    return { simEnd: env.now, checksum: null, units: N * R };
  },
};

const FANOUT_LATENCY = [1, 3, 2, 1];

export const fanout: Workload = {
  name: "fanout",
  units: "tokens",
  defaults: { NPE: 512, S: 4, C: 2, TPE: 400 },
  run(params) {
    const NPE = param(params, "NPE");
    const S = param(params, "S");
    const C = param(params, "C");
    const TPE = param(params, "TPE");
    const env = new Environment();
    const checksums: Checksum[] = [];
    for (let pe = 0; pe < NPE; pe++) {
      checksums.push(buildPipeline(env, S, C, TPE, (j) => FANOUT_LATENCY[j % 4]! + (pe % 3)));
    }
    env.run();
    let checksum = 0;
    for (const pipelineChecksum of checksums) checksum = foldChecksum(checksum, pipelineChecksum.value);
    return { simEnd: env.now, checksum, units: NPE * TPE };
  },
};

/** Every workload, by name, in suite order. */
export const workloads: readonly Workload[] = [timeouts, pipeline, resource, fanout];

/** The spec's expected results: `{ params, simEnd, checksum }` per workload. */
export const expectedResults: readonly {
  readonly bench: string;
  readonly params: Readonly<Record<string, number>>;
  readonly simEnd: number;
  readonly checksum: number | null;
}[] = [
  { bench: "timeouts", params: timeouts.defaults, simEnd: 12021, checksum: null },
  { bench: "pipeline", params: pipeline.defaults, simEnd: 800009, checksum: 932209160 },
  { bench: "resource", params: resource.defaults, simEnd: 18757, checksum: null },
  { bench: "fanout", params: fanout.defaults, simEnd: 2010, checksum: 1382038827 },
  { bench: "fanout", params: { NPE: 1, S: 4, C: 2, TPE: 204800 }, simEnd: 614404, checksum: 64551432 },
  { bench: "fanout", params: { NPE: 64, S: 4, C: 2, TPE: 3200 }, simEnd: 16010, checksum: 1513608156 },
  { bench: "fanout", params: { NPE: 4096, S: 4, C: 2, TPE: 50 }, simEnd: 260, checksum: 582224987 },
];
