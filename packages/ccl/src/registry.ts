import { KbError } from "@kb/errors";
import type { TL } from "@kb/tl";
import { chainBroadcast } from "./algorithms/chain-broadcast.js";
import { chainGather, chainReduce, chainScatter } from "./algorithms/chain-rooted.js";
import { ringAllGather } from "./algorithms/ring-all-gather.js";
import { ringAllReduce } from "./algorithms/ring-all-reduce.js";
import { ringAllToAll } from "./algorithms/ring-all-to-all.js";
import { ringReduceScatter } from "./algorithms/ring-reduce-scatter.js";
import { treeAllReduce } from "./algorithms/tree-all-reduce.js";
import type {
  AllGatherArgs,
  AllReduceArgs,
  AllToAllArgs,
  BroadcastArgs,
  GatherArgs,
  ReduceArgs,
  ReduceScatterArgs,
  ScatterArgs,
} from "./kernel-support.js";

/** The collectives `ccl.yaml` chooses algorithms for. */
export type CollectiveKind =
  | "allReduce"
  | "reduceScatter"
  | "allGather"
  | "broadcast"
  | "reduce"
  | "gather"
  | "scatter"
  | "allToAll";

/** The collectives, in the order messages and `ccl.yaml` list them. */
export const COLLECTIVES: readonly CollectiveKind[] = [
  "allReduce",
  "reduceScatter",
  "allGather",
  "broadcast",
  "reduce",
  "gather",
  "scatter",
  "allToAll",
];

/** The kernel arguments of each collective. */
export interface CollectiveArgsByKind {
  readonly allReduce: AllReduceArgs;
  readonly reduceScatter: ReduceScatterArgs;
  readonly allGather: AllGatherArgs;
  readonly broadcast: BroadcastArgs;
  readonly reduce: ReduceArgs;
  readonly gather: GatherArgs;
  readonly scatter: ScatterArgs;
  readonly allToAll: AllToAllArgs;
}

/**
 * A collective algorithm: a kernel every rank runs with the same arguments (it finds its rank
 * with `rankOf(tl, args.group)`), and what `ccl.yaml` and the process group need to know about it.
 */
export interface CollectiveAlgorithm<C extends CollectiveKind = CollectiveKind> {
  /** The name `ccl.yaml` uses (`ring`); qualify your own (`acme:ring-2d`). */
  readonly name: string;
  readonly collective: C;
  /** One line: what it is good for. */
  readonly description: string;
  readonly kernel: (tl: TL, args: CollectiveArgsByKind[C]) => Promise<void>;
  /**
   * The number of ranks it runs on, out of `available` (the defaults' worldSize, else the
   * topology's count): e.g. the largest power of two for recursive halving-doubling. Absent:
   * any number. It takes precedence over the defaults and the topology.
   */
  readonly worldSize?: (available: number) => number;
}

/** Any collective algorithm (the registry's entries). */
export type AnyCollectiveAlgorithm = {
  [C in CollectiveKind]: CollectiveAlgorithm<C>;
}[CollectiveKind];

/**
 * Algorithms by collective and name. `defaultAlgorithms()` holds the built-ins; register your own
 * and pass the registry to `initProcessGroup` and `parseCclConfig`.
 */
export class AlgorithmRegistry {
  private readonly algorithms = new Map<string, AnyCollectiveAlgorithm>();

