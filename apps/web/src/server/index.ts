// The server of `kb web` (Node only: files, gzip, HTTP), the `@kb/web-ui/server` entry. The CLI's
// `kb web` (apps/cli/src/web-command.ts) parses the arguments, prints and sets the exit code; this
// reads the results, traces and sweep tables given to it (web-input.ts, web-data.ts, web-sweep.ts)
// and serves them with the built page (web-server.ts). What crosses the wire is declared by the
// page (../api.ts, ../sweep-api.ts). The page's own entries (main.ts, sweep-main.ts) never import
// this folder: it reaches the browser only as JSON. The CLI's build bundles it into kb's dist/.

export { type LoadedWebData, loadWebData, type TopologyLookup, type WebDataOptions } from "./web-data.js";
export { DEFAULT_MAX_INPUT_BYTES, MAX_INPUT_OPTION } from "./web-file.js";
export { readWebInput, type WebInput } from "./web-input.js";
export {
  DEFAULT_WEB_PORT,
  findPageDir,
  hostName,
  isLoopback,
  isWildcard,
  startWebServer,
  type WebServer,
  type WebServerOptions,
  type WebSweep,
  wildcardWithoutAllowHost,
} from "./web-server.js";
export {
  loadSweepSource,
  pointTopologyFile,
  readSweepTable,
  type SweepSource,
  type SweepSourceOptions,
  sweepTableIn,
} from "./web-sweep.js";
