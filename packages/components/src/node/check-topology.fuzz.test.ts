import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultRegistry } from "@kb/builtins";
import { isKbError } from "@kb/errors";
import { parseTopology, topologyToYaml } from "@kb/topology";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { checkTopologyComponents } from "./check-topology.js";

// Random mutations of the reference topologies through the whole check `kb topology validate`
// and `kb run` make (YAML, schema, limits, expansion, impls, params, TCM budget): it never
// crashes with anything but a KbError, always ends in OK or an error located at file:line:col,
// and stays within a time and memory bound (absurd sizes fail before expansion).

const root = mkdtempSync(join(tmpdir(), "kb-topology-fuzz-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const topologiesDir = new URL("../../../../topologies/", import.meta.url);
const REFERENCES = ["default.yaml", "ref-cube.yaml", "ref-4sip.yaml"].map((name) => {
  const text = readFileSync(new URL(name, topologiesDir), "utf8");
  // The resolved form writes every key out, so every key is a mutation target.
  return { name, text, resolved: parseTopology(text, name) as unknown };
});

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

/** Every path in a value (objects, lists and leaves), root excluded. */
function pathsOf(value: Json, prefix: Path = []): Path[] {
  if (value === null || typeof value !== "object") return [];
  const entries: [string | number, Json][] = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : Object.entries(value);
  return entries.flatMap(([key, child]) => [[...prefix, key], ...pathsOf(child, [...prefix, key])]);
}

/** The object or list holding the last segment of `path`. */
function parentOf(root: Json, path: Path): Record<string | number, Json> {
  let node = root as Record<string | number, Json>;
  for (const segment of path.slice(0, -1)) node = node[segment] as Record<string | number, Json>;
  return node;
}

// Numbers users get wrong: zero, negative, fractional, huge, just past a limit, not finite.
const NUMBERS = [0, -1, -0.5, 0.5, 2.5, 3, 33, 65, 4097, 1e6, 2 ** 40 + 1, 2 ** 53, 1e300, Infinity, NaN];
const OTHER_VALUES: Json[] = [
  "",
  "x",
  "1e6",
  "pe_gemm_v9",
  "@acme/kb-plugin-x:fast",
  null,
  true,
  [],
  [1],
  {},
];

const structural = fc.oneof(
  fc.record({
    op: fc.constant("number" as const),
    value: fc.oneof(fc.constantFrom(...NUMBERS), fc.integer()),
  }),
  fc.record({ op: fc.constant("value" as const), value: fc.constantFrom(...OTHER_VALUES) }),
  fc.record({
    op: fc.constant("impl" as const),
    value: fc.constantFrom("pe_gemm_v9", "pe_math_v1", "hbm_ctrl_v2", "@acme/kb-plugin-x:fast"),
  }),
  fc.record({ op: fc.constant("delete" as const) }),
  fc.record({ op: fc.constant("misspell" as const), at: fc.nat() }),
  fc.record({
    op: fc.constant("unknown-key" as const),
    key: fc.constantFrom("capcity_bytes", "colums", "x"),
  }),
);
const mutation = fc.record({ target: fc.nat(), change: structural });

const textual = fc.oneof(
  fc.constant({ op: "second-document" as const }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({
    op: fc.constant("insert" as const),
    at: fc.nat(),
    text: fc.constantFrom('"', "'", ":", "- ", "\t", "{", "[", "&a ", "*a", "\n  ", "#"),
  }),
);

function mutate(value: Json, target: number, change: Mutation): void {
  // An impl change picks among the `impl:` keys (else few mutants would reach impl resolution).
  const paths = pathsOf(value).filter((path) => change.op !== "impl" || path[path.length - 1] === "impl");
  const path = paths[target % paths.length] as Path;
  const parent = parentOf(value, path);
  const key = path[path.length - 1] as string | number;
  switch (change.op) {
    case "number":
    case "value":
    case "impl":
      parent[key] = change.value as Json;
      return;
    case "delete":
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
      return;
    case "misspell": {
      if (Array.isArray(parent) || typeof key !== "string" || key.length < 2) return;
      const cut = change.at % key.length;
      const misspelt = key.slice(0, cut) + key.slice(cut + 1);
      parent[misspelt] = parent[key] as Json;
      delete parent[key];
      return;
    }
    case "unknown-key": {
      const holder = parent[key];
      if (holder !== null && typeof holder === "object" && !Array.isArray(holder)) holder[change.key] = 1;
    }
  }
}

type Mutation = typeof structural extends fc.Arbitrary<infer T> ? T : never;
type TextMutation = typeof textual extends fc.Arbitrary<infer T> ? T : never;

function mutateText(text: string, change: TextMutation): string {
  switch (change.op) {
    case "second-document":
      return `${text}\n---\n${text}`;
    case "truncate":
      return text.slice(0, change.at % (text.length + 1));
    case "insert": {
      const at = change.at % (text.length + 1);
      return text.slice(0, at) + change.text + text.slice(at);
    }
  }
}

/** Whether an error says where in `file` the problem is. */
function isLocated(error: unknown, file: string): boolean {
  const issues = (error as { issues?: unknown }).issues;
  if (Array.isArray(issues) && issues.length > 0) {
    return issues.every(
      (issue: { file?: unknown; line?: unknown; col?: unknown }) =>
        issue.file === file &&
        typeof issue.line === "number" &&
        issue.line >= 1 &&
        typeof issue.col === "number" &&
        issue.col >= 1,
    );
  }
  const context = (error as { context?: { file?: unknown; line?: unknown; col?: unknown } }).context;
  return context?.file === file && typeof context.line === "number" && typeof context.col === "number";
}

// More runs or another seed for a longer hunt: KB_TOPOLOGY_FUZZ_RUNS=5000 KB_TOPOLOGY_FUZZ_SEED=1.
const RUNS = Number(process.env.KB_TOPOLOGY_FUZZ_RUNS ?? 200);
const SEED = Number(process.env.KB_TOPOLOGY_FUZZ_SEED ?? 17);

/** How the checked cases ended: "OK" or the error's code. */
const outcomes = new Map<string, number>();
let cases = 0;
async function check(text: string): Promise<void> {
  const file = join(root, `case${cases++}.yaml`);
  writeFileSync(file, text);
  const heapBefore = process.memoryUsage().heapUsed;
  const start = performance.now();
  let outcome = "OK";
  try {
    await checkTopologyComponents(file, { registryFor: defaultRegistry });
  } catch (error) {
    if (!isKbError(error)) throw new Error(`not a KbError for ${file}:\n${text}\n${String(error)}`);
    if (!isLocated(error, file)) throw new Error(`unlocated ${error.code} for:\n${text}\n${error.message}`);
    outcome = error.code;
  }
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  // Generous bounds: a valid mutant of ref-4sip checks in a fraction of a second.
  expect(performance.now() - start).toBeLessThan(10_000);
  expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(512 * 2 ** 20);
}

describe("topology check fuzz", () => {
  it("structural mutations of the reference topologies end in OK or a located KbError", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...REFERENCES),
        fc.array(mutation, { minLength: 1, maxLength: 3 }),
        async (reference, mutations) => {
          const value = structuredClone(reference.resolved) as Json;
          for (const { target, change } of mutations) mutate(value, target, change);
          await check(topologyToYaml(value as never));
        },
      ),
      { numRuns: Math.ceil(RUNS * 0.75), seed: SEED },
    );
  }, 120_000);

  it("text mutations (second documents, truncation, stray quotes and brackets) end in OK or a located KbError", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...REFERENCES), textual, async (reference, change) => {
        await check(mutateText(reference.text, change));
      }),
      { numRuns: Math.ceil(RUNS * 0.25), seed: SEED },
    );
  }, 60_000);

  it("the mutants reach every stage: OK, YAML syntax, schema and limits, impls, params", () => {
    expect([...outcomes.keys()]).toEqual(
      expect.arrayContaining([
        "OK",
        "TOPOLOGY_YAML_SYNTAX",
        "TOPOLOGY_INVALID",
        "COMPONENT_UNKNOWN_IMPL",
        "COMPONENT_INVALID_PARAMS",
      ]),
    );
  });
});
