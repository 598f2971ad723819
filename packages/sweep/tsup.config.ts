import { kbTsupConfig } from "@kb/tooling/tsup";

// Three entries: the browser-safe spec, designs, constraints and table rows; `@kb/sweep/node`
// with the spec file reader, the results files and the local process pool; `@kb/sweep/redis`
// with the BullMQ executor and worker, so that only their users load BullMQ and ioredis.
// Splitting puts their shared code in one chunk, so all see the same classes.
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts", "src/redis.ts"], splitting: true });
