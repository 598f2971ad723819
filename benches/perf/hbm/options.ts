// `pnpm bench:hbm`'s command line: its help and its options.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { configNames } from "./configs.js";

export const SCRIPT = "bench:hbm";

export const USAGE = `Usage: pnpm ${SCRIPT} [--config NAME...] [--pattern P...] [--mix M...] [--trace FILE...]
                      [--impl NAME] [--param KEY=VALUE...] [--plugin P...] [--tck NS]
                      [--whole-machine] [--json FILE] [--fidelity DIR] [--energy] [--dram-trace DIR]
                      [--partial-lines | --whole-lines]

Drives the memory-fidelity traces through kernbench's HBM model with the closed loop of
../shared/fidelity/README.md (at the memory, through MemoryHarness) and prints, per
(config, pattern, mix), steady GB/s, % of peak and mean read latency next to the reference's,
the deviations, PASS / MISS against the targets (bandwidth within 10%, mean latency within 15%;
idle patterns: latency only; informative configurations in parentheses) and lines simulated per
wall-clock second.

  --config NAME     a configuration (configs/NAME.yaml: ${configNames().join(", ")}) or a topology
                    file whose cube.hbm is benched; repeat or comma-separate (default: all)
  --pattern P       a pattern of patterns.mjs (default: all of them)
  --mix M           read, rw21 (default: both)
  --trace FILE      a trace in the kb-fidelity-trace v1 format (then only the --pattern given run)
  --impl NAME       the memory model (default: the configuration's, hbm_ctrl_v1 while that is
                    not registered); the configuration's params go only to its own impl
  --param K=V       a param for the memory model (value parsed as JSON when it parses)
  --plugin P        load a plug-in (package name or path) so --impl can name its impls
  --tck NS          the closed loop's tick (default: the reference's, else the preset's CK)
  --whole-machine   also run the tile pattern through a whole machine on topologies/ref-cube.yaml
                    (PE DMAs -> fabric -> HBM; with --config, ref-cube with that cube.hbm)
  --json FILE       write every run as an object with reference.json's fields
  --fidelity DIR    the folder of patterns.mjs and reference.json (default: ../shared/fidelity)
  --energy          print each run's HBM core energy by component (hbm_ctrl_v2), next to
                    DRAMPower 5's on the same command streams (drampower.json beside this file)
  --dram-trace DIR  write each hbm_ctrl_v2 run's DRAM commands in DRAMPower 5's input format:
                    DIR/<config>/<pattern>-<mix>/memspec.json and pc<p>.csv per pseudo-channel
  --partial-lines   offer each 32 B burst of a line on its own, as Ramulator's driver (a line's
                    first half may be accepted while its second is refused); --whole-lines: a
                    line is taken whole or not. Default: the configuration's (partial on the
                    Ramulator ones, whose requests are 32 B; whole elsewhere)
  --help            show this help

Exit code 0 unless a run fails (fidelity is a goal, not a gate).`;

/** The options of one invocation, defaults applied. */
export interface Options {
  configs: string[];
  patterns: string[] | undefined;
  mixes: string[];
  traces: string[];
  impl: string | undefined;
  params: Record<string, unknown>;
  plugins: string[];
  tck: number | undefined;
  wholeMachine: boolean;
  json: string | undefined;
  fidelity: string | undefined;
  /** Print the HBM energy table (--energy). */
  energy: boolean;
  /** Where to write DRAMPower's input (--dram-trace DIR), resolved. */
  dramTrace: string | undefined;
  /**
   * Offer each burst of a line on its own (--partial-lines: true; --whole-lines: false;
   * ClosedLoopOptions.partialLines); undefined: the configuration's (ConfigMeta.partialLines).
   */
  partialLines: boolean | undefined;
}

/** A command line, or a choice of configurations and patterns, that names nothing to run. */
export class UsageError extends Error {}

const list = (values: unknown): string[] =>
  ((values as string[] | undefined) ?? [])
    .flatMap((value) => value.split(","))
    .filter((value) => value !== "");

/** The options of `argv`, or null for `--help`; throws a {@link UsageError} when they are wrong. */
export function parseOptions(argv: readonly string[]): Options | null {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        config: { type: "string", multiple: true },
        pattern: { type: "string", multiple: true },
        mix: { type: "string", multiple: true },
        trace: { type: "string", multiple: true },
        impl: { type: "string" },
        param: { type: "string", multiple: true },
        plugin: { type: "string", multiple: true },
        tck: { type: "string" },
        "whole-machine": { type: "boolean", default: false },
        json: { type: "string" },
        fidelity: { type: "string" },
        energy: { type: "boolean", default: false },
        "dram-trace": { type: "string" },
        "partial-lines": { type: "boolean", default: false },
        "whole-lines": { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help === true) return null;
  const params: Record<string, unknown> = {};
  for (const pair of list(values.param)) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--param takes KEY=VALUE, got "${pair}"`);
    const raw = pair.slice(eq + 1);
    try {
      params[pair.slice(0, eq)] = JSON.parse(raw);
    } catch {
      params[pair.slice(0, eq)] = raw;
    }
  }
  const mixes = list(values.mix);
  for (const mix of mixes)
    if (mix !== "read" && mix !== "rw21") throw new UsageError(`--mix is read or rw21, got "${mix}"`);
  const tck = values.tck === undefined ? undefined : Number(values.tck);
  if (tck !== undefined && !(tck > 0))
    throw new UsageError(`--tck takes a positive number of ns, got "${String(values.tck)}"`);
  const patterns = list(values.pattern);
  if (values["partial-lines"] === true && values["whole-lines"] === true)
    throw new UsageError("--partial-lines and --whole-lines contradict each other: give one of them");
  return {
    configs: list(values.config),
    patterns: patterns.length > 0 ? patterns : undefined,
    mixes: mixes.length > 0 ? mixes : ["read", "rw21"],
    traces: list(values.trace),
    impl: values.impl as string | undefined,
    params,
    plugins: list(values.plugin),
    tck,
    wholeMachine: values["whole-machine"] === true,
    json: values.json as string | undefined,
    fidelity: values.fidelity as string | undefined,
    energy: values.energy === true,
    dramTrace: values["dram-trace"] === undefined ? undefined : userPath(values["dram-trace"] as string),
    partialLines:
      values["partial-lines"] === true ? true : values["whole-lines"] === true ? false : undefined,
  };
}

/** The directory the user ran the command in (pnpm runs scripts from the workspace root). */
export const userDir = (): string => process.env.INIT_CWD ?? process.cwd();
export const userPath = (file: string): string => resolve(userDir(), file);
