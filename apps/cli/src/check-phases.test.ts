import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RunResultsSchema } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { runKb } from "./test-support.js";

const fixture = (name: string) => fileURLToPath(new URL(`__fixtures__/${name}`, import.meta.url));
const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
const copyBench = fixture("phases-copy-bench.ts");
const raceBench = fixture("phases-race-bench.ts");

const run = (...argv: string[]) => runKb(["run", ...argv, "--topology", defaultYaml]);

/** The line of the race fixture that ends with `// racing load`. */
const racingLine =
  readFileSync(raceBench, "utf8")
    .split("\n")
    .findIndex((line) => line.trimEnd().endsWith("// racing load")) + 1;

describe("kb run --check-phases", () => {
  it("compares every load op by op, prints one line and exits 0 when the phases agree", async () => {
    const result = await run(copyBench, "--param", "pes=4", "--param", "tiles=5", "--check-phases");
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    // After the results, as the last line.
    expect(result.stdout.endsWith("\nphases agree: 20 loads compared op by op\n")).toBe(true);
    // Not a verification: that still says it did not run.
    expect(result.stdout).toMatch(/verification: not run/);
  });

  it("combines with --verify (one replay) and --json (phaseCheck)", async () => {
    const both = await run(copyBench, "--check-phases", "--verify");
    expect(both.code).toBe(0);
    expect(both.stdout).toMatch(/PASS/);
    expect(both.stdout).toMatch(/phases agree: 20 loads compared op by op\n$/);
    const json = await run(copyBench, "--check-phases", "--json");
    expect(json.code).toBe(0);
    const results = RunResultsSchema.parse(JSON.parse(json.stdout));
    expect(results.phaseCheck).toEqual({
      observed: 20,
      compared: 20,
      differing: 0,
      unmatched: 0,
      firstDifference: null,
    });
    expect(results.verification).toBeUndefined();
    const plain = RunResultsSchema.parse(JSON.parse((await run(copyBench, "--json")).stdout));
    expect(plain.phaseCheck).toBeUndefined();
  });

  it("exits 1 on two PEs racing, naming the op, its PE and kernel and the tl.load's site", async () => {
    const result = await run(raceBench, "--check-phases");
    expect(result.code).toBe(1);
    const line = result.stdout.split("\n").find((text) => text.startsWith("phases differ"));
    expect(line).toMatch(
      new RegExp(
        `^phases differ at op \\d+ \\(dma_read on sip0\\.cube0\\.pe1\\.pe_dma, t=[\\d.]+ ns\\): the tl\\.load at \\S*phases-race-bench\\.ts:${racingLine}:\\d+ of kernel racy on sip0\\.cube0\\.pe1 `,
      ),
    );
    expect(line).toContain("received [80 3f 00 00 00 40 00 00] at byte 2 of its tile in phase 1");
    expect(line).toContain("but phase 2 copied [00 00 00 00 00 00 00 00]");
    expect(result.stdout).toMatch(/a race\. Phase 1 makes a store visible when it is issued/);
    const json = await run(raceBench, "--check-phases", "--json");
    expect(json.code).toBe(1);
    const results = RunResultsSchema.parse(JSON.parse(json.stdout));
    expect(results.phaseCheck).toMatchObject({ observed: 2, compared: 2, differing: 1, unmatched: 0 });
    expect(results.phaseCheck?.firstDifference).toMatchObject({
      opName: "dma_read",
      componentId: "sip0.cube0.pe1.pe_dma",
      kernel: "racy",
      pe: "sip0.cube0.pe1",
      byteOffset: 2,
    });
  });

  it("is in kb run --help", async () => {
    const help = await runKb(["run", "--help"]);
    expect(help.stdout).toMatch(/--check-phases\s+run phase 2 and compare every value a kernel\s+observed/);
  });
});
