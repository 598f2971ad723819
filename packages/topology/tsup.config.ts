import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the platform-neutral package, and `@kb/topology/node` with file reading.
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts"] });
