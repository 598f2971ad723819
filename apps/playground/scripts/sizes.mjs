#!/usr/bin/env node
// The playground's bundle sizes: every file of dist/ with its size and gzip size (level 9, what a
// static host typically serves), grouped by when the page loads it. Prints a table and writes
// sizes.json beside this package's README.
//
//   npx -y pnpm@10 build:playground && node apps/playground/scripts/sizes.mjs

import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));
const out = fileURLToPath(new URL("../sizes.json", import.meta.url));

const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else files.push(relative(dist, path));
  }
};
walk(dist);

// What index.html loads itself (the entry, its preloads, its CSS) is the first load.
const html = readFileSync(join(dist, "index.html"), "utf8");
const firstLoad = new Set([
  "index.html",
  ...[...html.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((m) => m[1]),
]);
const groupOf = (file) => {
  if (firstLoad.has(file)) return "first load";
  if (/\/worker-[^/]+\.js$/.test(file)) return "run worker (loaded at start, off the main thread)";
  if (/ts-worker|types-/.test(file)) return "TypeScript worker and @kb/* types (when the page is idle)";
  if (/results-view/.test(file)) return "results views (with the first run)";
  if (/chunk-|topology-check/.test(file))
    return "topology checker (first check; shared with the results views)";
  return "examples (when opened)";
};

const rows = files.sort().map((file) => {
  const bytes = readFileSync(join(dist, file));
  return { file, group: groupOf(file), bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
});
const ORDER = [
  "first load",
  "run worker (loaded at start, off the main thread)",
  "examples (when opened)",
  "topology checker (first check; shared with the results views)",
  "results views (with the first run)",
  "TypeScript worker and @kb/* types (when the page is idle)",
];
const groups = ORDER.filter((group) => rows.some((row) => row.group === group)).map((group) => {
  const members = rows.filter((row) => row.group === group);
  return {
    group,
    files: members.length,
    bytes: members.reduce((sum, row) => sum + row.bytes, 0),
    gzip: members.reduce((sum, row) => sum + row.gzip, 0),
  };
});

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const line = (cells) => `| ${cells.join(" | ")} |`;
console.log(line(["group", "files", "size", "gzip"]));
console.log(line(["---", "---:", "---:", "---:"]));
for (const group of groups) console.log(line([group.group, group.files, kb(group.bytes), kb(group.gzip)]));
console.log("");
console.log(line(["file", "group", "size", "gzip"]));
console.log(line(["---", "---", "---:", "---:"]));
for (const row of rows.filter((row) => row.bytes >= 16 * 1024 || row.group === "first load")) {
  console.log(line([row.file, row.group, kb(row.bytes), kb(row.gzip)]));
}
writeFileSync(out, `${JSON.stringify({ groups, files: rows }, null, 2)}\n`);
console.log(`\nwrote ${relative(process.cwd(), out)}`);
