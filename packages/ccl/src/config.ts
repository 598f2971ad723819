import { closest, formatIssuePath, KbError } from "@kb/errors";
import { type LocatedIssue, locateYamlPath, validateYaml, YamlValidationError } from "@kb/topology";
import { parseDocument, stringify } from "yaml";
import * as z from "zod";
import {
  type AlgorithmRegistry,
  COLLECTIVES,
  type CollectiveAlgorithm,
  type CollectiveKind,
  defaultAlgorithms,
} from "./registry.js";

const ruleSchema = z
  .strictObject({
    maxBytes: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("The rule applies to messages of at most this many bytes per rank; absent: any size."),
    algorithm: z
      .string()
      .min(1)
      .describe("A registered algorithm of the collective (ring, tree, chain, ...)."),
  })
  .describe("One rule: the algorithm for messages up to maxBytes.");

const rulesSchema = z
  .array(ruleSchema)
  .min(1)
  .describe(
    "Rules tried in order; the first whose maxBytes fits the message wins. The last has no maxBytes.",
  );

/** The zod schema of `ccl.yaml`. */
export const cclConfigSchema = z.strictObject({
  allReduce: rulesSchema.optional(),
  reduceScatter: rulesSchema.optional(),
  allGather: rulesSchema.optional(),
  broadcast: rulesSchema.optional(),
  reduce: rulesSchema.optional(),
  gather: rulesSchema.optional(),
  scatter: rulesSchema.optional(),
  allToAll: rulesSchema.optional(),
  defaults: z
    .strictObject({
      worldSize: z
        .number()
        .int()
        .positive()
        .optional()
        .describe("Ranks of a process group (default: every PE / cube / SIP of the topology)."),
      slotBytes: z
        .number()
        .int()
        .positive()
        .optional()
        .describe("Largest message, bytes (default: the topology's pe_cpu ipcq_slot_bytes, 16384)."),
    })
    .optional(),
});

/** What `ccl.yaml` may hold (the input of {@link cclConfigSchema}). */
export type CclConfigInput = z.input<typeof cclConfigSchema>;

/** One rule of a collective. */
export interface CclRule {
  /** Messages of at most this many bytes per rank; absent: any size. */
  readonly maxBytes?: number;
  readonly algorithm: string;
}

/** A validated `ccl.yaml`: rules for every collective (the defaults where it had none). */
export interface CclConfig {
  readonly allReduce: readonly CclRule[];
  readonly reduceScatter: readonly CclRule[];
  readonly allGather: readonly CclRule[];
  readonly broadcast: readonly CclRule[];
  readonly reduce: readonly CclRule[];
  readonly gather: readonly CclRule[];
  readonly scatter: readonly CclRule[];
  readonly allToAll: readonly CclRule[];
  readonly defaults: { readonly worldSize?: number; readonly slotBytes?: number };
}

/**
 * The rules a collective gets when `ccl.yaml` has none: `tree` all-reduce up to 8 KiB per rank,
 * `ring` beyond; `ring` reduce-scatter, all-gather and all-to-all; `chain` broadcast, reduce, gather and scatter. 8 KiB is where the ring
 * overtakes the tree on the default cube, both over its 8 PEs and over 4 cubes.
 */
export const DEFAULT_CCL_CONFIG: CclConfig = Object.freeze({
  allReduce: [{ maxBytes: 8192, algorithm: "tree" }, { algorithm: "ring" }],
  reduceScatter: [{ algorithm: "ring" }],
  allGather: [{ algorithm: "ring" }],
  broadcast: [{ algorithm: "chain" }],
  reduce: [{ algorithm: "chain" }],
  gather: [{ algorithm: "chain" }],
  scatter: [{ algorithm: "chain" }],
  allToAll: [{ algorithm: "ring" }],
  defaults: {},
});

/** Options of {@link parseCclConfig} and {@link cclConfig}. */
export interface CclConfigOptions {
  /** Algorithm names are checked against it (default: the built-ins). */
  readonly registry?: AlgorithmRegistry;
}

