import { describe, expect, it } from "vitest";
import { loadCclConfig } from "./node.js";

describe("fault: a ccl.yaml that is not a regular file", () => {
  it("is refused at once instead of being read to the end of memory", async () => {
    await expect(loadCclConfig("/dev/zero")).rejects.toThrow(
      /\[RUNTIME_INVALID\].*the ccl config \/dev\/zero is a character device, not a regular file/,
    );
  });
});
