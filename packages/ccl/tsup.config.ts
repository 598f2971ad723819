import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the platform-neutral package, and `@kb/ccl/node` (reading ccl.yaml files).
// Splitting keeps one copy of the shared code.
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts"], splitting: true });
