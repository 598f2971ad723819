import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// `changeset version` (pnpm release) refuses a changeset that names a package outside the
// workspace ("Found changeset X for package kb which is not in the workspace"): every pending
// changeset names workspace packages only, with a bump changesets knows.
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** The names of the workspace's packages (pnpm-workspace.yaml: packages/*, apps/*, examples/*, benches). */
function workspaceNames(): Set<string> {
  const dirs = ["packages", "apps", "examples"].flatMap((group) =>
    existsSync(join(repoRoot, group))
      ? readdirSync(join(repoRoot, group)).map((name) => join(group, name))
      : [],
  );
  dirs.push("benches");
  const names = new Set<string>();
  for (const dir of dirs) {
    const file = join(repoRoot, dir, "package.json");
    if (existsSync(file)) names.add((JSON.parse(readFileSync(file, "utf8")) as { name: string }).name);
  }
  return names;
}

describe("pending changesets", () => {
  it("name only workspace packages, each with a patch, minor or major bump", () => {
    const names = workspaceNames();
    const problems: string[] = [];
    const dir = join(repoRoot, ".changeset");
    for (const file of readdirSync(dir).filter((name) => name.endsWith(".md") && name !== "README.md")) {
      const text = readFileSync(join(dir, file), "utf8");
      const front = /^---\n([\s\S]*?)\n---/.exec(text)?.[1];
      if (front === undefined) {
        problems.push(`${file}: no front matter`);
        continue;
      }
      for (const line of front.split("\n").filter((entry) => entry.trim() !== "")) {
        const entry = /^["']?([^"':]+)["']?\s*:\s*(patch|minor|major)\s*$/.exec(line.trim());
        if (entry === null) problems.push(`${file}: "${line}" is not "<package>": patch|minor|major`);
        else if (!names.has(entry[1] as string))
          problems.push(`${file}: ${entry[1]} is not a workspace package`);
      }
    }
    expect(problems).toEqual([]);
  });
});
