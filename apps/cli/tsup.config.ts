import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the library (`runCli`, for tests and embedding) and the `kb` executable.
export default kbTsupConfig({ entry: ["src/index.ts", "src/bin.ts"], platform: "node" });
