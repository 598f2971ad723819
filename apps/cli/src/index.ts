export type { CliIo, CliOutput } from "./run-cli.js";
export { EXIT_INTERNAL_ERROR, EXIT_OK, EXIT_USER_ERROR, runCli } from "./run-cli.js";
