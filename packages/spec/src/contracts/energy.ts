/**
 * What an action of a model costs in energy, or what it draws while it exists: the `energy` table
 * of a timing-model definition (beside its `counters`), like an Accelergy action table. The
 * framework multiplies each cost by what it is charged on (`per`: one of the model's counters, or
 * a measure every component has) and adds them up: `pJ = sum(value x measure)`.
 *
 * The name carries the unit: `act_pj` (pJ per ACT), `link_pj_per_bit` (pJ per bit of the bytes
 * measure), `static_mw` (mW over the simulated time; 1 mW x 1 ns = 1 pJ).
 */
export interface EnergyCost {
  /** snake_case ending in its unit: `_pj`, `_pj_per_bit` or `_mw` (`act_pj`, `static_mw`). */
  readonly name: string;
  /**
   * What the cost is charged on: a counter the model publishes (`act`, `rd`), or one of
   * {@link ENERGY_MEASURES} (`bytes`, `flops`, `ops`, `macs`, `macs.<dtype>`, `busy_ns`, `time_ns`).
   */
  readonly per: string;
  /** The default value, in the unit the name ends with. */
  readonly value: number;
  /** One sentence: what one unit is. */
  readonly description: string;
  /** Where the number comes from (paper, datasheet, tool, or "assumption: ..."). */
  readonly source: string;
}

/** A model's energy table: its costs, and optionally values that depend on its params. */
export interface EnergyTable {
  readonly costs: readonly EnergyCost[];
  /**
   * The values for a node's params (an HBM preset's IDD currents give its ACT energy), by cost
   * name; a name left out keeps its `value`. Called with the params after defaults.
   */
  readonly values?: (params: unknown) => Readonly<Record<string, number>>;
  /**
   * The process node and core voltage the costs are stated at, when they are logic or on-die wires:
   * a run scales them to its topology's `energy.process_nm` and `energy.vdd_v` ({@link processScale}).
   * Absent: the costs are not scaled (a DRAM die, a PHY's published pJ/bit).
   */
  readonly node?: EnergyNode;
}

/** A process node and core voltage. */
export interface EnergyNode {
  readonly process_nm: number;
  readonly vdd_v: number;
}

/**
 * The factor a dynamic energy stated at `from` takes at `to`: switched capacitance in proportion to
 * the feature size, times the voltage squared, `(nm / nm0) x (V / V0)^2` (first-order C V^2 scaling;
 * docs/energy.md says its limits).
 */
export function processScale(from: EnergyNode, to: EnergyNode): number {
  return (to.process_nm / from.process_nm) * (to.vdd_v / from.vdd_v) ** 2;
}

/**
 * The measures every component has, besides its model's counters: `ops` (messages serviced),
 * `bytes`, `flops`, `macs` (flops / 2 of a PE_GEMM), `macs.<dtype>` (a PE_GEMM's MACs on that
 * input dtype), `busy_ns` (time at work, summed over lanes) and `time_ns` (the simulated time).
 */
export const ENERGY_MEASURES: readonly string[] = ["ops", "bytes", "flops", "macs", "busy_ns", "time_ns"];

/** The units a cost's name may end with, and what one unit times its measure gives. */
export const ENERGY_UNITS = {
  /** pJ per unit of the measure. */
  pJ: "_pj",
  /** pJ per bit: the measure is in bytes, x 8. */
  "pJ/bit": "_pj_per_bit",
  /** mW over a time measure in ns: 1 mW x 1 ns = 1 pJ. */
  mW: "_mw",
} as const;

/** A cost's unit. */
export type EnergyUnit = keyof typeof ENERGY_UNITS;

const COST_NAME = /^[a-z][a-z0-9_]*$/;
const TIME_MEASURES = new Set(["busy_ns", "time_ns"]);

/** The unit a cost's name ends with, or null when it ends with none. */
export function energyUnitOf(name: string): EnergyUnit | null {
  if (name.endsWith(ENERGY_UNITS["pJ/bit"])) return "pJ/bit";
  if (name.endsWith(ENERGY_UNITS.pJ)) return "pJ";
  if (name.endsWith(ENERGY_UNITS.mW)) return "mW";
  return null;
}

/** pJ for `value` of a cost named `name` charged on `measure` units of its `per`. */
export function energyPj(name: string, value: number, measure: number): number {
  return energyUnitOf(name) === "pJ/bit" ? value * measure * 8 : value * measure;
}

/**
 * Checks an energy table: costs with snake_case names unique in it that end with a unit, a `per`,
 * a finite value >= 0, a description and a source; `_mw` costs charged on a time measure. Calls
 * `fail` (which throws) with what is wrong.
 */
export function checkEnergyTable(table: unknown, fail: (what: string) => never): void {
  const { costs, values, node } = (table ?? {}) as Partial<EnergyTable>;
  if (!Array.isArray(costs)) fail("energy must be { costs: [{ name, per, value, description, source }] }.");
  if (values !== undefined && typeof values !== "function")
    fail("energy.values must be a function of the params.");
  if (node !== undefined && !(positive(node.process_nm) && positive(node.vdd_v))) {
    fail(`energy.node must be { process_nm, vdd_v }, both > 0, got ${JSON.stringify(node)}.`);
  }
  const seen = new Set<string>();
  for (const cost of costs as unknown[]) {
    const { name, per, value, description, source } = (cost ?? {}) as Partial<EnergyCost>;
    const label = JSON.stringify(name);
    if (typeof name !== "string" || !COST_NAME.test(name) || seen.has(name)) {
      fail(`energy: each cost needs a snake_case name unique in the table, got ${label}.`);
    }
    seen.add(name);
    const unit = energyUnitOf(name);
    if (unit === null) fail(`energy: cost ${label} must end with its unit: _pj, _pj_per_bit or _mw.`);
    if (typeof per !== "string" || per === "")
      fail(`energy: cost ${label} needs per (a counter or a measure).`);
    if (unit === "mW" && !TIME_MEASURES.has(per)) {
      fail(
        `energy: cost ${label} is a power (mW): per must be time_ns or busy_ns, got ${JSON.stringify(per)}.`,
      );
    }
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      fail(`energy: cost ${label} needs a value >= 0, got ${JSON.stringify(value)}.`);
    }
    if (
      typeof description !== "string" ||
      description === "" ||
      typeof source !== "string" ||
      source === ""
    ) {
      fail(`energy: cost ${label} needs a description and a source (paper, datasheet, tool or assumption).`);
    }
  }
}

function positive(value: unknown): boolean {
  return typeof value === "number" && Number.isFinite(value) && value > 0;
}
