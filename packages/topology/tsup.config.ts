import { copyFileSync } from "node:fs";
import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the platform-neutral package, and `@kb/topology/node` with file reading. Splitting
// puts their shared code in one chunk, so both see the same classes (instanceof holds across them).
// The JSON Schema of topology files (topologies/topology.schema.json, kept current by a test and
// `pnpm schema:write`) ships as dist/topology.schema.json, for editors of installed users.
export default kbTsupConfig({
  entry: ["src/index.ts", "src/node.ts"],
  splitting: true,
  onSuccess: async () => {
    copyFileSync(
      new URL("../../topologies/topology.schema.json", import.meta.url),
      new URL("./dist/topology.schema.json", import.meta.url),
    );
  },
});
