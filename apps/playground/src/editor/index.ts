// The playground's editors' language support (issue 23): the bench editor (TypeScript with the
// @kb/* types, in a lazily started worker) and the topology editor (what `kb topology validate`
// reports, as markers). The page wires these into its CodeMirror editors. The topology checker
// itself (topologyDiagnostics in topology-check.ts) is not exported here: the linter imports it
// lazily, so that zod and yaml are not in the page's first chunk.

export type { BenchEditorOptions } from "./bench-extensions.js";
export { benchExtensions } from "./bench-extensions.js";
export type { TopologyDiagnostic } from "./topology-check.js";
export type { TopologyEditorOptions } from "./topology-extensions.js";
export { topologyExtensions } from "./topology-extensions.js";
export type { TsStatus } from "./ts-client.js";
export { setFiles, TsClient, tsClient } from "./ts-client.js";
export type {
  EditorCompletionOption,
  EditorCompletions,
  EditorDiagnostic,
  EditorHover,
  TsService,
} from "./ts-service.js";
