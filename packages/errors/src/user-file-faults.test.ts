import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isKbError } from "./index.js";
import { readUserFile, readUserText, userFileHandle } from "./node.js";

const dir = mkdtempSync(join(tmpdir(), "kb-user-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const options = { what: "topology file", maxBytes: 1024, code: "TOPOLOGY_NOT_FOUND" } as const;

function refusal(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    expect(isKbError(error, "TOPOLOGY_NOT_FOUND")).toBe(true);
    return (error as Error).message;
  }
  throw new Error("expected a refusal");
}

describe("fault: user files that are not small regular files", () => {
  it("refuses a FIFO at once instead of blocking on it", () => {
    const fifo = join(dir, "pipe.yaml");
    execFileSync("mkfifo", [fifo]);
    const message = refusal(() => readUserText(fifo, options));
    expect(message).toContain(fifo);
    expect(message).toContain("a FIFO (named pipe), not a regular file");
  });

  it("refuses a device such as /dev/zero instead of reading it for ever", () => {
    expect(refusal(() => readUserText("/dev/zero", options))).toContain(
      "a character device, not a regular file",
    );
  });

  it("refuses a directory", () => {
    const folder = join(dir, "folder.yaml");
    mkdirSync(folder);
    expect(refusal(() => readUserText(folder, options))).toContain("a folder, not a regular file");
  });

  it("refuses a file above the cap, saying its size and the cap", () => {
    const big = join(dir, "big.yaml");
    writeFileSync(big, "x".repeat(1025));
    const message = refusal(() => readUserFile(big, options));
    expect(message).toContain("1025 bytes");
    expect(message).toContain("at most 1024 bytes");
  });

  it("says a missing file is missing", () => {
    expect(refusal(() => readUserText(join(dir, "none.yaml"), options))).toContain(
      "cannot read the topology file",
    );
  });

  it("reads a regular file within the cap", async () => {
    const file = join(dir, "ok.yaml");
    writeFileSync(file, "name: ok\n");
    expect(readUserText(file, options)).toBe("name: ok\n");
    const handle = await userFileHandle(file, { ...options, maxBytes: Number.POSITIVE_INFINITY });
    await handle.close();
  });

  it("refuses a FIFO for streaming too", async () => {
    const fifo = join(dir, "pipe.jsonl");
    execFileSync("mkfifo", [fifo]);
    await expect(userFileHandle(fifo, options)).rejects.toThrow("not a regular file");
  });
});
