import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatIssue, parseTopology, YamlValidationError } from "./index.js";

// Realistic mistakes in topology files, and the exact located messages a user gets for each.
// A change to a message shows up here as a diff of the whole list.
const fixturesDir = new URL("__fixtures__/", import.meta.url);

interface Expected {
  readonly code: "TOPOLOGY_YAML_SYNTAX" | "TOPOLOGY_INVALID";
  readonly issues: readonly string[];
}

const expected: Record<string, Expected> = {
  "bad-misspelt-key.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      '__fixtures__/bad-misspelt-key.yaml:5:5: cube.hbm.chanels: unknown key "chanels"; did you mean "channels"? Allowed keys here: access_latency_ns, bank_groups, banks_per_group, burst_bytes, capacity_bytes, channels, flit_bytes, impl, interleave_bytes, kind, mapping, params, pc_bw_gbs, preset, pseudo_channels, row_bytes, sids.',
    ],
  },
  "bad-unknown-top-level-key.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      '__fixtures__/bad-unknown-top-level-key.yaml:3:1: sips: unknown key "sips"; it belongs under "system" (system.sips). Allowed keys here: $schema, cube, description, energy, name, overrides, pe_template, plugins, sip, system, wire_delay_ns_per_mm.',
    ],
  },
  "bad-wrong-type.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: ["__fixtures__/bad-wrong-type.yaml:4:8: cube.hbm: expected a mapping, got number 16."],
  },
  "bad-negative-bandwidth.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-negative-bandwidth.yaml:4:24: sip.host_link.bw_gbs: value must be >= 0.001, got number -64.",
    ],
  },
  "bad-zero-channels.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-zero-channels.yaml:5:15: cube.hbm.channels: value must be >= 1, got number 0.",
    ],
  },
  "bad-link-pattern.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      '__fixtures__/bad-link-pattern.yaml:5:24: system.sip_link.pattern: the string "all-to-all" is not allowed; expected one of "none", "ring", "mesh", "all_to_all"; did you mean "all_to_all"?',
      '__fixtures__/bad-link-pattern.yaml:8:20: sip.ucie.pattern: the string "rnig" is not allowed; expected one of "none", "ring", "mesh", "all_to_all"; did you mean "ring"?',
    ],
  },
  "bad-length-and-latency.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-length-and-latency.yaml:5:9: sip.ucie: give either length_mm or latency_ns, not both.",
    ],
  },
  "bad-missing-name.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: ['__fixtures__/bad-missing-name.yaml:2:1: name: missing required key "name" (a string).'],
  },
  "bad-yaml-syntax.yaml": {
    code: "TOPOLOGY_YAML_SYNTAX",
    issues: [
      "__fixtures__/bad-yaml-syntax.yaml:5:1: <yaml>: Flow map in block collection must be sufficiently indented and end with a }.",
    ],
  },
  "bad-duplicate-key.yaml": {
    code: "TOPOLOGY_YAML_SYNTAX",
    issues: [
      '__fixtures__/bad-duplicate-key.yaml:7:1: <yaml>: duplicate key "cube": each key may appear only once in a mapping.',
    ],
  },
  "bad-tab-indentation.yaml": {
    code: "TOPOLOGY_YAML_SYNTAX",
    issues: [
      "__fixtures__/bad-tab-indentation.yaml:4:1: <yaml>: Tabs are not allowed as indentation.",
      "__fixtures__/bad-tab-indentation.yaml:5:1: <yaml>: Tabs are not allowed as indentation.",
    ],
  },
  "bad-indentation.yaml": {
    code: "TOPOLOGY_YAML_SYNTAX",
    issues: [
      "__fixtures__/bad-indentation.yaml:6:1: <yaml>: All mapping items must start at the same column.",
    ],
  },
  "bad-non-integer-count.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-non-integer-count.yaml:4:10: sip.cubes: expected a whole number, got number 2.5.",
    ],
  },
  "bad-string-for-number.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      '__fixtures__/bad-string-for-number.yaml:5:16: cube.hbm.pc_bw_gbs: expected a number, got the string "25.6 GB/s".',
      '__fixtures__/bad-string-for-number.yaml:6:24: cube.hbm.access_latency_ns: expected a number, got the string "40".',
    ],
  },
  "bad-override-missing-match.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      '__fixtures__/bad-override-missing-match.yaml:6:5: overrides[1].match: missing required key "match" (a string).',
      '__fixtures__/bad-override-missing-match.yaml:6:5: overrides[1].nodes: unknown key "nodes". Allowed keys here: impl, match, params.',
    ],
  },
  "bad-pe-component.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      '__fixtures__/bad-pe-component.yaml:5:5: pe_template.components.pe_gem: unknown key "pe_gem"; did you mean "pe_gemm"? Allowed keys here: pe_cpu, pe_dma, pe_fetch_store, pe_gemm, pe_math, pe_mmu, pe_scheduler, pe_tcm.',
      '__fixtures__/bad-pe-component.yaml:6:5: pe_template.components.pe_sfu: unknown key "pe_sfu". Allowed keys here: pe_cpu, pe_dma, pe_fetch_store, pe_gemm, pe_math, pe_mmu, pe_scheduler, pe_tcm.',
    ],
  },
  "bad-params-list.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-params-list.yaml:7:15: pe_template.components.pe_gemm.params: expected a mapping of name: value, got a list.",
    ],
  },
  "bad-empty.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-empty.yaml:1:1: <top level>: expected a mapping, got null (the file is empty).",
    ],
  },
  "bad-kind-mismatch.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      '__fixtures__/bad-kind-mismatch.yaml:5:22: pe_template.components.pe_gemm.kind: the string "pe_math" is not allowed; expected "pe_gemm". The kind is fixed by where the component sits; to change its timing model, set impl.',
    ],
  },
  "bad-several-problems.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-several-problems.yaml:4:9: system.sips: value must be >= 1, got number 0.",
      '__fixtures__/bad-several-problems.yaml:7:28: sip.host_link.lenght_mm: unknown key "lenght_mm"; did you mean "length_mm"? Allowed keys here: bw_gbs, latency_ns, length_mm.',
      "__fixtures__/bad-several-problems.yaml:12:16: cube.hbm.pc_bw_gbs: value must be >= 0.001, got number 0.",
      '__fixtures__/bad-several-problems.yaml:13:19: cube.noc.colums: unknown key "colums"; did you mean "cols"? Allowed keys here: cols, first_flit_ns, impl, kind, link, params, routing, rows.',
      '__fixtures__/bad-several-problems.yaml:15:12: overrides[0].match: length must be >= 1, got the string "".',
    ],
  },
  "bad-unclosed-quote.yaml": {
    code: "TOPOLOGY_YAML_SYNTAX",
    issues: [
      '__fixtures__/bad-unclosed-quote.yaml:2:14: <yaml>: unclosed " quote: the string that opens here runs to the end of the file. Close it with " (write \\" for a quote inside it).',
    ],
  },
  "bad-two-documents.yaml": {
    code: "TOPOLOGY_YAML_SYNTAX",
    issues: [
      '__fixtures__/bad-two-documents.yaml:3:1: <yaml>: topology files hold one YAML document; found a second at line 3. Remove this "---" and what follows it, or move the second topology to a file of its own.',
    ],
  },
  "bad-million-cubes.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-million-cubes.yaml:3:15: sip.cubes: 1000000 cubes per SIP do not fit the device address: its cube field is 6 bits, so a SIP has at most 64 cubes. Set sip.cubes to 64 or fewer.",
    ],
  },
  "bad-huge-noc.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-huge-noc.yaml:3:8: cube.noc: rows x cols = 1000 x 1000 = 1000000 PEs per cube do not fit the device address: each PE has a 256 MiB TCM window in its cube's 40-bit offset, so a cube has at most 4096 PEs. Make rows x cols at most 4096 (64 x 64, for example).",
    ],
  },
  "bad-address-limits.yaml": {
    code: "TOPOLOGY_INVALID",
    issues: [
      "__fixtures__/bad-address-limits.yaml:3:9: system.sips: 64 SIPs do not fit the device address: its SIP field is 5 bits, so a device has at most 32 SIPs. Set system.sips to 32 or fewer.",
      "__fixtures__/bad-address-limits.yaml:6:21: cube.hbm.capacity_bytes: 2199023255552 bytes do not fit the device address: offsets within a cube's HBM stack are 40 bits, so it holds at most 1099511627776 bytes (1 TiB). Set cube.hbm.capacity_bytes to 1099511627776 or less.",
    ],
  },
};

function validationErrorOf(name: string): YamlValidationError {
  const text = readFileSync(new URL(name, fixturesDir), "utf8");
  try {
    parseTopology(text, `__fixtures__/${name}`);
  } catch (error) {
    if (error instanceof YamlValidationError) return error;
    throw error;
  }
  throw new Error(`__fixtures__/${name} loaded without an error`);
}

describe("malformed topology fixtures", () => {
  it("every fixture file has its expected messages here, and every expectation its file", () => {
    const files = readdirSync(fixturesDir)
      .filter((name) => name.endsWith(".yaml"))
      .sort();
    expect(files).toEqual(Object.keys(expected).sort());
    expect(files.length).toBeGreaterThanOrEqual(15);
  });

  for (const [name, { code, issues }] of Object.entries(expected)) {
    it(`${name}: ${code}, every problem located`, () => {
      const error = validationErrorOf(name);
      expect(error.code).toBe(code);
      expect(error.issues.map(formatIssue)).toEqual(issues);
      // The error's message lists the same lines under a one-line header.
      expect(error.message.split("\n").slice(1)).toEqual(issues);
    });
  }
});
