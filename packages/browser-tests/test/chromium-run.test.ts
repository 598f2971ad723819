import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RunManifest } from "@kb/runtime";
import {
  CHROMIUM,
  chromiumLaunchOptions,
  INSTALL_CHROMIUM,
  runBrowserTests,
} from "@kb/tooling/node/chromium";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleForBrowser, formatChain, repoRoot } from "./browser-bundle.js";
import type { PageRun } from "./page-run.js";

// DESIGN §9, measured: the core packages bundled for the browser run a bench with verification in
// headless Chromium through runBenchCore, and the results JSON is byte for byte what
// `kb run --verify --json` prints on Node, the manifest's digest included; only the manifest's
// `node` (the runtime that ran it) differs. The page is served from a temporary folder on a free
// 127.0.0.1 port with no COOP/COEP headers, so it is not cross-origin isolated: the WASM GEMM
// must run without shared memory.
// CI (.ci/run) installs Debian's Chromium; elsewhere, without it, the test skips with a message.

if (!runBrowserTests) {
  console.warn(
    `browser run test skipped: no Chromium at ${CHROMIUM}. Install Debian's with: ${INSTALL_CHROMIUM} (CI installs it and runs the test).`,
  );
}

const CLI = `${repoRoot}apps/cli/dist/bin.js`;
const run = promisify(execFile);

/** `benches/<bench>.ts` and every file of benches/lib, text by path, as the playground holds them. */
function benchAndLibrary(bench: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const path of [
    `benches/${bench}.ts`,
    ...readdirSync(`${repoRoot}benches/lib`, { recursive: true, encoding: "utf8" }).map(
      (each) => `benches/lib/${each.split("\\").join("/")}`,
    ),
  ]) {
    if (path.endsWith(".ts")) files[path] = readFileSync(`${repoRoot}${path}`, "utf8");
  }
  return files;
}

/** `kb run <bench> --param ... --verify --json` on Node: its stdout. */
async function kbRunJson(bench: string, params: Record<string, string>): Promise<string> {
  if (!existsSync(CLI)) throw new Error(`no ${CLI}: build first (npx -y pnpm@10 exec turbo run build)`);
  const args = Object.entries(params).flatMap(([key, value]) => ["--param", `${key}=${value}`]);
  const { stdout } = await run(process.execPath, [CLI, "run", bench, ...args, "--verify", "--json"], {
    cwd: repoRoot,
    maxBuffer: 64 * 2 ** 20,
  });
  return stdout;
}

describe.skipIf(!runBrowserTests)("benches with verification in headless Chromium", () => {
  let folder = "";
  let server: Server | null = null;
  let browser: Browser | null = null;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const bundle = await bundleForBrowser("packages/browser-tests/test/page-run.ts", { minify: true });
    expect(bundle.nodeImports.map(formatChain)).toEqual([]);
    folder = mkdtempSync(join(tmpdir(), "kb-browser-"));
    writeFileSync(join(folder, "page.js"), bundle.code);
    writeFileSync(
      join(folder, "index.html"),
      '<!doctype html><meta charset="utf-8"><title>kb</title><script type="module" src="page.js"></script>\n',
    );
    const files: Record<string, string> = { "/": "index.html", "/page.js": "page.js" };
    server = createServer((request, response) => {
      const file = files[request.url ?? ""];
      if (file === undefined) {
        response.writeHead(404).end();
        return;
      }
      const type = file.endsWith(".js") ? "text/javascript" : "text/html";
      response
        .writeHead(200, { "content-type": `${type}; charset=utf-8` })
        .end(readFileSync(join(folder, file)));
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    browser = await chromium.launch({ ...chromiumLaunchOptions, args: [...chromiumLaunchOptions.args] });
    page = await browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => "kbRunVerified" in globalThis);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server === null ? resolve() : server.close(() => resolve())));
    if (folder !== "") rmSync(folder, { recursive: true, force: true });
  });

  const topologyText = readFileSync(`${repoRoot}topologies/default.yaml`, "utf8");
  const cases: [string, Record<string, string>][] = [
    ["vector-add", { n: "1048576" }],
    ["vector-add", { n: "4194304" }],
    ["gemm", { M: "256", N: "256", K: "256", dtype: "f32" }],
  ];

  it("the page is not cross-origin isolated (no shared memory)", async () => {
    expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(false);
  });

  for (const [bench, params] of cases) {
    const shown = Object.entries(params)
      .map(([key, value]) => `${key}=${value}`)
      .join(" ");
    it(`${bench} ${shown}: the page's results JSON is kb run --verify --json's, byte for byte, the manifest's digest included`, async () => {
      const node = await kbRunJson(bench, params);
      const nodeResults = JSON.parse(node) as { manifest: RunManifest; verification?: { pass: boolean } };
      expect(nodeResults.verification?.pass).toBe(true);
      const pageRun: PageRun = {
        bench,
        topologyText,
        topologyName: "topologies/default.yaml",
        params,
        files: benchAndLibrary(bench),
        // The versions the CLI records: the page's bundle has no @kb/cli to read them from.
        packages: nodeResults.manifest.packages,
      };
      const inPage = await page.evaluate(
        (run) =>
          (globalThis as unknown as { kbRunVerified: (run: PageRun) => Promise<string> }).kbRunVerified(run),
        pageRun,
      );
      expect(pageErrors).toEqual([]);
      const pageResults = JSON.parse(inPage) as { manifest: RunManifest };
      // The run's identity is the CLI's: the same topology, bench files, params and options give
      // the same digest on Node and in the page. Only the runtime that ran it differs.
      expect(pageResults.manifest.digest).toBe(nodeResults.manifest.digest);
      expect(pageResults.manifest.node).toMatch(/^browser (Headless)?Chrome\/\d+/);
      // Per-line attribution needs the kernel in a file of its own (tl skips the frames of its own
      // file): this page bundles the benches with @kb/tl into one page.js, so its launches name
      // no line (docs/reports.md, By line); kb run's do. The playground, which evaluates each file
      // under its own name, has them (its own e2e test compares them with kb run's).
      const launchesOf = (json: string) =>
        (JSON.parse(json) as { launches: { sites?: { lines: unknown[] } }[] }).launches;
      expect(launchesOf(inPage).map((launch) => launch.sites?.lines.length)).toEqual(
        launchesOf(inPage).map(() => 0),
      );
      expect(launchesOf(node).every((launch) => (launch.sites?.lines.length ?? 0) > 0)).toBe(true);
      const withoutLines = (json: string) => {
        const results = JSON.parse(json) as { launches: { sites?: { lines: unknown[] } }[] };
        for (const launch of results.launches) if (launch.sites !== undefined) launch.sites.lines = [];
        return `${JSON.stringify(results, null, 2)}\n`;
      };
      // Everything else is the page's text as kb run printed it.
      const withoutRuntime = (json: string) => withoutLines(json).replace(/^ {4}"node": "[^"]*",$/m, "");
      expect(withoutRuntime(inPage)).toBe(withoutRuntime(node));
    }, 60_000);
  }
});
