// The CLI's own test helpers, with which the harnesses here drive kb in-process from its sources,
// as the CLI's tests do: `kb ...argv`, the `kb web` command with its hooks (an abort signal, told
// when it listens), and the small sweep the sweep page's tests look at. Not part of @kb/cli's
// published API, so taken from apps/cli/src: the one place this package reaches into it.

export { kb } from "../../../apps/cli/src/test-support.js";
export { addWebCommand } from "../../../apps/cli/src/web-command.js";
export { haveBuiltKb, runSmallSweep, type SmallSweep } from "../../../apps/cli/src/web-sweep-support.js";
