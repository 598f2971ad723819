import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isKbError } from "@kb/errors";
import { YamlValidationError } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { ringAllReduce } from "./algorithms/ring-all-reduce.js";
import {
  cclConfig,
  cclConfigToYaml,
  DEFAULT_CCL_CONFIG,
  parseCclConfig,
  resolveWorldSize,
  selectAlgorithm,
} from "./config.js";
import { loadCclConfig } from "./node.js";
import { AlgorithmRegistry, type CollectiveAlgorithm, defaultAlgorithms } from "./registry.js";

const EXAMPLE = `# ccl.yaml
allReduce:
  - { maxBytes: 65536, algorithm: tree }
  - { algorithm: ring }
broadcast:
  - algorithm: chain
defaults:
  worldSize: 4
  slotBytes: 8192
`;

/** A power-of-two all-reduce (it only needs to exist for selection). */
const halvingDoubling: CollectiveAlgorithm<"allReduce"> = {
  name: "acme:halving-doubling",
  collective: "allReduce",
  description: "recursive halving-doubling (power-of-two ranks)",
  kernel: ringAllReduce,
  worldSize: (available) => 2 ** Math.floor(Math.log2(available)),
};

function problems(text: string, registry?: AlgorithmRegistry): string[] {
  try {
    parseCclConfig(text, "ccl.yaml", registry === undefined ? {} : { registry });
  } catch (error) {
    if (error instanceof YamlValidationError)
      return error.issues.map((i) => `${i.line}:${i.col} ${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe("parseCclConfig", () => {
  it("reads rules and defaults; collectives it does not name get the default rules", () => {
    const config = parseCclConfig(EXAMPLE);
    expect(config.allReduce).toEqual([{ maxBytes: 65536, algorithm: "tree" }, { algorithm: "ring" }]);
    expect(config.broadcast).toEqual([{ algorithm: "chain" }]);
    expect(config.reduceScatter).toEqual(DEFAULT_CCL_CONFIG.reduceScatter);
    expect(config.defaults).toEqual({ worldSize: 4, slotBytes: 8192 });
    expect(parseCclConfig("")).toMatchObject({ allReduce: DEFAULT_CCL_CONFIG.allReduce, defaults: {} });
  });

  it("round-trips through cclConfigToYaml", () => {
    const config = parseCclConfig(EXAMPLE);
    expect(parseCclConfig(cclConfigToYaml(config))).toEqual(config);
  });

  it("names an unknown algorithm at its line, with a suggestion and the registered ones", () => {
    expect(
      problems("allReduce:\n  - { maxBytes: 1024, algorithm: tree }\n  - { algorithm: rign }\n"),
    ).toEqual([
      '3:18 allReduce[1].algorithm: no allReduce algorithm named "rign"; did you mean "ring"? Registered: ring, tree.',
    ]);
    // Names are per collective: "chain" is a broadcast.
    expect(problems("allGather:\n  - algorithm: chain\n")[0]).toMatch(
      /^2:\d+ allGather\[0\]\.algorithm: no allGather algorithm named "chain"\. Registered: ring\.$/,
    );
  });

  it("accepts algorithms of the registry it is given", () => {
    const registry = defaultAlgorithms().register(halvingDoubling);
    const text =
      "allReduce:\n  - { maxBytes: 4096, algorithm: acme:halving-doubling }\n  - { algorithm: ring }\n";
    expect(problems(text, registry)).toEqual([]);
    expect(problems(text)[0]).toMatch(/no allReduce algorithm named "acme:halving-doubling"/);
  });

  it("rejects rules that can never apply and a last rule with a size limit", () => {
    expect(
      problems(
        [
          "allReduce:",
          "  - { algorithm: tree }",
          "  - { algorithm: ring }",
          "reduceScatter:",
          "  - { maxBytes: 4096, algorithm: ring }",
          "broadcast:",
          "  - { maxBytes: 4096, algorithm: chain }",
          "  - { maxBytes: 1024, algorithm: chain }",
          "  - { algorithm: chain }",
        ].join("\n"),
      ),
    ).toEqual([
      "2:5 allReduce[0]: this rule has no maxBytes, so it takes every size and the 1 rule(s) after it are never used; give it a maxBytes or move it last.",
      '5:17 reduceScatter[0].maxBytes: the last rule must not have maxBytes, so that every message size has an algorithm; remove it or add { algorithm: "ring" } after it.',
      "8:17 broadcast[1].maxBytes: maxBytes 1024 is not above the 4096 of an earlier rule, so this rule is never used; list rules by increasing maxBytes.",
    ]);
  });

  it("reports schema problems located, with did-you-mean for keys", () => {
    expect(problems("allreduce:\n  - algorithm: ring\ndefaults:\n  slotBytes: -1\n")).toEqual([
      '1:1 allreduce: unknown key "allreduce"; did you mean "allReduce"? Allowed keys here: allGather, allReduce, allToAll, broadcast, defaults, gather, reduce, reduceScatter, scatter.',
      "4:14 defaults.slotBytes: value must be > 0, got number -1.",
    ]);
    expect(problems("allReduce: []\n")).toEqual([
      "1:12 allReduce: number of entries must be >= 1, got a list.",
    ]);
  });

  it("reports YAML syntax errors as TOPOLOGY_YAML_SYNTAX", () => {
    let error: unknown;
    try {
      parseCclConfig("allReduce: [\n", "mine.yaml");
    } catch (e) {
      error = e;
    }
    expect(isKbError(error, "TOPOLOGY_YAML_SYNTAX")).toBe(true);
    expect(String(error)).toMatch(/mine\.yaml:/);
  });

  it("loadCclConfig reads a file and names it in errors", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ccl-"));
    writeFileSync(join(dir, "ccl.yaml"), EXAMPLE);
    expect((await loadCclConfig(join(dir, "ccl.yaml"))).defaults.worldSize).toBe(4);
    writeFileSync(join(dir, "bad.yaml"), "broadcast:\n  - algorithm: tree\n");
    await expect(loadCclConfig(join(dir, "bad.yaml"))).rejects.toThrow(
      /bad\.yaml:2:\d+: broadcast\[0\]\.algorithm/,
    );
    await expect(loadCclConfig(join(dir, "missing.yaml"))).rejects.toThrow(/cannot read the ccl config/);
  });
});

describe("cclConfig (objects)", () => {
  it("validates objects with the same rules, naming paths", () => {
    expect(cclConfig({ allReduce: [{ algorithm: "ring" }] }).allReduce).toEqual([{ algorithm: "ring" }]);
    expect(() => cclConfig({ allReduce: [{ algorithm: "ring", maxBytes: 10 }] })).toThrow(
      /allReduce\[0\]\.maxBytes: the last rule must not have maxBytes/,
    );
    expect(() => cclConfig({ defaults: { worldSize: 0 } })).toThrow(/defaults\.worldSize/);
    expect(() => cclConfig({ gatherObject: [] } as never)).toThrow(/Unrecognized key/);
  });
});

describe("selectAlgorithm", () => {
  const config = parseCclConfig(EXAMPLE);
  const registry = defaultAlgorithms();

  it("takes the first rule whose maxBytes fits the message", () => {
    expect(selectAlgorithm(config, registry, "allReduce", 1, 8).name).toBe("tree");
    expect(selectAlgorithm(config, registry, "allReduce", 65536, 8).name).toBe("tree");
    expect(selectAlgorithm(config, registry, "allReduce", 65537, 8).name).toBe("ring");
    expect(selectAlgorithm(config, registry, "broadcast", 10 ** 9, 8).kernel.name).toBe("chainBroadcast");
  });

  it("skips an algorithm that cannot run on the group's world size", () => {
    const withHd = defaultAlgorithms().register(halvingDoubling);
    const hd = cclConfig(
      { allReduce: [{ maxBytes: 4096, algorithm: "acme:halving-doubling" }, { algorithm: "ring" }] },
      { registry: withHd },
    );
    expect(selectAlgorithm(hd, withHd, "allReduce", 1024, 8).name).toBe("acme:halving-doubling");
    expect(selectAlgorithm(hd, withHd, "allReduce", 1024, 6).name).toBe("ring");
    const only = cclConfig({ allReduce: [{ algorithm: "acme:halving-doubling" }] }, { registry: withHd });
    expect(() => selectAlgorithm(only, withHd, "allReduce", 1024, 6)).toThrow(
      /no allReduce rule fits 1024 bytes on 6 ranks; tried acme:halving-doubling \(runs on 4 of 6 ranks\)/,
    );
  });
});

describe("resolveWorldSize", () => {
  it("takes the algorithm's requirement, else the defaults, else the topology", () => {
    expect(resolveWorldSize({ available: 8 })).toEqual({ worldSize: 8, source: "topology" });
    expect(resolveWorldSize({ available: 8, defaults: { worldSize: 6 } })).toEqual({
      worldSize: 6,
      source: "defaults",
    });
    expect(
      resolveWorldSize({ available: 8, defaults: { worldSize: 6 }, algorithm: halvingDoubling }),
    ).toEqual({
      worldSize: 4,
      source: "algorithm",
    });
    expect(resolveWorldSize({ available: 8, algorithm: halvingDoubling })).toEqual({
      worldSize: 8,
      source: "algorithm",
    });
    // An algorithm without a requirement leaves it to the defaults and the topology.
    expect(resolveWorldSize({ available: 8, algorithm: { name: "ring" } }).source).toBe("topology");
  });

  it("rejects defaults beyond the topology and requirements outside 1..available", () => {
    expect(() => resolveWorldSize({ available: 4, defaults: { worldSize: 8 } })).toThrow(
      /defaults\.worldSize 8 is more than the 4 ranks/,
    );
    expect(() => resolveWorldSize({ available: 4, algorithm: { name: "x", worldSize: () => 5 } })).toThrow(
      /algorithm "x" asked for 5 ranks out of 4/,
    );
  });
});

describe("AlgorithmRegistry", () => {
  it("holds the built-ins and lists them by collective", () => {
    const registry = defaultAlgorithms();
    expect(registry.list().map((a) => `${a.collective}:${a.name}`)).toEqual([
      "allReduce:ring",
      "allReduce:tree",
      "reduceScatter:ring",
      "allGather:ring",
      "broadcast:chain",
      "reduce:chain",
      "gather:chain",
      "scatter:chain",
      "allToAll:ring",
    ]);
    expect(registry.get("allReduce", "ring").kernel).toBe(ringAllReduce);
  });

  it("refuses duplicates, unknown collectives and bad names; lists what exists for a missing name", () => {
    const registry = defaultAlgorithms();
    expect(() => registry.register({ ...halvingDoubling, name: "ring" })).toThrow(
      /allReduce already has an algorithm named "ring"/,
    );
    expect(() => registry.register({ ...halvingDoubling, collective: "gatherObject" } as never)).toThrow(
      /unknown collective "gatherObject"/,
    );
    expect(() => registry.register({ ...halvingDoubling, name: "two words" })).toThrow(/needs a name/);
    expect(() => registry.get("allGather", "tree")).toThrow(
      /no allGather algorithm named "tree"; registered: ring/,
    );
    expect(new AlgorithmRegistry().names("broadcast")).toEqual([]);
  });
});
