// Shared tsup preset: every publishable package builds ESM + .d.ts from src/index.ts.
import { defineConfig } from "tsup";

/**
 * The tsup configuration every @kb package uses.
 * @param {import("tsup").Options} [overrides] per-package additions (extra entries, externals)
 */
export function kbTsupConfig(overrides = {}) {
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
    ...overrides,
  });
}
