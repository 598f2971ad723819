import { readFileSync } from "node:fs";
import { RunResultsSchema } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { runKb } from "./test-support.js";

// The Results section of packages/runtime/README.md quotes `kb run vector-add --json`: its
// `launches` and `hostCopies` must be what kb prints today.
describe("packages/runtime/README.md, Results", () => {
  it("quotes the launches and host copies of kb run vector-add --json as kb prints them", async () => {
    const readme = readFileSync(new URL("../../../packages/runtime/README.md", import.meta.url), "utf8");
    const quoted = /## Results\n[\s\S]*?```json\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(quoted).toBeDefined();
    const run = await runKb(["run", "vector-add", "--json"]);
    expect(run.code).toBe(0);
    const results = RunResultsSchema.parse(JSON.parse(run.stdout));
    expect(JSON.parse(quoted ?? "null")).toEqual({
      launches: results.launches,
      hostCopies: results.hostCopies,
    });
    // The README's prose: the kernel at 788 GB/s (96.2 % of 819.2 GB/s, 1.04 x its roofline).
    const launch = results.launches[0];
    expect((launch?.achieved?.hbmBytesPerS ?? 0) / 1e9).toBeCloseTo(788.3, 0);
    expect(launch?.achieved?.hbmFraction).toBeCloseTo(0.962, 3);
    expect((launch?.durationNs ?? 0) / (launch?.rooflineNs ?? 1)).toBeCloseTo(1.04, 2);
  });
});
