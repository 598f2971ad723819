import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { runBrowserTests } from "@kb/tooling/node/chromium";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  RunDoneMessage,
  RunErrorMessage,
  RunProgressMessage,
  RunRequest,
  WorkerToPage,
} from "../src/protocol.js";
import { repoRoot, WorkerPage } from "./worker-page.js";

// The playground's run worker in real Chromium, as the page uses it: bundled for the browser,
// started as a module worker of a page served without COOP/COEP headers, given RunRequests with
// the repository's bench files as the editor's text. Its results JSON is `kb run --json`'s, byte
// for byte, but for the manifest's `node` (the runtime that ran it); its errors point at the
// line of the playground's files that caused them.

const CLI = `${repoRoot}apps/cli/dist/bin.js`;
const run = promisify(execFile);

/** `benches/<main>` and every non-test file of benches/lib, as the playground's files. */
function benchFiles(main: string): Record<string, string> {
  const files: Record<string, string> = { [main]: readFileSync(`${repoRoot}${main}`, "utf8") };
  const walk = (dir: string): void => {
    for (const entry of readdirSync(`${repoRoot}${dir}`, { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
        files[path] = readFileSync(`${repoRoot}${path}`, "utf8");
      }
    }
  };
  walk("benches/lib");
  return files;
}

const topology = {
  name: "topologies/default.yaml",
  text: readFileSync(`${repoRoot}topologies/default.yaml`, "utf8"),
};

function request(overrides: Partial<RunRequest> & Pick<RunRequest, "files" | "main">): RunRequest {
  return {
    type: "run",
    id: 1,
    topology,
    params: {},
    verify: false,
    limits: {},
    trace: false,
    opLog: false,
    ...overrides,
  };
}

/** A copy of vector-add whose kernel loads one row past its part (line `line` of the file). */
function outOfBoundsVectorAdd(): { files: Record<string, string>; line: number } {
  const files = benchFiles("benches/vector-add.ts");
  const source = files["benches/vector-add.ts"] as string;
  const lines = source.split("\n");
  const index = lines.findIndex((line) => /await tl\.load\(/.test(line));
  expect(index).toBeGreaterThanOrEqual(0);
  lines[index] = (lines[index] as string).replace(/tl\.load\(([^,]+),/, "tl.load($1 + 1e9,");
  return { files: { ...files, "benches/vector-add.ts": lines.join("\n") }, line: index + 1 };
}

describe.skipIf(!runBrowserTests)("the playground's run worker in headless Chromium", () => {
  const page = new WorkerPage();

  beforeAll(() => page.open(), 120_000);
  afterAll(() => page.close());

  it("runs vector-add with verify: the results JSON is kb run --verify --json's (node aside)", async () => {
    if (!existsSync(CLI)) throw new Error(`no ${CLI}: build first (npx -y pnpm@10 exec turbo run build)`);
    const { stdout } = await run(
      process.execPath,
      [CLI, "run", "benches/vector-add.ts", "--param", "n=65536", "--verify", "--json"],
      { cwd: repoRoot, maxBuffer: 64 * 2 ** 20 },
    );
    const messages = await page.run(
      request({
        files: benchFiles("benches/vector-add.ts"),
        main: "benches/vector-add.ts",
        params: { n: "65536" },
        verify: true,
      }),
    );
    const done = messages.at(-1) as WorkerToPage;
    expect(done.type).toBe("done");
    if (done.type !== "done") return;
    const node = JSON.parse(stdout) as { manifest: { digest: string } };
    const inWorker = JSON.parse(done.resultsJson) as { manifest: { node: string; digest: string } };
    expect(inWorker.manifest.node).toMatch(/^browser (Headless)?Chrome\/\d+/);
    expect(inWorker.manifest.digest).toBe(node.manifest.digest);
    // Everything else is the worker's text as kb run printed it.
    const withoutRuntime = (json: string) => json.replace(/^ {4}"node": "[^"]*",$/m, "");
    expect(withoutRuntime(done.resultsJson)).toBe(withoutRuntime(stdout));
    expect(done.passed).toBe(true);
    const stages = messages.filter((message) => message.type === "progress").map((message) => message.stage);
    expect(stages[0]).toBe("transpile");
    expect(stages).toContain("phase1");
    expect(stages).toContain("phase2");
  }, 120_000);

  it("answers the trace and the op log kb run --trace / --oplog write, when asked", async () => {
    if (!existsSync(CLI)) throw new Error(`no ${CLI}: build first (npx -y pnpm@10 exec turbo run build)`);
    const folder = mkdtempSync(join(tmpdir(), "kb-worker-files-"));
    try {
      const trace = join(folder, "trace.json");
      const opLog = join(folder, "ops.jsonl");
      await run(
        process.execPath,
        [
          CLI,
          "run",
          "benches/vector-add.ts",
          "--param",
          "n=4096",
          "--trace",
          trace,
          "--oplog",
          opLog,
          "--json",
        ],
        { cwd: repoRoot, maxBuffer: 64 * 2 ** 20 },
      );
      const files = benchFiles("benches/vector-add.ts");
      const messages = await page.run(
        request({ files, main: "benches/vector-add.ts", params: { n: "4096" }, trace: true, opLog: true }),
      );
      const done = messages.at(-1) as RunDoneMessage;
      expect(done.type).toBe("done");
      expect(done.opLog).toBe(readFileSync(opLog, "utf8"));
      expect(JSON.parse(done.trace as string)).toEqual(JSON.parse(readFileSync(trace, "utf8")));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it("posts progress at most ~10 times a second, and a terminated run stops", async () => {
    const CANCEL_MS = 6000;
    const files = benchFiles("benches/vector-add.ts");
    const messages = await page.run(
      // Small chunks: many DES events (long in phase 1, where progress is posted) for a host
      // program that fills its tensors in a second or two (about 15 s in kb run, against the
      // CANCEL_MS it is given: 2.5 s was too short for the fill on a loaded 2-core machine).
      request({ files, main: "benches/vector-add.ts", params: { n: String(1 << 24), chunk: "128" } }),
      CANCEL_MS,
    );
    expect(messages.at(-1)).toEqual({ type: "cancelled" });
    const phase1 = messages.filter(
      (message): message is RunProgressMessage => message.type === "progress" && message.stage === "phase1",
    );
    expect(phase1.length).toBeGreaterThan(1);
    // One every 100 ms at most, and the first at the build's end: unthrottled, the tap's every
    // 4096 trace records would be hundreds.
    expect(phase1.length).toBeLessThanOrEqual(CANCEL_MS / 100 + 1);
    const times = phase1.map((message) => message.simTimeNs as number);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // The page is free: a new worker runs a small bench at once.
    const next = await page.run(request({ files, main: "benches/vector-add.ts", params: { n: "4096" } }));
    expect(next.at(-1)?.type).toBe("done");
  }, 60_000);

  it("locates a kernel's out-of-bounds load at its line in the bench", async () => {
    const { files, line } = outOfBoundsVectorAdd();
    const messages = await page.run(request({ files, main: "benches/vector-add.ts", params: { n: "4096" } }));
    const error = messages.at(-1) as RunErrorMessage;
    expect(error.type).toBe("error");
    expect(error.code).toBe("MEMORY_ACCESS");
    expect(error.location).toMatchObject({ file: "benches/vector-add.ts", line });
    expect(error.message).toContain(`benches/vector-add.ts:${line}:`);
  }, 60_000);

  it("locates a kernel's own throw (KERNEL_FAILED) and the host program's (RUNTIME_INVALID)", async () => {
    const cases: [RegExp, string, string][] = [
      [/const n = Math\.min/, 'if (done === 0) throw new Error("kernel bug");', "KERNEL_FAILED"],
      [/const grid = gridOf/, 'throw new Error("host bug");', "RUNTIME_INVALID"],
    ];
    for (const [after, statement, code] of cases) {
      const files = benchFiles("benches/vector-add.ts");
      const lines = (files["benches/vector-add.ts"] as string).split("\n");
      const index = lines.findIndex((line) => after.test(line)) + 1;
      lines.splice(index, 0, `    ${statement}`);
      files["benches/vector-add.ts"] = lines.join("\n");
      const messages = await page.run(
        request({ files, main: "benches/vector-add.ts", params: { n: "4096" } }),
      );
      expect(messages.at(-1)).toMatchObject({
        type: "error",
        code,
        // V8 places an Error's frame at its `new`.
        location: {
          file: "benches/vector-add.ts",
          line: index + 1,
          column: statement.indexOf("new Error") + 5,
        },
      });
    }
  }, 60_000);

  it("locates a syntax error (TRANSPILE), running nothing", async () => {
    const files = benchFiles("benches/vector-add.ts");
    files["benches/lib/split.ts"] = `${files["benches/lib/split.ts"]}\nconst broken = (;\n`;
    const line = (files["benches/lib/split.ts"] as string).split("\n").length - 1;
    const messages = await page.run(request({ files, main: "benches/vector-add.ts" }));
    expect(messages.map((message) => message.type)).toEqual(["progress", "error"]);
    expect(messages.at(-1)).toMatchObject({
      code: "TRANSPILE",
      message: `benches/lib/split.ts:${line}:17: syntax error: Unexpected token`,
      location: { file: "benches/lib/split.ts", line, column: 17 },
    });
  }, 60_000);

  it("names an unknown import's line and the modules there are", async () => {
    const files = benchFiles("benches/vector-add.ts");
    files["benches/vector-add.ts"] =
      `import fs from "node:fs";\n${files["benches/vector-add.ts"]}\nvoid fs;\n`;
    const messages = await page.run(request({ files, main: "benches/vector-add.ts" }));
    const error = messages.at(-1) as RunErrorMessage;
    expect(error).toMatchObject({
      code: "TRANSPILE",
      location: { file: "benches/vector-add.ts", line: 1, column: 16 },
    });
    expect(error.message).toContain('imports "node:fs"');
    expect(error.message).toContain("@kb/runtime, @kb/spec, @kb/tensor, @kb/tl, @kb/topology, zod");
  }, 60_000);

  it("stops a run at maxEvents with RUN_LIMIT", async () => {
    const messages = await page.run(
      request({
        files: benchFiles("benches/vector-add.ts"),
        main: "benches/vector-add.ts",
        limits: { maxEvents: 1000 },
      }),
    );
    expect(messages.at(-1)).toMatchObject({ type: "error", code: "RUN_LIMIT" });
    expect((messages.at(-1) as RunErrorMessage).message).toContain("limit of 1,000 DES events");
  }, 60_000);

  it("locates a topology error at the topology's line", async () => {
    const text = topology.text.replace(/^name: .*$/m, "$&\nbogus_key: 1");
    const line = text.split("\n").findIndex((row) => row.startsWith("bogus_key")) + 1;
    const messages = await page.run(
      request({
        files: benchFiles("benches/vector-add.ts"),
        main: "benches/vector-add.ts",
        topology: { name: "my.yaml", text },
      }),
    );
    expect(messages.at(-1)).toMatchObject({
      type: "error",
      code: "TOPOLOGY_INVALID",
      location: { file: "my.yaml", line, column: 1 },
    });
  }, 60_000);
});
