/**
 * The memory-fidelity suite: `pnpm bench:hbm [--config NAME...] [--trace FILE...] [--pattern P...]
 * [--json F] [--whole-machine]` (see README.md beside this file and `--help`).
 *
 * Drives the traces of ../shared/fidelity (patterns.mjs) through kernbench's HBM model with the
 * reference's closed loop and prints kernbench's figures next to Ramulator 2.1's and DRAMsim3's.
 */
import { main } from "./cli.js";

process.exitCode = await main(process.argv.slice(2));
