import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// Issue 33 point 5: kb run prints the warnings kb topology validate gives for the same file.

const root = mkdtempSync(join(tmpdir(), "kb-run-warnings-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const copyBench = fileURLToPath(new URL("__fixtures__/copy-bench.ts", import.meta.url));

describe("fault: kb run hides the topology's warnings", () => {
  it("prints validate's `warning:` lines on stderr before the run, and still runs (exit 0)", async () => {
    const file = join(root, "odd.yaml");
    writeFileSync(
      file,
      "name: odd\nsip:\n  cubes: 1\n  ucie: { pattern: ring, bw_gbs: 256 }\ncube:\n  hbm: { interleave_bytes: 96 }\n",
    );
    const validate = await kb("topology", "validate", file);
    const warnings = validate.stderr.split("\n").filter((line) => line.startsWith("warning: "));
    expect(warnings).toHaveLength(2);
    const run = await kb("run", copyBench, "--topology", file, "--json");
    expect(run.code).toBe(0);
    expect(run.stderr.split("\n").slice(0, 2)).toEqual(warnings);
    expect(JSON.parse(run.stdout)).toHaveProperty("simTimeNs");
  }, 60_000);

  it("prints nothing for a topology without warnings", async () => {
    const run = await kb("run", copyBench, "--json");
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
  }, 60_000);
});
