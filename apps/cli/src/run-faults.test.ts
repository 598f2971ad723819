import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// kb run on a bench or params that fail: exit 1 with a located message, never exit 2, no stack.

const fixture = (name: string) => fileURLToPath(new URL(`__fixtures__/${name}`, import.meta.url));

function expectUserError(run: { code: number; stderr: string }, ...texts: string[]): void {
  expect(run.code).toBe(1);
  expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
  for (const text of texts) expect(run.stderr).toContain(text);
}

describe("fault: a bench's reference that throws", () => {
  it("is exit 1 naming the bench, the message and where in the bench file it threw", async () => {
    const bench = fixture("reference-throws-bench.ts");
    expectUserError(
      await kb("run", bench, "--verify"),
      `reference of reference-throws threw: no reference for this shape at ${bench}:23:19`,
    );
  });
});

describe("fault: bench params that ask for absurd sizes", () => {
  it("--param M=1e9 (gemm) is refused before allocating, naming the param, the bytes and the host limit", async () => {
    expectUserError(
      await kb("run", "gemm", "--param", "M=1e9"),
      "random([1000000000, 1024], f16)",
      "2048000000000 bytes",
      "a host tensor may have at most 1073741824 bytes (1 GiB)",
      "from the params M=1000000000",
    );
  });

  it("--param n=1e10 (vector-add) is refused the same way", async () => {
    expectUserError(
      await kb("run", "vector-add", "--param", "n=1e10"),
      "[TENSOR_INVALID]",
      "20000000000 bytes",
      "from the params n=10000000000",
    );
  });
});
