import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the platform-neutral package, and `@kb/errors/node` with the reading of user files.
// Splitting puts their shared code in one chunk, so both see the same KbError class.
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts"], splitting: true });
