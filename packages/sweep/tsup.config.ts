import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the browser-safe spec, designs, constraints and table rows, and `@kb/sweep/node`
// with the spec file reader, the results files and the local process pool. Splitting puts their
// shared code in one chunk, so both see the same classes.
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts"], splitting: true });
