import { existsSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BENCH_EXAMPLES } from "../src/ui/examples.js";

const repoRoot = new URL("../../../", import.meta.url).pathname;

// The examples menu offers every numbered Triton tutorial of examples/triton-tutorials, and each
// entry names a file of the repository.
describe("the playground's examples", () => {
  it("lists every numbered Triton tutorial, each an existing file", () => {
    const tutorials = readdirSync(`${repoRoot}examples/triton-tutorials`)
      .filter((name) => /^\d\d-.*\.ts$/.test(name))
      .map((name) => `examples/triton-tutorials/${name}`);
    const paths = BENCH_EXAMPLES.map((example) => example.path);
    expect(tutorials.filter((path) => !paths.includes(path))).toEqual([]);
    for (const path of paths) expect(existsSync(`${repoRoot}${path}`), path).toBe(true);
  });
});
