import { cpSync, existsSync } from "node:fs";
import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the library (`runCli`, for tests and embedding) and the `kb` executable.
// The page of `kb web` (@kb/web-ui, built first by turbo) is copied into dist/web, so the
// published package serves it without the private web package.
export default kbTsupConfig({
  entry: ["src/index.ts", "src/bin.ts"],
  platform: "node",
  onSuccess: async () => {
    const page = new URL("../web/dist/", import.meta.url);
    if (!existsSync(new URL("index.html", page))) {
      throw new Error("apps/web/dist/index.html is missing: build @kb/web-ui first (pnpm build does)");
    }
    cpSync(page, new URL("./dist/web/", import.meta.url), { recursive: true });
  },
});
