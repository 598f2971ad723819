import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the platform-neutral package, and `@kb/topology/node` with file reading. Splitting
// puts their shared code in one chunk, so both see the same classes (instanceof holds across them).
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts"], splitting: true });
