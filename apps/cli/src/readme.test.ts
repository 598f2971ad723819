import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RunResultsSchema } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { runCli } from "./index.js";

// The "Calling it from code" example of the README (with an absolute path: tests may run from
// any directory).
describe("README example", () => {
  it("validates default.yaml and returns 0", async () => {
    const file = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
    let out = "";
    const code = await runCli(["topology", "validate", file], {
      stdout: { write: (text: string) => (out += text) },
      stderr: process.stderr,
    });
    expect(code).toBe(0);
    expect(out).toBe(`OK ${file}: default: 1 SIP(s), 2 cube(s), 16 PE(s), 229 nodes, 314 links\n`);
  });
});

// The bench of the "kb run" section, saved as my-bench.ts in an empty directory (no node_modules)
// and run from there as the README says.
describe("README kb run example", () => {
  it("my-bench.ts runs with kb run ./my-bench.ts", async () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const source = /```ts\n(\/\/ my-bench\.ts\n[\s\S]*?)```/.exec(readme)?.[1];
    expect(source).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), "kb-cli-readme-"));
    const previous = process.cwd();
    try {
      writeFileSync(join(dir, "my-bench.ts"), source ?? "");
      process.chdir(dir);
      let out = "";
      let err = "";
      const code = await runCli(["run", "./my-bench.ts", "--param", "rows=128", "--json"], {
        stdout: { write: (text: string) => (out += text) },
        stderr: { write: (text: string) => (err += text) },
      });
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(RunResultsSchema.parse(JSON.parse(out))).toMatchObject({
        bench: "copy",
        topology: "default",
        params: { rows: 128, cols: 64 },
      });
    } finally {
      process.chdir(previous);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
