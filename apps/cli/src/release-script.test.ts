import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  dependencyOrder,
  publishedManifest,
  publishScope,
  workspacePackages,
} from "../../../scripts/release.mjs";

// scripts/release.mjs (`pnpm release`, docs/releasing.md): what it publishes, in which order, under
// which scope. Its run against a registry is the registry end-to-end test's.

const root = fileURLToPath(new URL("../../../", import.meta.url));

describe("the release script", () => {
  it("publishes the public packages only, each after the workspace packages it depends on", () => {
    const order = dependencyOrder(workspacePackages(root)).map((pkg) => pkg.json.name);
    expect(order).toContain("@kb/cli");
    expect(order).not.toContain("@kb/tooling");
    expect(order).not.toContain("@kb/web-ui");
    for (const [first, then] of [
      ["@kb/errors", "@kb/des"],
      ["@kb/topology", "@kb/components"],
      ["@kb/components", "kb-plugin-systolic-gemm"],
      ["@kb/tl", "@kb/runtime"],
      ["@kb/sweep", "@kb/cli"],
    ]) {
      expect(order.indexOf(first as string), `${first} before ${then}`).toBeLessThan(
        order.indexOf(then as string),
      );
    }
  });

  it("writes workspace: ranges as versions and drops devDependencies, as pnpm publish does", () => {
    const versions = new Map([
      ["@kb/errors", "1.2.3"],
      ["@kb/des", "0.4.0"],
    ]);
    const json = {
      name: "@kb/des",
      version: "0.4.0",
      dependencies: { "@kb/errors": "workspace:^", zod: "^4.0.0" },
      peerDependencies: { "@kb/errors": "workspace:*" },
      devDependencies: { "@kb/tooling": "workspace:*" },
    };
    expect(publishedManifest(json, versions)).toEqual({
      name: "@kb/des",
      version: "0.4.0",
      dependencies: { "@kb/errors": "^1.2.3", zod: "^4.0.0" },
      peerDependencies: { "@kb/errors": "1.2.3" },
    });
    // Under a fallback scope: renamed, its @kb dependencies npm aliases of the renamed packages,
    // so they still install as node_modules/@kb/NAME, where the code imports them from.
    expect(publishedManifest(json, versions, "@kernbench")).toEqual({
      name: "@kernbench/des",
      version: "0.4.0",
      dependencies: { "@kb/errors": "npm:@kernbench/errors@^1.2.3", zod: "^4.0.0" },
      peerDependencies: { "@kb/errors": "npm:@kernbench/errors@1.2.3" },
    });
  });

  it("takes the scope from one place, the root package.json's kbRelease.scope", () => {
    expect(publishScope(root)).toBe("@kb");
  });
});
