import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// What a registry page and an installed user see of every published package: the license, where
// the source, the docs and the issues are, keywords (kb-plugin for a plug-in), READMEs whose links
// work outside the repository and that say "ESM only, Node >= 20", types for every subpath under
// moduleResolution node10, and zod as a peer where the user's schemas cross the API.

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const REPOSITORY = "https://github.com/kernbench/kernbench-ts";

interface PackageJson {
  name: string;
  private?: boolean;
  license?: string;
  keywords?: string[];
  homepage?: string;
  bugs?: { url?: string };
  repository?: { type?: string; url?: string; directory?: string };
  exports?: Record<string, unknown>;
  typesVersions?: Record<string, Record<string, string[]>>;
  files?: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const published = ["packages", "apps", "examples"]
  .flatMap((group) =>
    readdirSync(join(repoRoot, group))
      .filter((name) => existsSync(join(repoRoot, group, name, "package.json")))
      .map((name) => {
        const dir = `${group}/${name}`;
        return {
          dir,
          json: JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8")) as PackageJson,
        };
      }),
  )
  .filter((entry) => entry.json.private !== true);

const byName = (name: string) => published.find((entry) => entry.json.name === name)?.json;

/** The link targets of a markdown text outside its fenced code blocks. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, "");
  const inline = [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string);
  const references = [...prose.matchAll(/^\[[^\]]+\]:\s*(\S+)/gm)].map((match) => match[1] as string);
  return [...inline, ...references];
}

describe("published package metadata", () => {
  it("finds the libraries, the CLI and the example plug-ins", () => {
    expect(published.map((entry) => entry.json.name)).toEqual(
      expect.arrayContaining(["@kb/des", "@kb/spec", "@kb/runtime", "@kb/cli", "kb-plugin-systolic-gemm"]),
    );
  });

  it("has the MIT license the packages declare", () => {
    expect(readFileSync(join(repoRoot, "LICENSE"), "utf8")).toMatch(/^MIT License\n/);
  });

  for (const { dir, json } of published) {
    describe(json.name, () => {
      it("declares MIT, the repository, its folder, its docs and the issues", () => {
        expect(json.license).toBe("MIT");
        expect(json.repository).toEqual({ type: "git", url: `git+${REPOSITORY}.git`, directory: dir });
        expect(json.homepage).toBe(`${REPOSITORY}/tree/main/${dir}#readme`);
        expect(json.bugs).toEqual({ url: `${REPOSITORY}/issues` });
        expect(json.keywords).toContain("kernbench");
        if (dir.startsWith("examples/kb-plugin-")) expect(json.keywords).toContain("kb-plugin");
      });

      it("carries the LICENSE in its folder after the build (npm packs it into the tarball)", () => {
        // The shared tsup preset copies it (packages/tooling/tsup.js); the test suite runs after the build.
        expect(readFileSync(join(repoRoot, dir, "LICENSE"), "utf8")).toBe(
          readFileSync(join(repoRoot, "LICENSE"), "utf8"),
        );
      });

      it("has a README whose links work on a registry page and that states ESM only, Node >= 20", () => {
        const readme = readFileSync(join(repoRoot, dir, "README.md"), "utf8");
        const relativeLinks = linkTargets(readme).filter((target) => !/^(https?:|mailto:|#)/.test(target));
        expect(relativeLinks).toEqual([]);
        expect(readme).toMatch(/ESM only/);
        expect(readme).toMatch(/Node >= 20/);
      });

      it("maps every subpath with types for moduleResolution node10 (typesVersions)", () => {
        const subpaths = Object.entries(json.exports ?? {}).filter(
          ([subpath, target]) =>
            subpath !== "." && typeof target === "object" && target !== null && "types" in target,
        );
        const expected = Object.fromEntries(
          subpaths.map(([subpath, target]) => [subpath.slice(2), [(target as { types: string }).types]]),
        );
        expect(json.typesVersions?.["*"] ?? {}).toEqual(expected);
      });
    });
  }

  it("has every absolute link into the repository name a file or folder that exists", () => {
    const missing = published.flatMap(({ dir }) =>
      linkTargets(readFileSync(join(repoRoot, dir, "README.md"), "utf8"))
        .filter((target) => target.startsWith(`${REPOSITORY}/`) && !target.startsWith(`${REPOSITORY}/issues`))
        .map((target) => target.replace(/^.*?\/(?:blob|tree)\/main\/?/, "").replace(/#.*$/, ""))
        .filter((path) => !existsSync(join(repoRoot, path)))
        .map((path) => `${dir}/README.md: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it("takes zod as a peer where the user's schemas cross the API (defineBench, defineComponent, hbmTopologyParams)", () => {
    for (const name of ["@kb/runtime", "@kb/components", "@kb/spec"]) {
      const json = byName(name);
      expect(json?.peerDependencies?.zod, name).toMatch(/^\^4\./);
      expect(json?.dependencies?.zod, name).toBeUndefined();
    }
  });

  it("layers the workspace: @kb/spec names only @kb/errors, and no package depends on itself through others", () => {
    const all = ["packages", "apps", "examples"].flatMap((group) =>
      readdirSync(join(repoRoot, group))
        .filter((name) => existsSync(join(repoRoot, group, name, "package.json")))
        .map(
          (name) =>
            JSON.parse(readFileSync(join(repoRoot, group, name, "package.json"), "utf8")) as PackageJson,
        ),
    );
    /** The workspace packages `json` depends on (at run time, or also to build and test it). */
    const workspace = (json: PackageJson, dev: boolean) =>
      Object.keys({
        ...json.dependencies,
        ...json.peerDependencies,
        ...(dev ? json.devDependencies : {}),
      }).filter((name) => all.some((other) => other.name === name));
    expect(workspace(byName("@kb/spec") as PackageJson, false)).toEqual(["@kb/errors"]);
    const edges = new Map(all.map((json) => [json.name, workspace(json, true)]));
    const cycles: string[] = [];
    const visit = (name: string, path: readonly string[]): void => {
      if (path.includes(name)) cycles.push([...path.slice(path.indexOf(name)), name].join(" -> "));
      else for (const next of edges.get(name) ?? []) visit(next, [...path, name]);
    };
    for (const name of edges.keys()) visit(name, []);
    expect(cycles).toEqual([]);
  });

  it("ships the topology JSON Schema in @kb/topology, exported by path", () => {
    const json = byName("@kb/topology");
    expect(json?.exports?.["./topology.schema.json"]).toBe("./dist/topology.schema.json");
    expect(json?.files).toContain("dist");
    // The build copies it there (`pnpm test` builds before the tests run).
    const shipped = join(repoRoot, "packages", "topology", "dist", "topology.schema.json");
    expect(readFileSync(shipped, "utf8")).toBe(
      readFileSync(join(repoRoot, "topologies", "topology.schema.json"), "utf8"),
    );
  });
});