/**
 * Parses and validates `ccl.yaml` text (an empty file means every default). Throws a `YamlValidationError` (a `KbError`) listing every
 * problem as `file:line:col: path: message`: YAML syntax (`TOPOLOGY_YAML_SYNTAX`), unknown keys,
 * wrong types, an algorithm the registry does not have for that collective (with a "did you mean"),
 * a rule no message can reach, a last rule with a maxBytes (`TOPOLOGY_INVALID`).
 */
export function parseCclConfig(text: string, file = "ccl.yaml", options: CclConfigOptions = {}): CclConfig {
  // A file with nothing but comments is a valid ccl.yaml: every default.
  const empty = parseDocument(text).contents === null;
  const parsed = validateYaml(cclConfigSchema, empty ? "{}" : text, file);
  const issues = check(parsed, options.registry ?? defaultAlgorithms()).map(
    ({ path, message }): LocatedIssue => {
      const { line, col } = locateYamlPath(text, path);
      return { file, line, col, path: formatIssuePath(path), message };
    },
  );
  if (issues.length > 0) throw new YamlValidationError("TOPOLOGY_INVALID", file, issues);
  return complete(parsed);
}

/**
 * Validates a `ccl.yaml`-shaped object (or returns a {@link CclConfig} as is, after checking its
 * algorithm names). Throws `RUNTIME_INVALID` listing every problem with its path.
 */
