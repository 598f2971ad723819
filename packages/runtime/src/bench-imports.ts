// What a bench file may import by a bare name, and the TypeScript options it is checked with:
// one definition for `kb run` (which hands the bench these modules), `kb check` (checkBench of
// @kb/runtime/node) and the playground's editor (its declarations and its language service).

/**
 * The packages a bench may import by a bare name (`import { defineBench } from "@kb/runtime"`).
 * `kb run` gives a bench its own copy of each (one `KbError`, one `TLContext`), and `kb check`
 * and the playground's editor type-check a bench against their declarations. Other imports are
 * the bench's own files (relative paths) or packages of the bench's project.
 */
export const BENCH_PACKAGES = [
  "@kb/builtins",
  "@kb/ccl",
  "@kb/components",
  "@kb/data-executor",
  "@kb/errors",
  "@kb/oplog",
  "@kb/runtime",
  "@kb/spec",
  "@kb/tensor",
  "@kb/tl",
  "@kb/topology",
  "zod",
] as const;

/**
 * The @kb packages whose versions a run's manifest records (`manifest.packages`): the CLI and
 * every @kb package a run uses. `kb run` reads them from its installation, the playground from
 * the package.json files it was built from; both take this list, so the same bench, topology and
 * params have the same digest in either.
 */
export const MANIFEST_PACKAGES = [
  "@kb/builtins",
  "@kb/ccl",
  "@kb/cli",
  "@kb/components",
  "@kb/data-executor",
  "@kb/des",
  "@kb/errors",
  "@kb/oplog",
  "@kb/runtime",
  "@kb/spec",
  "@kb/tensor",
  "@kb/tl",
  "@kb/topology",
] as const;

/** A name of {@link BENCH_PACKAGES}. */
export type BenchPackage = (typeof BENCH_PACKAGES)[number];

/** Whether `name` is one of {@link BENCH_PACKAGES} (a bare name, no subpath). */
export function isBenchPackage(name: string): name is BenchPackage {
  return (BENCH_PACKAGES as readonly string[]).includes(name);
}

/**
 * The compiler options a bench is type-checked with, as a tsconfig.json's `compilerOptions`
 * (convert them with TypeScript's `convertCompilerOptionsFromJson`): the repository's strict base
 * (packages/tooling/tsconfig.base.json), with the lib files both places a bench runs have (the
 * language and what a Web Worker offers: `console`, timers) and no ambient `@types`.
 */
export const BENCH_COMPILER_OPTIONS: Readonly<Record<string, unknown>> = Object.freeze({
  target: "ES2022",
  module: "ESNext",
  moduleResolution: "Bundler",
  moduleDetection: "force",
  lib: ["ES2022", "WebWorker"],
  types: [],
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  noImplicitReturns: true,
  noFallthroughCasesInSwitch: true,
  useUnknownInCatchVariables: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  resolveJsonModule: true,
  skipLibCheck: true,
  noEmit: true,
});