  /**
   * Adds `algorithm`. Throws `RUNTIME_INVALID` for a name the collective has already, an unknown
   * collective, or a missing kernel.
   */
  register(algorithm: AnyCollectiveAlgorithm): this {
    const { name, collective, kernel, description } = algorithm ?? {};
    if (!(COLLECTIVES as readonly string[]).includes(collective)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `algorithm ${JSON.stringify(name)}: unknown collective ${JSON.stringify(collective)}; use ${COLLECTIVES.join(", ")}.`,
      );
    }
    if (typeof name !== "string" || !/^[A-Za-z0-9@/_.:-]+$/.test(name)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `a ${collective} algorithm needs a name of letters, digits and @ / _ . : -, got ${JSON.stringify(name)}.`,
      );
    }
    if (typeof kernel !== "function" || typeof description !== "string") {
      throw new KbError(
        "RUNTIME_INVALID",
        `${collective} algorithm "${name}" needs a kernel (an async function (tl, args)) and a description.`,
      );
    }
    const key = `${collective}:${name}`;
    if (this.algorithms.has(key)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${collective} already has an algorithm named "${name}"; pick another name (qualify it, e.g. "acme:${name}").`,
      );
    }
    this.algorithms.set(key, algorithm);
    return this;
  }

  /** True when `collective` has an algorithm called `name`. */
  has(collective: CollectiveKind, name: string): boolean {
    return this.algorithms.has(`${collective}:${name}`);
  }

  /** The algorithm; an unknown name is a `RUNTIME_INVALID` error listing the registered ones. */
  get<C extends CollectiveKind>(collective: C, name: string): CollectiveAlgorithm<C> {
    const algorithm = this.algorithms.get(`${collective}:${name}`);
    if (algorithm === undefined) {
      throw new KbError(
        "RUNTIME_INVALID",
        `no ${collective} algorithm named ${JSON.stringify(name)}; registered: ${this.names(collective).join(", ") || "none"}.`,
      );
    }
    return algorithm as unknown as CollectiveAlgorithm<C>;
  }

  /** Names of the algorithms of `collective`, sorted. */
  names(collective: CollectiveKind): string[] {
    return [...this.algorithms.values()]
      .filter((algorithm) => algorithm.collective === collective)
      .map((algorithm) => algorithm.name)
      .sort();
  }

  /** Every algorithm, by collective then name (for an `info` listing). */
  list(): AnyCollectiveAlgorithm[] {
    return [...this.algorithms.values()].sort(
      (a, b) =>
        COLLECTIVES.indexOf(a.collective) - COLLECTIVES.indexOf(b.collective) || a.name.localeCompare(b.name),
    );
  }
}

/** The built-in algorithms. */
export const BUILTIN_ALGORITHMS: readonly AnyCollectiveAlgorithm[] = [
  {
    name: "ring",
    collective: "allReduce",
    description: "reduce-scatter then all-gather around the ring: bandwidth-optimal, 2(n-1) hops",
    kernel: ringAllReduce,
  },
  {
    name: "tree",
    collective: "allReduce",
    description: "reduce up and broadcast down a binary tree, pipelined: ~n hops, for small messages",
    kernel: treeAllReduce,
  },
  {
    name: "ring",
    collective: "reduceScatter",
    description: "n-1 ring steps, each rank adds its data to the partial it passes on",
    kernel: ringReduceScatter,
  },
  {
    name: "ring",
    collective: "allGather",
    description: "n-1 ring steps, each rank stores and passes on what it receives",
    kernel: ringAllGather,
  },
  {
    name: "chain",
    collective: "broadcast",
    description: "pipelined chain from the root round the ring",
    kernel: chainBroadcast,
  },
  {
    name: "chain",
    collective: "reduce",
    description: "pipelined chain round the ring ending at the root, each rank adding its own",
    kernel: chainReduce,
  },
  {
    name: "chain",
    collective: "gather",
    description: "chain round the ring into the root, each rank sending its own then passing on",
    kernel: chainGather,
  },
  {
    name: "chain",
    collective: "scatter",
    description: "chain round the ring out of the root, farthest rank's piece first",
    kernel: chainScatter,
  },
  {
    name: "ring",
    collective: "allToAll",
    description: "n-1 ring steps, each passing on the blocks not yet at their rank (all-to-all-v too)",
    kernel: ringAllToAll,
  },
];

/** A new registry holding the built-in algorithms (`ring`, `tree`, `chain`). */
export function defaultAlgorithms(): AlgorithmRegistry {
  const registry = new AlgorithmRegistry();
  for (const algorithm of BUILTIN_ALGORITHMS) registry.register(algorithm);
  return registry;
}
