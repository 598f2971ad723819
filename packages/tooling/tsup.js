// Shared tsup preset: every publishable package builds ESM + .d.ts from src/index.ts.
import { copyFileSync } from "node:fs";
import { defineConfig } from "tsup";

/** The repository's LICENSE, copied beside each package's package.json at build (npm packs it). */
const LICENSE = new URL("../../LICENSE", import.meta.url);

/**
 * The tsup configuration every @kb package uses. After a build the repository's LICENSE is
 * copied into the package folder (gitignored there), so every tarball carries it; an
 * `onSuccess` of the overrides runs after that copy.
 * @param {import("tsup").Options} [overrides] per-package additions (extra entries, externals)
 */
export function kbTsupConfig(overrides = {}) {
  const { onSuccess, ...rest } = overrides;
  return defineConfig({
    entry: ["src/index.ts"],
    format: ["esm"],
    target: "node20",
    platform: "neutral",
    dts: true,
    sourcemap: true,
    clean: true,
    treeshake: true,
    splitting: false,
    ...rest,
    onSuccess: async () => {
      copyFileSync(LICENSE, "LICENSE");
      if (typeof onSuccess === "function") await onSuccess();
    },
  });
}
