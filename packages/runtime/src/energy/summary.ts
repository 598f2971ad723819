import type { Machine } from "@kb/components";
import * as z from "zod";
import { energyPlanOf } from "./plan.js";
import { type EnergyReading, energyBetween, readEnergy } from "./reading.js";

// The energy sections of the results (docs/energy.md, Reports): per run, per launch, per kind,
// per component and per link class, in joules.

const PJ = 1e-12;

const splitShape = {
  totalJ: z.number().describe("Dynamic plus static energy, J."),
  dynamicJ: z.number().describe("Energy of the actions counted (MACs, bytes, DRAM commands, messages), J."),
  staticJ: z.number().describe("Static (leakage, standby) power times the time, J."),
};

/** `launches[i].energy`: the launch's window, from its start to its last PE's completion. */
export const launchEnergySchema = z
  .object({
    ...splitShape,
    averagePowerW: z.number().describe("totalJ over the launch's window, W."),
  })
  .describe("Energy of the launch's window (every component's static power in it, the actions done in it).");

/** `components[i].energy`. */
export const componentEnergySchema = z
  .object({
    ...splitShape,
    byCost: z
      .record(z.string(), z.number())
      .describe(
        "J per cost of the component's table (act_pj, static_mw, ...: `kb components list` shows them).",
      ),
  })
  .optional()
  .describe("The component's energy over the run; absent in results written before energy was reported.");

const kindEnergy = z.object({ count: z.number().int(), ...splitShape });

/** `energy` of the results. */
export const runEnergySchema = z
  .object({
    processNm: z
      .number()
      .describe("The process node the logic costs were scaled to (topology energy.process_nm)."),
    vddV: z.number().describe("The logic's supply (topology energy.vdd_v), V."),
    ...splitShape,
    averagePowerW: z.number().describe("totalJ / simulated time, W."),
    edpJs: z.number().describe("Energy-delay product: totalJ x simulated time in s, J s."),
    tokens: z.number().nullable().describe("Tokens the bench says it processed; null when it does not say."),
    jPerToken: z.number().nullable().describe("totalJ / tokens; null without tokens."),
    byKind: z
      .record(z.string(), kindEnergy)
      .describe("Per component kind (every component, idle ones with their static power), and `links`: J."),
    busiest: z
      .array(z.object({ id: z.string(), kind: z.string(), impl: z.string(), ...splitShape }))
      .describe("The ten components that spent the most, most first (ties by id)."),
    links: z
      .record(z.string(), z.number())
      .describe(
        "J per link cost: wire_pj_per_bit (on-die, per mm), ucie_pj_per_bit, package_pj_per_bit, ...",
      ),
  })
  .optional()
  .describe(
    "Energy of the run from the counters and each component's energy table (docs/energy.md); absent in results written before energy was reported.",
  );

/** The run's energy section. */
export type RunEnergy = NonNullable<z.infer<typeof runEnergySchema>>;
/** A launch's energy. */
export type LaunchEnergy = z.infer<typeof launchEnergySchema>;
/** A component's energy. */
export type ComponentEnergy = NonNullable<z.infer<typeof componentEnergySchema>>;

interface Split {
  totalJ: number;
  dynamicJ: number;
  staticJ: number;
}

/** Splits one component's (or the links') pJ per cost into J, static being the costs on time_ns. */
function split(values: Float64Array, pers: readonly string[]): Split {
  let dynamicJ = 0;
  let staticJ = 0;
  values.forEach((pj, i) => {
    if (pers[i] === "time_ns") staticJ += pj * PJ;
    else dynamicJ += pj * PJ;
  });
  return { totalJ: dynamicJ + staticJ, dynamicJ, staticJ };
}

/** The energy of a window (a launch), from the reading at its start. */
export function launchEnergy(machine: Machine, before: EnergyReading): LaunchEnergy {
  const window = energyBetween(before, readEnergy(machine));
  const total = sumReading(machine, window);
  return { ...total, averagePowerW: window.nowNs > 0 ? total.totalJ / (window.nowNs * 1e-9) : 0 };
}

function sumReading(machine: Machine, reading: EnergyReading): Split {
  const plan = energyPlanOf(machine);
  const out: Split = { totalJ: 0, dynamicJ: 0, staticJ: 0 };
  const add = (part: Split) => {
    out.totalJ += part.totalJ;
    out.dynamicJ += part.dynamicJ;
    out.staticJ += part.staticJ;
  };
  plan.components.forEach(({ costs }, i) => {
    add(
      split(
        reading.components[i] as Float64Array,
        costs.map((cost) => cost.per),
      ),
    );
  });
  add(
    split(
      reading.links,
      plan.links.map((cost) => cost.per),
    ),
  );
  return out;
}

/** The whole run's energy: the run section and each component's (by id). */
export function runEnergy(
  machine: Machine,
  tokens: number | null,
): { readonly run: RunEnergy; readonly byComponent: ReadonlyMap<string, ComponentEnergy> } {
  const plan = energyPlanOf(machine);
  const reading = readEnergy(machine);
  const byComponent = new Map<string, ComponentEnergy>();
  const byKind: Record<string, Split & { count: number }> = {};
  const rows: {
    id: string;
    kind: string;
    impl: string;
    totalJ: number;
    dynamicJ: number;
    staticJ: number;
  }[] = [];
  plan.components.forEach(({ component, costs }, i) => {
    const values = reading.components[i] as Float64Array;
    const part = split(
      values,
      costs.map((cost) => cost.per),
    );
    const byCost: Record<string, number> = {};
    costs.forEach((cost, j) => {
      byCost[cost.name] = (values[j] ?? 0) * PJ;
    });
    byComponent.set(component.id, { ...part, byCost });
    const kind = byKind[component.kind] ?? { count: 0, totalJ: 0, dynamicJ: 0, staticJ: 0 };
    byKind[component.kind] = kind;
    kind.count += 1;
    kind.totalJ += part.totalJ;
    kind.dynamicJ += part.dynamicJ;
    kind.staticJ += part.staticJ;
    rows.push({ id: component.id, kind: component.kind, impl: component.impl, ...part });
  });
  const links: Record<string, number> = {};
  plan.links.forEach((cost, j) => {
    links[cost.name] = (reading.links[j] ?? 0) * PJ;
  });
  const linkSplit = split(
    reading.links,
    plan.links.map((cost) => cost.per),
  );
  byKind.links = { count: machine.fabric.usedLinks().length, ...linkSplit };
  const total = sumReading(machine, reading);
  const seconds = reading.nowNs * 1e-9;
  rows.sort((a, b) => b.totalJ - a.totalJ || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    run: {
      processNm: plan.node.process_nm,
      vddV: plan.node.vdd_v,
      ...total,
      averagePowerW: seconds > 0 ? total.totalJ / seconds : 0,
      edpJs: total.totalJ * seconds,
      tokens,
      jPerToken: tokens !== null && tokens > 0 ? total.totalJ / tokens : null,
      byKind,
      busiest: rows.slice(0, 10),
      links,
    },
    byComponent,
  };
}
