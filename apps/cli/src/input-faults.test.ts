import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// Hostile or unlucky inputs of kb run / topology / sweep: each is exit 1 with a located message,
// never a hang, never exit 2, never a stack.

const dir = mkdtempSync(join(tmpdir(), "kb-input-faults-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fifo(name: string): string {
  const path = join(dir, name);
  execFileSync("mkfifo", [path]);
  return path;
}

function expectUserError(run: { code: number; stderr: string }, ...texts: string[]): void {
  expect(run.code).toBe(1);
  expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
  for (const text of texts) expect(run.stderr).toContain(text);
}

describe("fault: inputs that are not small regular files", () => {
  it("kb topology validate refuses a FIFO instead of blocking for ever", async () => {
    const path = fifo("pipe.yaml");
    expectUserError(await kb("topology", "validate", path), path, "a FIFO (named pipe), not a regular file");
  });

  it("kb run refuses /dev/zero as a topology instead of reading it to the end of memory", async () => {
    expectUserError(
      await kb("run", "vector-add", "--topology", "/dev/zero"),
      "[TOPOLOGY_NOT_FOUND] /dev/zero: the topology file /dev/zero is a character device",
    );
  });

  it("kb topology show refuses a topology file above 4 MiB, saying its size and the cap", async () => {
    const path = join(dir, "huge.yaml");
    writeFileSync(path, `name: huge\n# ${"x".repeat(4 * 2 ** 20)}\n`);
    expectUserError(await kb("topology", "show", path), "4194318 bytes", "at most 4194304 bytes");
  });

  it("kb sweep refuses a FIFO as its spec", async () => {
    const path = fifo("spec.yaml");
    expectUserError(await kb("sweep", path, "--dry-run"), "[SWEEP_INVALID]", "not a regular file");
  });
});

describe("fault: physical numbers out of range", () => {
  it("kb topology validate refuses a 1e300 ns latency at file:line:col (it was accepted, then the report crashed)", async () => {
    const path = join(dir, "latency.yaml");
    writeFileSync(path, "name: big\ncube:\n  links:\n    xbar_to_hbm: { bw_gbs: 64, latency_ns: 1e300 }\n");
    expectUserError(
      await kb("topology", "validate", path),
      `${path}:4:44: cube.links.xbar_to_hbm.latency_ns: value must be <= 1000000000, got number 1e+300.`,
    );
  });
});