export function cclConfig(input: CclConfigInput | CclConfig, options: CclConfigOptions = {}): CclConfig {
  const result = cclConfigSchema.safeParse(input);
  if (!result.success) {
    throw new KbError(
      "RUNTIME_INVALID",
      `invalid ccl config:\n${result.error.issues
        .map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`)
        .join("\n")}`,
    );
  }
  const problems = check(result.data, options.registry ?? defaultAlgorithms());
  if (problems.length > 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `invalid ccl config:\n${problems.map(({ path, message }) => `${formatIssuePath(path)}: ${message}`).join("\n")}`,
    );
  }
  return complete(result.data);
}

/** `config` as `ccl.yaml` text. */
export function cclConfigToYaml(config: CclConfig | CclConfigInput): string {
  return stringify(config);
}

/**
 * The algorithm `config` chooses for a `collective` of `bytes` per rank on `worldSize` ranks:
 * the first rule whose `maxBytes` is at least `bytes` (or that has none), skipping rules whose
 * algorithm cannot run on `worldSize` ranks (its `worldSize` requirement gives another number).
 * Throws `RUNTIME_INVALID` naming the rules tried when none fits.
 */
export function selectAlgorithm<C extends CollectiveKind>(
  config: CclConfig,
  registry: AlgorithmRegistry,
  collective: C,
  bytes: number,
  worldSize: number,
): CollectiveAlgorithm<C> {
  const tried: string[] = [];
  for (const rule of config[collective]) {
    if (rule.maxBytes !== undefined && bytes > rule.maxBytes) {
      tried.push(`${rule.algorithm} (up to ${rule.maxBytes} bytes)`);
      continue;
    }
    const algorithm = registry.get(collective, rule.algorithm);
    const runsOn = algorithm.worldSize?.(worldSize) ?? worldSize;
    if (runsOn !== worldSize) {
      tried.push(`${rule.algorithm} (runs on ${runsOn} of ${worldSize} ranks)`);
      continue;
    }
    return algorithm;
  }
  throw new KbError(
    "RUNTIME_INVALID",
    `no ${collective} rule fits ${bytes} bytes on ${worldSize} ranks; tried ${tried.join(", ")}. Add a last rule without maxBytes whose algorithm runs on any number of ranks (e.g. { algorithm: "${DEFAULT_CCL_CONFIG[collective].at(-1)?.algorithm}" }).`,
  );
}

/** Where a world size came from (see {@link resolveWorldSize}). */
export type WorldSizeSource = "algorithm" | "defaults" | "topology";

/**
 * The number of ranks a collective runs on, by priority: the algorithm's requirement (its
 * `worldSize(available)`, e.g. a power of two), else `defaults.worldSize` of `ccl.yaml`, else
 * `available` (every PE / cube / SIP of the topology). The algorithm sees the defaults' number
 * when there is one. Throws `RUNTIME_INVALID` when the defaults ask for more ranks than the
 * topology has, or the algorithm answers with something that is not 1..available.
 */
export function resolveWorldSize(options: {
  readonly available: number;
  readonly defaults?: CclConfig["defaults"];
  readonly algorithm?: Pick<CollectiveAlgorithm, "name" | "worldSize">;
}): { readonly worldSize: number; readonly source: WorldSizeSource } {
  const { available, defaults, algorithm } = options;
  const asked = defaults?.worldSize;
  if (asked !== undefined && asked > available) {
    throw new KbError(
      "RUNTIME_INVALID",
      `ccl defaults.worldSize ${asked} is more than the ${available} ranks of the topology.`,
    );
  }
  const candidate = asked ?? available;
  if (algorithm?.worldSize !== undefined) {
    const size = algorithm.worldSize(candidate);
    if (!Number.isInteger(size) || size < 1 || size > candidate) {
      throw new KbError(
        "RUNTIME_INVALID",
        `algorithm "${algorithm.name}" asked for ${size} ranks out of ${candidate}; worldSize(available) must return 1..available.`,
      );
    }
    return { worldSize: size, source: "algorithm" };
  }
  return { worldSize: candidate, source: asked !== undefined ? "defaults" : "topology" };
}

interface Problem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

function check(config: z.output<typeof cclConfigSchema>, registry: AlgorithmRegistry): Problem[] {
  const problems: Problem[] = [];
  for (const collective of COLLECTIVES) {
    const rules = config[collective];
    if (rules === undefined) continue;
    let bound = 0;
    rules.forEach((rule, i) => {
      if (!registry.has(collective, rule.algorithm)) {
        const names = registry.names(collective);
        const suggestion = closest(rule.algorithm, names);
        problems.push({
          path: [collective, i, "algorithm"],
          message: `no ${collective} algorithm named "${rule.algorithm}"${
            suggestion !== undefined ? `; did you mean "${suggestion}"?` : "."
          } Registered: ${names.join(", ") || "none"}.`,
        });
      }
      const last = i === rules.length - 1;
      if (last && rule.maxBytes !== undefined) {
        problems.push({
          path: [collective, i, "maxBytes"],
          message: `the last rule must not have maxBytes, so that every message size has an algorithm; remove it or add { algorithm: "${DEFAULT_CCL_CONFIG[collective].at(-1)?.algorithm}" } after it.`,
        });
      } else if (!last && rule.maxBytes === undefined) {
        problems.push({
          path: [collective, i],
          message: `this rule has no maxBytes, so it takes every size and the ${rules.length - 1 - i} rule(s) after it are never used; give it a maxBytes or move it last.`,
        });
      } else if (!last && rule.maxBytes !== undefined) {
        if (rule.maxBytes <= bound) {
          problems.push({
            path: [collective, i, "maxBytes"],
            message: `maxBytes ${rule.maxBytes} is not above the ${bound} of an earlier rule, so this rule is never used; list rules by increasing maxBytes.`,
          });
        }
        bound = Math.max(bound, rule.maxBytes);
      }
    });
  }
  return problems;
}

function complete(config: z.output<typeof cclConfigSchema>): CclConfig {
  const rules = (collective: CollectiveKind): CclRule[] =>
    (config[collective] ?? DEFAULT_CCL_CONFIG[collective]).map((rule) =>
      rule.maxBytes === undefined
        ? { algorithm: rule.algorithm }
        : { maxBytes: rule.maxBytes, algorithm: rule.algorithm },
    );
  const defaults = config.defaults ?? {};
  return Object.freeze({
    allReduce: rules("allReduce"),
    reduceScatter: rules("reduceScatter"),
    allGather: rules("allGather"),
    broadcast: rules("broadcast"),
    reduce: rules("reduce"),
    gather: rules("gather"),
    scatter: rules("scatter"),
    allToAll: rules("allToAll"),
    defaults: Object.freeze({
      ...(defaults.worldSize !== undefined ? { worldSize: defaults.worldSize } : {}),
      ...(defaults.slotBytes !== undefined ? { slotBytes: defaults.slotBytes } : {}),
    }),
  });
}
