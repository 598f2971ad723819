import { BENCH_PACKAGES, MANIFEST_PACKAGES } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { BUNDLED_MODULES, KB_PACKAGE_VERSIONS } from "../src/worker/bundled-modules.js";

// A playground run must have the digest `kb run` gives the same bench, topology and params, and a
// bench must import in the page what it imports under `kb run`: both follow @kb/runtime's lists.

describe("the worker's bundled modules", () => {
  it("records the versions of exactly the packages kb run's manifest records", () => {
    expect(Object.keys(KB_PACKAGE_VERSIONS)).toEqual([...MANIFEST_PACKAGES].sort());
  });

  it("hands a bench every package kb run hands it but @kb/data-executor (phase 2 stays in the worker)", () => {
    const bundled = Object.keys(BUNDLED_MODULES).sort();
    expect(bundled).toEqual(BENCH_PACKAGES.filter((name) => name !== "@kb/data-executor").sort());
    expect(bundled).toContain("@kb/spec");
  });
});
