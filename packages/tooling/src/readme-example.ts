import { readFileSync } from "node:fs";

/**
 * For a package's `readme.test.ts`: the first ```ts block of its README and the region of the test
 * file between `// README example start` and `// README example end`, both without imports,
 * comments, whitespace and trailing commas (what formatting may change). A test asserts they are
 * equal, so the README's example is the code the test runs.
 */
export function readmeExample(
  readmeUrl: URL,
  testUrl: URL | string,
): { readonly readme: string; readonly test: string } {
  const readme = readFileSync(readmeUrl, "utf8");
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const own = readFileSync(typeof testUrl === "string" ? new URL(testUrl) : testUrl, "utf8");
  const region = own.slice(own.indexOf("// README example start"), own.indexOf("// README example end"));
  const withoutImports = block
    .split("\n")
    .filter((line) => !line.startsWith("import "))
    .join("\n");
  return { readme: normalize(withoutImports), test: normalize(region) };
}

function normalize(code: string): string {
  return code
    .replace(/\/\/.*$/gm, "")
    .replace(/\s+/g, "")
    .replace(/,([)\]}])/g, "$1");
}
