import { describe, expect, it } from "vitest";
import { nothingComparedWhy, previousOfSameBench } from "../src/ui/compare.js";

const run = (n: number, bench: string) => ({ label: `run ${n} · ${bench}`, results: { bench } });

describe("the run the playground compares the latest with", () => {
  it("is the last earlier run of the same bench, never another bench's", () => {
    expect(previousOfSameBench([run(1, "vector-add"), run(2, "gemm")])).toBeNull();
    expect(previousOfSameBench([run(1, "vector-add"), run(2, "gemm"), run(3, "vector-add")])?.label).toBe(
      "run 1 · vector-add",
    );
    expect(previousOfSameBench([run(1, "gemm"), run(2, "gemm"), run(3, "gemm")])?.label).toBe("run 2 · gemm");
    expect(previousOfSameBench([])).toBeNull();
  });

  it("says why nothing is compared when the bench has no earlier run", () => {
    expect(nothingComparedWhy([run(1, "vector-add"), run(2, "gemm")], "previous")).toBe(
      "No earlier run of gemm to compare with: run it again, or pin a run to compare others with it.",
    );
    expect(nothingComparedWhy([run(1, "gemm"), run(2, "gemm")], "previous")).toBeNull();
    expect(nothingComparedWhy([run(1, "vector-add"), run(2, "gemm")], "none")).toBeNull();
  });
});
