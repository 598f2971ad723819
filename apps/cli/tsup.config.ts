import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the library (`runCli`, for tests and embedding) and the `kb` executable.
// The page of `kb web` (@kb/web-ui, built first by turbo) is copied into dist/web, so the
// published package serves it without the private web package. The repository's benches
// (benches/*.ts and their lib/, not perf/ or test/) and topologies (*.yaml and their schema) are
// copied into dist/shipped, where an installed kb finds them by name after the user's own.
export default kbTsupConfig({
  entry: ["src/index.ts", "src/bin.ts"],
  platform: "node",
  onSuccess: async () => {
    const page = new URL("../web/dist/", import.meta.url);
    if (!existsSync(new URL("index.html", page))) {
      throw new Error("apps/web/dist/index.html is missing: build @kb/web-ui first (pnpm build does)");
    }
    cpSync(page, new URL("./dist/web/", import.meta.url), { recursive: true });
    copyShipped();
  },
});

/**
 * The files of the repository's `from` folder that `keep` accepts, into dist/shipped/`to`; with
 * `deep`, those of its subfolders too.
 */
function copyFiles(from: string, to: string, keep: (name: string) => boolean, deep = false): void {
  const source = new URL(`../../${from}/`, import.meta.url);
  const target = new URL(`./dist/shipped/${to}/`, import.meta.url);
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    if (entry.isFile() && keep(entry.name)) cpSync(new URL(entry.name, source), new URL(entry.name, target));
    if (deep && entry.isDirectory()) copyFiles(`${from}/${entry.name}`, `${to}/${entry.name}`, keep, deep);
  }
}

function copyShipped(): void {
  rmSync(new URL("./dist/shipped/", import.meta.url), { recursive: true, force: true });
  // Bench files have plain names: tsup.config.ts and *.test.ts are not benches.
  const bench = (name: string) => /^[^.]+\.ts$/.test(name);
  copyFiles("benches", "benches", (name) => bench(name) || name === "README.md");
  copyFiles("benches/lib", "benches/lib", bench, true);
  copyFiles("topologies", "topologies", (name) => /\.(ya?ml|json|md)$/.test(name));
}
