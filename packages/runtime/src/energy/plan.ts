import { BUILTIN_KIND_ENERGY, LINK_ENERGY, WIRE_ENERGY } from "@kb/builtins";
import type { Component, Machine } from "@kb/components";
import { KbError } from "@kb/errors";
import { type EnergyNode, type EnergyTable, processScale } from "@kb/spec";

// The energy costs of a machine (docs/energy.md): each component's table (its impl's own, or the
// built-in table of its kind), with the values its params give, scaled to the topology's process
// node when the table states one, then replaced by the topology's `energy.costs`.

/** One cost as a run charges it. */
export interface PlannedCost {
  readonly name: string;
  readonly per: string;
  /** The value in the unit the name ends with, after params, scaling and overrides. */
  readonly value: number;
}

/** The costs of one component. */
export interface ComponentEnergyPlan {
  readonly component: Component;
  readonly costs: readonly PlannedCost[];
}

/** The costs of a machine's components and links. */
export interface EnergyPlan {
  readonly node: EnergyNode;
  readonly components: readonly ComponentEnergyPlan[];
  readonly links: readonly PlannedCost[];
}

/** The `costs` key of the links' table and of the on-die wires'. */
export const LINKS_KEY = "links";
export const WIRES_KEY = "wires";

const plans = new WeakMap<Machine, EnergyPlan>();

/** The energy plan of `machine` (made once per machine). Throws `TOPOLOGY_INVALID` for an unknown override. */
export function energyPlanOf(machine: Machine): EnergyPlan {
  let plan = plans.get(machine);
  if (plan === undefined) {
    plan = makePlan(machine);
    plans.set(machine, plan);
  }
  return plan;
}

function makePlan(machine: Machine): EnergyPlan {
  const energy = machine.graph.topology.energy;
  const node: EnergyNode = { process_nm: energy.process_nm, vdd_v: energy.vdd_v };
  const overrides = energy.costs;
  const used = new Set<string>();
  const apply = (table: EnergyTable, keys: readonly string[], params: unknown): PlannedCost[] => {
    const values = table.values?.(params) ?? {};
    const scale = table.node === undefined ? 1 : processScale(table.node, node);
    return table.costs.map((cost) => {
      let value = (values[cost.name] ?? cost.value) * scale;
      for (const key of keys) {
        const given = overrides[key]?.[cost.name];
        if (given !== undefined) {
          value = given;
          used.add(`${key}.${cost.name}`);
        }
      }
      return { name: cost.name, per: cost.per, value };
    });
  };
  const components = machine.components.map((component) => {
    const table = tableOf(machine, component);
    const costs = table === undefined ? [] : apply(table, [component.kind, component.impl], component.params);
    return { component, costs };
  });
  const links = [...apply(WIRE_ENERGY, [WIRES_KEY], {}), ...apply(LINK_ENERGY, [LINKS_KEY], {})];
  checkOverrides(machine, overrides, used);
  return { node, components, links };
}

/** The table a component is charged with: its impl's own, else the built-in table of its kind. */
export function tableOf(machine: Machine, component: Component): EnergyTable | undefined {
  const definition = machine.registry.resolve(component.node);
  return definition.energy ?? BUILTIN_KIND_ENERGY[component.kind];
}

/** A `TOPOLOGY_INVALID` for each override no table of the machine has, listing the names it could be. */
function checkOverrides(
  machine: Machine,
  overrides: Readonly<Record<string, Readonly<Record<string, number>>>>,
  used: ReadonlySet<string>,
): void {
  for (const [key, costs] of Object.entries(overrides)) {
    for (const name of Object.keys(costs)) {
      if (used.has(`${key}.${name}`)) continue;
      const known = knownCosts(machine, key);
      const hint =
        known === null
          ? `no component of this topology has kind or impl "${key}" (nor is it "${LINKS_KEY}" or "${WIRES_KEY}")`
          : `the table of "${key}" has ${known.join(", ")}`;
      throw new KbError(
        "TOPOLOGY_INVALID",
        `energy.costs.${key}.${name}: ${hint}; \`kb components list\` shows every table with its units.`,
      );
    }
  }
}

function knownCosts(machine: Machine, key: string): string[] | null {
  if (key === LINKS_KEY) return LINK_ENERGY.costs.map((cost) => cost.name);
  if (key === WIRES_KEY) return WIRE_ENERGY.costs.map((cost) => cost.name);
  const component = machine.components.find((each) => each.kind === key || each.impl === key);
  if (component === undefined) return null;
  return (tableOf(machine, component)?.costs ?? []).map((cost) => cost.name);
}
