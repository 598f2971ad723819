import { kbTsupConfig } from "@kb/tooling/tsup";

// Two entries: the platform-neutral package, and `@kb/components/node` (plug-in resolution from a
// directory, YAML-located params errors). Splitting keeps one copy of the shared classes.
export default kbTsupConfig({ entry: ["src/index.ts", "src/node.ts"], splitting: true });
