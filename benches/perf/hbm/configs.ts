// The kernbench HBM configurations of the memory-fidelity suite (configs/<name>.yaml: topology
// fragments, one per reference configuration), and how a run picks the memory model.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultRegistry } from "@kb/builtins";
import type { KbPlugin } from "@kb/components";
import { parseTopology, resolveTopology, type Topology } from "@kb/topology";
import { findUp } from "./trace.js";

/** How a configuration's figures are held against the reference. */
export type ConfigStatus = "target" | "informative" | "custom";

/** What the bench knows of a configuration besides its topology. */
export interface ConfigMeta {
  readonly status: ConfigStatus;
  /** The closed loop's tick, ns: the reference driver's (Ramulator ticks at half an HBM3 CK). */
  readonly tckNs: number;
  /** The simulator whose figures it is compared with. */
  readonly reference: string;
  /**
   * Whether the reference driver offers a line as requests of one burst each, so a line's first
   * burst may be accepted while a later one is refused (the driver's `partialLines`). Ramulator
   * 2.1 takes requests of at most its transaction size, `internal_prefetch_size x channel_width
   * / 8` = 4 x 64 / 8 (HBM2) = 8 x 32 / 8 (HBM3) = 32 B (`GenericDRAMSystem::send` refuses a
   * larger one), so its driver sends every 64 B line as two 32 B requests on both standards, and
   * its notes count partial line accepts on both (`hbm3` and `hbm2` `streams`: 46% and 50% of
   * the refusals). DRAMsim3's legacy HBM2 takes a 64 B line in one access.
   */
  readonly partialLines: boolean;
}

/** A Ramulator 2.1 configuration's reference and driver: 32 B requests, so lines offered in parts. */
const RAMULATOR = { reference: "Ramulator 2.1", partialLines: true } as const;

/**
 * The configurations of ../shared/fidelity/README.md that kernbench reproduces. `target`: held to
 * 10% bandwidth / 15% mean latency; `informative`: compared, not held (per-bank refresh, the
 * structurally different DRAMsim3).
 */
export const CONFIG_META: Readonly<Record<string, ConfigMeta>> = {
  hbm3: { status: "target", tckNs: 0.3125, ...RAMULATOR },
  "hbm3-xor": { status: "target", tckNs: 0.3125, ...RAMULATOR },
  hbm2: { status: "target", tckNs: 1, ...RAMULATOR },
  "hbm2-xor": { status: "target", tckNs: 1, ...RAMULATOR },
  "hbm3-xor-pbr": { status: "informative", tckNs: 0.3125, ...RAMULATOR },
  "dramsim3-hbm2": { status: "informative", tckNs: 1, reference: "DRAMsim3", partialLines: false },
};

/** The tick of a configuration not in {@link CONFIG_META}, by its preset (the CK of the part). */
const PRESET_TCK_NS: Readonly<Record<string, number>> = {
  hbm2: 1,
  hbm2e: 1 / 1.8,
  hbm3: 0.3125,
  hbm3e: 0.25,
};

/** A configuration, loaded. */
export interface BenchConfig {
  readonly name: string;
  /** Its YAML file. */
  readonly file: string;
  readonly meta: ConfigMeta;
  /** The topology it describes (the fragment with every default filled in). */
  readonly topology: Topology;
}

/** The folder of the configuration files (beside this module, or found from the bundle). */
export function configDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, "configs");
  if (existsSync(beside)) return beside;
  const found = findUp(here, "benches", "perf", "hbm", "configs");
  if (found === undefined) throw new Error(`cannot find benches/perf/hbm/configs above ${here}`);
  return found;
}

/** The names of the shipped configurations, in the reference's order. */
export function configNames(): string[] {
  const files = readdirSync(configDir())
    .filter((file) => file.endsWith(".yaml"))
    .map((file) => basename(file, ".yaml"));
  const known = Object.keys(CONFIG_META).filter((name) => files.includes(name));
  return [...known, ...files.filter((name) => !known.includes(name)).sort()];
}

