import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RunResultsSchema } from "@kb/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { runKb } from "./test-support.js";

const bench = fileURLToPath(new URL("__fixtures__/by-line-bench.ts", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "kb-cli-by-line-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** default.yaml with the HBM interleaved by 64 KiB: each 32 KiB input lies in one pseudo-channel. */
const topology = join(scratch, "interleave-64k.yaml");
writeFileSync(
  topology,
  readFileSync(fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url)), "utf8").replace(
    "interleave_bytes: 256",
    "interleave_bytes: 65536",
  ),
);

const run = (...argv: string[]) => runKb(["run", bench, "--topology", topology, ...argv]);
const file = "apps/cli/src/__fixtures__/by-line-bench.ts";

describe("kb run --by-line", () => {
  it("lists the kernel's lines by their share of the programs' time, as the latency formulas give it", async () => {
    const { code, stdout, stderr } = await run("--by-line");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const section = stdout.slice(stdout.indexOf("by line: twoLoadsAndADot"));
    // By hand (docs/latency-model.md section 7): each load is dispatch 2 + a TLB miss 50 + the
    // 32 KiB read from one PC 1322.06 + its PE_TCM write 65 = 1439.06 ns; the dot is dispatch 2 +
    // fetch 129 + the 128^3 f16 tile on pe_gemm_v1 2056 + the f32 store 129 = 2316 ns. Shares of
    // the 5194.12 ns: 2316 / 5194.12 = 44.6%, 1439.06 / 5194.12 = 27.7% each.
    expect(section.split("\n").slice(0, 5)).toEqual([
      "by line: twoLoadsAndADot (share of its programs' time, 5.194 µs summed over programs, spent waiting at each line's tl calls)",
      "  share  line                                          calls       wait           engine time                              bytes",
      `  44.6%  ${file}:9  tl.dot x1   wait 2.316 µs  pe_fetch_store 258 ns, pe_gemm 2.056 µs  -`,
      `  27.7%  ${file}:7  tl.load x1  wait 1.439 µs  pe_dma 1.437 µs                          32 KiB`,
      `  27.7%  ${file}:8  tl.load x1  wait 1.439 µs  pe_dma 1.437 µs                          32 KiB`,
    ]);
  });

  it("--by-line N shows the top N and says how many more there are", async () => {
    const { stdout } = await run("--by-line", "1");
    const section = stdout.slice(stdout.indexOf("by line: "));
    expect(section).toContain(`44.6%  ${file}:9`);
    expect(section).not.toContain(`${file}:7`);
    expect(section).toContain("... and 2 more lines (--by-line 3 shows all)");
  });

  it("--json has every line in launches[].sites", async () => {
    const { stdout } = await run("--json");
    const results = RunResultsSchema.parse(JSON.parse(stdout));
    expect(results.launches[0]?.sites?.lines.map((row) => row.line)).toEqual([
      `${file}:9`,
      `${file}:7`,
      `${file}:8`,
    ]);
  });

  it("--by-line 0 is a usage error (exit 1, no stack)", async () => {
    const { code, stderr } = await run("--by-line", "0");
    expect(code).toBe(1);
    expect(stderr).toContain('--by-line needs a whole number >= 1, such as 5; got "0".');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("--help describes it", async () => {
    const { stdout } = await runKb(["run", "--help"]);
    expect(stdout).toContain("--by-line [n]");
    expect(stdout).toContain("kb run attention --by-line");
  });
});
