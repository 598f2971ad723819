import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readOpLog, streamOpLog } from "./node.js";

const dir = mkdtempSync(join(tmpdir(), "kb-oplog-faults-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fault: op logs that are not regular files", () => {
  it("readOpLog refuses /dev/zero instead of reading it to the end of memory", () => {
    expect(() => readOpLog("/dev/zero")).toThrow(/\[OPLOG_MISUSE\].*a character device, not a regular file/);
  });

  it("streamOpLog refuses a FIFO instead of blocking on it", async () => {
    const fifo = join(dir, "log.jsonl");
    execFileSync("mkfifo", [fifo]);
    await expect(async () => {
      for await (const _ of streamOpLog(fifo)) break;
    }).rejects.toThrow(/\[OPLOG_MISUSE\].*a FIFO \(named pipe\), not a regular file/);
  });
});
