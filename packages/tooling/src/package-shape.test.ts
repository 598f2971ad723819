import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Every publishable package must install and import the same way: ESM, types first in the
// exports map, only dist shipped, a README with an example, its own changeset-driven version.
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

interface PackageJson {
  name: string;
  private?: boolean;
  type?: string;
  sideEffects?: boolean;
  exports?: Record<string, unknown>;
  files?: string[];
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  description?: string;
}

const publishable = ["packages", "apps"]
  .filter((group) => existsSync(`${repoRoot}${group}`))
  .flatMap((group) =>
    readdirSync(`${repoRoot}${group}`)
      .filter((name) => existsSync(`${repoRoot}${group}/${name}/package.json`))
      .map((name) => ({
        dir: `${repoRoot}${group}/${name}`,
        json: JSON.parse(readFileSync(`${repoRoot}${group}/${name}/package.json`, "utf8")) as PackageJson,
      })),
  )
  .filter((entry) => entry.json.private !== true);

describe("publishable package shape", () => {
  it("finds the publishable packages", () => {
    expect(publishable.map((entry) => entry.json.name)).toEqual(
      expect.arrayContaining(["@kb/des", "@kb/errors"]),
    );
  });

  for (const { dir, json } of publishable) {
    it(`${json.name} is ESM with types-first exports, dist-only files, engines and a README example`, () => {
      expect(json.type).toBe("module");
      expect(json.sideEffects).toBe(false);
      expect(json.description?.length ?? 0).toBeGreaterThan(20);
      const root = json.exports?.["."] as Record<string, string>;
      expect(Object.keys(root)[0]).toBe("types");
      expect(root.types).toBe("./dist/index.d.ts");
      expect(root.import).toBe("./dist/index.js");
      expect(json.exports?.["./package.json"]).toBe("./package.json");
      expect(json.files).toContain("dist");
      expect(json.engines?.node).toBe(">=20");
      expect(existsSync(`${dir}/src/index.ts`)).toBe(true);
      const readme = readFileSync(`${dir}/README.md`, "utf8");
      expect(readme).toContain("```ts");
      for (const [dependency, range] of Object.entries(json.dependencies ?? {})) {
        if (dependency.startsWith("@kb/")) expect(range).toBe("workspace:^");
      }
    });
  }
});
