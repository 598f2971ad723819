/**
 * `pnpm bench:noc [--config FILE.json] [--json OUT.json]`: BookSim 2's 8 x 8 mesh through
 * kernbench's fabric (README.md beside this file and `--help`).
 */
import { main } from "./cli.js";

process.exitCode = await main(process.argv.slice(2));
