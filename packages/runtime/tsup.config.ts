import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the platform-neutral package, and `@kb/runtime/node` (topology files, plug-ins by
// name, host writes spilled to a file). Splitting keeps one copy of the shared classes.
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts"], splitting: true });
