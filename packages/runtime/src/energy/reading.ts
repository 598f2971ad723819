import { type Component, gemmTimingOf, type Machine } from "@kb/components";
import { energyPj } from "@kb/spec";
import type { TopologyEdge } from "@kb/topology";
import { type EnergyPlan, energyPlanOf, type PlannedCost } from "./plan.js";

// What the machine has spent up to an instant, per cost: each cost's value times its measure now
// (static power times the simulated time). The energy of a window is the difference of two readings.

/** pJ spent up to `nowNs`, per component (in the plan's order) and cost, and per link cost. */
export interface EnergyReading {
  readonly nowNs: number;
  readonly components: readonly Float64Array[];
  readonly links: Float64Array;
}

/** The class of a link, by its ends: how its bits are charged (docs/energy.md, Links). */
export type LinkClass = "on_die" | "ucie" | "package" | "sip_link" | "host_link";

/** The class of `edge`: host <-> IO_CPU, IO_CPU <-> IO_CPU, IO_CPU <-> a cube, cube <-> cube, or within a cube. */
export function linkClassOf(edge: Pick<TopologyEdge, "src" | "dst">): LinkClass {
  if (edge.src === "host" || edge.dst === "host") return "host_link";
  const a = cubeOf(edge.src);
  const b = cubeOf(edge.dst);
  if (a === null && b === null) return "sip_link";
  if (a === null || b === null) return "package";
  return a === b ? "on_die" : "ucie";
}

/** `sip0.cube1` of a node id under a cube; null for a node outside every cube (an IO_CPU, the host). */
function cubeOf(id: string): string | null {
  const match = /^(sip\d+\.cube\d+)(\.|$)/.exec(id);
  return match === null ? null : (match[1] as string);
}

/** The energy spent by `machine` up to now. */
export function readEnergy(machine: Machine): EnergyReading {
  const plan = energyPlanOf(machine);
  const nowNs = machine.env.now;
  const components = plan.components.map(({ component, costs }) => {
    const measure = measures(component, costs, nowNs);
    return Float64Array.from(costs, (cost) => energyPj(cost.name, cost.value, measure(cost.per)));
  });
  return { nowNs, components, links: readLinks(machine, plan) };
}

function readLinks(machine: Machine, plan: EnergyPlan): Float64Array {
  const bytes = new Map<string, number>();
  let bytesMm = 0;
  for (const link of machine.fabric.usedLinks()) {
    const kind = linkClassOf(link.edge);
    if (kind === "on_die") bytesMm += link.bytes * link.edge.lengthMm;
    else bytes.set(`bytes.${kind}`, (bytes.get(`bytes.${kind}`) ?? 0) + link.bytes);
  }
  return Float64Array.from(plan.links, (cost) =>
    energyPj(cost.name, cost.value, cost.per === "bytes_mm" ? bytesMm : (bytes.get(cost.per) ?? 0)),
  );
}

/** How much of each measure `component` has done by `nowNs`. */
function measures(
  component: Component,
  costs: readonly PlannedCost[],
  nowNs: number,
): (per: string) => number {
  const { ops, bytes, flops, busyNs } = component.stats;
  let counters: Map<string, number> | null = null;
  let byDtype: Readonly<Record<string, number>> | null | undefined;
  const dtypeMacs = (): Readonly<Record<string, number>> | null => {
    byDtype ??= gemmTimingOf(component)?.flopsByDtype ?? null;
    return byDtype;
  };
  return (per) => {
    switch (per) {
      case "ops":
        return ops;
      case "bytes":
        return bytes;
      case "flops":
        return flops;
      case "macs":
        return flops / 2;
      case "busy_ns":
        return busyNs;
      case "time_ns":
        return nowNs;
      case "macs.other": {
        // MACs on the dtypes no cost of the table names (all of them when the impl does not say).
        const known = dtypeMacs();
        if (known === null) return flops / 2;
        let named = 0;
        for (const cost of costs) {
          if (cost.per.startsWith("macs.") && cost.per !== "macs.other") {
            named += known[cost.per.slice("macs.".length)] ?? 0;
          }
        }
        return flops / 2 - named / 2;
      }
    }
    if (per.startsWith("macs.")) return (dtypeMacs()?.[per.slice("macs.".length)] ?? 0) / 2;
    counters ??= new Map(component.modelStats().map((stat) => [stat.name, stat.total]));
    return counters.get(per) ?? 0;
  };
}

/** pJ between two readings, per component and cost, and per link cost. */
export function energyBetween(before: EnergyReading | null, after: EnergyReading): EnergyReading {
  if (before === null) return after;
  return {
    nowNs: after.nowNs - before.nowNs,
    components: after.components.map((row, i) => {
      const was = before.components[i] as Float64Array;
      return row.map((value, j) => value - (was[j] ?? 0));
    }),
    links: after.links.map((value, j) => value - (before.links[j] ?? 0)),
  };
}