/**
 * Loads configuration `nameOrFile`: a shipped name (`hbm3`) or the path of a topology (YAML) file,
 * (relative to `baseDir`) whose `cube.hbm` is what is benched. `tckNs` overrides the tick.
 */
export function loadConfig(nameOrFile: string, tckNs?: number, baseDir = process.cwd()): BenchConfig {
  const shipped = join(configDir(), `${nameOrFile}.yaml`);
  const file = existsSync(shipped) ? shipped : resolve(baseDir, nameOrFile);
  if (!existsSync(file)) {
    throw new Error(
      `unknown configuration "${nameOrFile}": not one of ${configNames().join(", ")} nor a file.`,
    );
  }
  const topology = parseTopology(readFileSync(file, "utf8"), file);
  const name = file === shipped ? nameOrFile : topology.name;
  const known = file === shipped ? CONFIG_META[name] : undefined;
  const preset = topology.cube.hbm.preset;
  const tick = tckNs ?? known?.tckNs ?? (preset === undefined ? 1 : PRESET_TCK_NS[preset]) ?? 1;
  return {
    name,
    file,
    meta:
      known === undefined
        ? { status: "custom", tckNs: tick, reference: "-", partialLines: false }
        : { ...known, tckNs: tick },
    topology,
  };
}

/** The memory model a run uses, and why. */
export interface ImplChoice {
  /** The topology to build (its `cube.hbm.impl` and `params` set). */
  readonly topology: Topology;
  readonly impl: string;
  /** Set when the run does not use the configuration as written (a fallback, dropped params). */
  readonly note: string | null;
}

/** Whether `impl` is a registered `hbm_ctrl` implementation (built-in or of `plugins`). */
export function isRegistered(impl: string, plugins: readonly KbPlugin[] = []): boolean {
  try {
    defaultRegistry(plugins).resolve({ id: "sip0.cube0.hbm", kind: "hbm_ctrl", impl });
    return true;
  } catch {
    return false;
  }
}

/** The implementation every configuration falls back to while its own is not registered. */
export const FALLBACK_IMPL = "hbm_ctrl_v1";

/**
 * The model to run `topology`'s HBM with. `impl` (`--impl`) overrides the configuration's; the
 * configuration's `params` are kept only for its own impl, `params` (`--param`) are added. With
 * no `--impl` and the configuration's impl not registered (hbm_ctrl_v2 not written yet), falls
 * back to {@link FALLBACK_IMPL} with the topology fields only (channels, mapping, ...).
 * Throws when an explicit `impl` is not registered.
 */
export function chooseImpl(
  topology: Topology,
  options: {
    readonly impl?: string | undefined;
    readonly params?: Readonly<Record<string, unknown>>;
    readonly plugins?: readonly KbPlugin[];
  } = {},
): ImplChoice {
  const plugins = options.plugins ?? [];
  const own = topology.cube.hbm.impl;
  let impl = options.impl ?? own;
  let note: string | null = null;
  if (!isRegistered(impl, plugins)) {
    if (options.impl !== undefined) {
      const known = defaultRegistry(plugins)
        .list()
        .filter((entry) => entry.kind === "hbm_ctrl")
        .map((entry) => entry.name);
      throw new Error(
        `--impl ${impl} is not a registered hbm_ctrl impl (registered: ${known.join(", ")}); load its plug-in with --plugin.`,
      );
    }
    note = `${impl} is not registered: ran ${FALLBACK_IMPL} (topology fields only)`;
    impl = FALLBACK_IMPL;
  } else if (impl !== own && Object.keys(topology.cube.hbm.params).length > 0) {
    note = `params of ${own} not passed to ${impl}`;
  }
  const params = { ...(impl === own ? topology.cube.hbm.params : {}), ...(options.params ?? {}) };
  const resolved = resolveTopology(
    { ...topology, cube: { ...topology.cube, hbm: { ...topology.cube.hbm, impl, params } } },
    topology.name,
  );
  return { topology: resolved, impl, note };
}
