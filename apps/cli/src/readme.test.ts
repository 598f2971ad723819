import { fileURLToPath } from "node:url";
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
