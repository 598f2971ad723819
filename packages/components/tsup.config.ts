import { kbTsupConfig } from "@kb/tooling/tsup";

// Three entries: the platform-neutral package, `@kb/components/engine` (what a PE engine or a
// host-side model needs beyond the contract) and `@kb/components/node` (plug-in resolution from a
// directory, YAML-located params errors). Splitting keeps one copy of the shared classes.
export default kbTsupConfig({ entry: ["src/index.ts", "src/engine.ts", "src/node.ts"], splitting: true });
