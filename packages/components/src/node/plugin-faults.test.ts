import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadPlugins } from "../node.js";

const dir = mkdtempSync(join(tmpdir(), "kb-plugin-faults-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fault: a plug-in package.json that is not a regular file", () => {
  it("is refused at once instead of blocking on it", async () => {
    const plugin = join(dir, "kb-plugin-pipe");
    mkdirSync(plugin);
    execFileSync("mkfifo", [join(plugin, "package.json")]);
    await expect(loadPlugins([plugin], { from: dir })).rejects.toThrow(
      /\[COMPONENT_PLUGIN_NOT_FOUND\].*plug-in package\.json .* is a FIFO \(named pipe\), not a regular file/,
    );
  });
});
