import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runKb } from "./test-support.js";

const planBench = fileURLToPath(new URL("__fixtures__/plan-bench.ts", import.meta.url));
const clearLine = "\r\x1b[K";

describe("kb run: the host program's plan (sim.progress)", () => {
  it("shows its position and label on the terminal's progress line", async () => {
    const tty = await runKb(["run", planBench], { isTTY: true, columns: 200 });
    expect(tty.code).toBe(0);
    expect(tty.stderr).toContain(`${clearLine}plan: running, copy 1 · 0%`);
    expect(tty.stderr).toContain(`${clearLine}plan: running, copy 2 · 50%`);
    expect(tty.stderr).toContain(`${clearLine}plan: running, done · 100%`);
    expect(tty.stderr.endsWith(clearLine)).toBe(true);
    expect(tty.stdout).not.toContain("of 2");
  });

  it("prints a plain line per step on a pipe (no ETA), nothing with --json on a terminal", async () => {
    const piped = await runKb(["run", planBench]);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe("plan: copy 1 · 0%\nplan: copy 2 · 50%\nplan: done · 100%\n");
    expect(piped.stdout).not.toContain("of 2");
    const json = await runKb(["run", planBench, "--json"], { isTTY: true, columns: 200 });
    expect(json.code).toBe(0);
    expect(json.stderr).toBe("");
    expect(() => JSON.parse(json.stdout)).not.toThrow();
  });

  it("a position outside the plan is a located RUNTIME_INVALID, exit 1, no stack", async () => {
    const bad = await runKb(["run", planBench, "--param", "total=1"]);
    expect(bad.code).toBe(1);
    // The steps made before it, as plain lines (a pipe), then the error.
    expect(bad.stderr).toMatch(
      /^plan: copy 1 · 0%\nplan: copy 2 · 100%\n\[RUNTIME_INVALID\] .*plan-bench\.ts:\d+:\d+: sim\.progress\(2, 1, "done"\) is not a position in a plan: pass the steps done \(0 to total\)/,
    );
    expect(bad.stderr).not.toContain("    at ");
  });
});
