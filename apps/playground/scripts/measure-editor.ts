// Measures the bench editor's lazy TypeScript support in headless Chromium: the gzip size of
// what the worker loads (the compiler chunk, the declarations) and the time from navigation until
// completion after `tl.` lists `load`, on a page holding only the editors (editor-harness/).
// Also checks, as a user would see them, the type-error marker of a misspelt `tl.lod(` and the
// topology editor's marker of a misspelt key.
//
// Usage (from apps/playground, packages built): npx tsx scripts/measure-editor.ts

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { chromiumLaunchOptions } from "@kb/tooling/node/chromium";
import { chromium } from "playwright-core";
import { build } from "vite";
import { gatherTypes } from "./gather-types.mjs";

const playground = fileURLToPath(new URL("..", import.meta.url));
const repo = join(playground, "../..");
const out = mkdtempSync(join(tmpdir(), "kb-editor-harness-"));

writeFileSync(join(playground, "src/editor/generated/types.json"), JSON.stringify(gatherTypes()));
await build({
  root: join(playground, "scripts/editor-harness"),
  configFile: false,
  base: "./",
  logLevel: "warn",
  build: { outDir: out, emptyOutDir: true },
  worker: { format: "es" },
});

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
const assets = readdirSync(join(out, "assets")).map((name) => {
  const bytes = readFileSync(join(out, "assets", name));
  return { name, raw: statSync(join(out, "assets", name)).size, gzip: gzipSync(bytes).length };
});
console.log("asset                                   raw       gzip (zlib level 6)");
for (const asset of assets.sort((a, b) => b.gzip - a.gzip)) {
  console.log(`${asset.name.padEnd(40)}${kib(asset.raw).padStart(9)}${kib(asset.gzip).padStart(11)}`);
}

const TYPES: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".json": "application/json",
  ".css": "text/css",
};
const server = createServer((request, response) => {
  const asked = join(out, decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname));
  try {
    const path = statSync(asked).isDirectory() ? join(asked, "index.html") : asked;
    const body = readFileSync(path);
    response.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream" });
    response.end(body);
  } catch {
    response.writeHead(404).end();
  }
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as { port: number }).port;

const browser = await chromium.launch({ ...chromiumLaunchOptions, args: [...chromiumLaunchOptions.args] });
try {
  const page = await browser.newPage();
  page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") console.error(`page console: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400) console.error(`page: ${response.status()} ${response.url()}`);
  });
  await page.goto(`http://127.0.0.1:${port}/`);
  const loadedMs = await page.evaluate(() => performance.now());
  const main = "benches/vector-add.ts";
  const files: Record<string, string> = {};
  for (const path of [
    main,
    ...["cube-parts", "params", "reference", "split", "blocked-matmul"].map((f) => `benches/lib/${f}.ts`),
  ]) {
    files[path] = readFileSync(join(repo, path), "utf8");
  }
  const yaml = readFileSync(join(repo, "topologies/default.yaml"), "utf8");
  await page.evaluate(([f, m, y]) => (window as any).harness.open(f, m, y), [files, main, yaml] as const);
  const dot = (files[main] as string).indexOf("tl.load(part.x") + "tl.".length;
  // Ask until the list comes (before the worker is ready the editor offers nothing).
  let completedMs = 0;
  for (;;) {
    await page.evaluate((p) => (window as any).harness.complete(p), dot);
    const label = page.locator(".cm-tooltip-autocomplete .cm-completionLabel", { hasText: /^load$/ });
    if (
      await label
        .count()
        .then((n) => n > 0)
        .catch(() => false)
    )
      break;
    try {
      await label.first().waitFor({ timeout: 250 });
      break;
    } catch {}
  }
  completedMs = await page.evaluate(() => performance.now());
  const readyMs = await page.evaluate(() => (window as any).harness.client.readyMs as number);
  console.log(`page loaded (navigation -> now): ${loadedMs.toFixed(0)} ms`);
  console.log(`TypeScript worker ready (start -> ready): ${readyMs.toFixed(0)} ms`);
  console.log(`completion after tl. lists load (navigation -> shown): ${completedMs.toFixed(0)} ms`);

  await page.keyboard.press("Escape");
  await page.evaluate(
    ([p]) => {
      const view = (window as any).harness.bench;
      view.dispatch({ changes: { from: p, to: p + 4, insert: "lod" } });
    },
    [dot] as const,
  );
  const marker = page.locator("#bench .cm-lintRange-error", { hasText: "lod" });
  await marker.first().waitFor({ timeout: 10_000 });
  console.log("bench marker: tl.lod( is marked as an error");
  await page.evaluate(() => {
    const view = (window as any).harness.topology;
    const at = view.state.doc.toString().indexOf("\n    channels: 8") + 5;
    view.dispatch({ changes: { from: at, to: at + "channels".length, insert: "chanels" } });
  });
  await page
    .locator("#topology .cm-lintRange-error", { hasText: "chanels" })
    .first()
    .waitFor({ timeout: 10_000 });
  console.log("topology marker: chanels is marked as an error");
} finally {
  await browser.close();
  server.close();
  rmSync(out, { recursive: true, force: true });
}
