import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the platform-neutral package, and `@kb/oplog/node` with the file sink and readers.
// Splitting puts their shared code in one chunk, so both see the same classes.
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts"], splitting: true });
