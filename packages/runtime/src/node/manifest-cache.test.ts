import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ResultsCache } from "./manifest-cache.js";

const DIGEST = "a".repeat(64);

describe("ResultsCache.get", () => {
  it("says which field of a damaged entry's results breaks the schema", () => {
    const dir = mkdtempSync(join(tmpdir(), "kb-cache-"));
    const results = { schema: "kb.results/1", bench: null, params: {}, topology: "t", simTimeNs: "12" };
    const sha256 = createHash("sha256")
      .update(`${JSON.stringify(results, null, 2)}\n`)
      .digest("hex");
    writeFileSync(join(dir, `${DIGEST}.json`), JSON.stringify({ sha256, results }));
    const found = new ResultsCache(dir).get(DIGEST);
    expect(found.status).toBe("damaged");
    expect(found.status === "damaged" ? found.reason : "").toMatch(
      /^its results do not match the results schema \(simTimeNs: .*number.*\)$/,
    );
  });
});
