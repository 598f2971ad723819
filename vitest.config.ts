import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

// One project per workspace package that has tests; @kb/* imports resolve to sources so the
// suite needs no build.
const projectDirs = ["packages", "apps", "examples"].flatMap((group) =>
  existsSync(`${root}${group}`)
    ? readdirSync(`${root}${group}`)
        .filter((name) => ["src", "test"].some((dir) => existsSync(`${root}${group}/${name}/${dir}`)))
        .map((name) => `${group}/${name}`)
    : [],
);

// The bench workloads carry their own correctness tests (the spec's end times and checksums).
projectDirs.push("benches");

export default defineConfig({
  resolve: {
    alias: [
      // The page's modules the CLI shares (wire types, number formats) live in apps/web, and so
      // does kb web's server (apps/web/src/server, Node only).
      { find: /^@kb\/web-ui\/server$/, replacement: `${root}apps/web/src/server/index.ts` },
      { find: /^@kb\/web-ui\/([a-z-]+)$/, replacement: `${root}apps/web/src/$1.ts` },
      { find: /^@kb\/([a-z-]+)$/, replacement: `${root}packages/$1/src/index.ts` },
      { find: /^@kb\/([a-z-]+)\/([a-z-]+)$/, replacement: `${root}packages/$1/src/$2.ts` },
    ],
  },
  test: {
    projects: projectDirs.map((dir) => ({
      extends: true,
      test: {
        name: dir.split("/")[1] ?? dir,
        root: `${root}${dir}`,
        include: ["src/**/*.test.ts", "test/**/*.test.ts", "perf/**/*.test.ts"],
      },
    })),
  },
});
