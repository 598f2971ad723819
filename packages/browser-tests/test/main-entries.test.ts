import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bundleForBrowser, formatChain, repoRoot } from "./browser-bundle.js";

// DESIGN §9: every library's main entry runs in a browser page; Node-only code lives in its
// `./node` entry. A user bundles the main entry with no externals set by hand: a Node built-in
// anywhere under it breaks the page at load, so it fails here, named with the chain that reaches it.

const publicPackages = readdirSync(`${repoRoot}packages`)
  .filter((dir) => existsSync(`${repoRoot}packages/${dir}/package.json`))
  .map((dir) => ({
    dir,
    json: JSON.parse(readFileSync(`${repoRoot}packages/${dir}/package.json`, "utf8")) as {
      name: string;
      private?: boolean;
    },
  }))
  .filter(({ json }) => json.private !== true);

describe("main entries bundled for the browser", () => {
  it("finds the core packages", () => {
    expect(publicPackages.map(({ json }) => json.name)).toEqual(
      expect.arrayContaining([
        "@kb/des",
        "@kb/topology",
        "@kb/components",
        "@kb/tl",
        "@kb/runtime",
        "@kb/ccl",
      ]),
    );
  });

  for (const { dir, json } of publicPackages) {
    it(`${json.name} imports no Node built-in`, async () => {
      const { nodeImports } = await bundleForBrowser(`packages/${dir}/src/index.ts`);
      expect(
        nodeImports.map(formatChain),
        `${json.name}'s main entry reaches Node built-ins; move that code to its ./node entry`,
      ).toEqual([]);
    }, 30_000);
  }

  it("names the chain of imports that reaches a built-in (the Node entries do)", async () => {
    const { nodeImports } = await bundleForBrowser("packages/ccl/src/node.ts");
    // loadCclConfig reads ccl.yaml with @kb/errors/node's reader of a user's file.
    expect(nodeImports.map(formatChain)).toEqual([
      "packages/ccl/src/node.ts -> packages/errors/src/node.ts -> node:fs",
      "packages/ccl/src/node.ts -> packages/errors/src/node.ts -> node:fs/promises",
    ]);
    const runtime = await bundleForBrowser("packages/runtime/src/node.ts");
    expect(runtime.nodeImports.map(formatChain)).toContain(
      "packages/runtime/src/node.ts -> packages/runtime/src/node/load-simulator.ts -> packages/oplog/src/node.ts -> node:fs",
    );
  }, 30_000);
});
