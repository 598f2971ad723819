import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the platform-neutral package, and `@kb/data-executor/node` (the GEMM worker-thread
// pool). Splitting keeps one copy of the shared classes.
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts"], splitting: true });
