import type { Component } from "./component.js";
import { checkModelStats, type ModelStat } from "./model-stats.js";
import type { Link } from "./packet.js";

// What `Machine.stats()` reports: per component (and per lane), per link, per kind with the
// spread over instances and lanes.

/** One lane of a component after a run (reported for components with more than one lane). */
export interface LaneReport {
  /** The lane's name (`Component.laneName`): `read`/`write` on PE_DMA, `pc3` on an HBM controller. */
  readonly name: string;
  readonly busyNs: number;
  /** busyNs / simulated time, 0..1. */
  readonly utilisation: number;
}

/** The counters of a component (`Component.stats`), or their sums over a kind. */
export interface CounterReport {
  readonly busyNs: number;
  readonly ops: number;
  readonly bytes: number;
  readonly queueFullStalls: number;
  /** Arithmetic operations (compute engines). */
  readonly flops: number;
}

/** Statistics of one component after a run. */
export interface ComponentReport extends CounterReport {
  readonly id: string;
  readonly kind: string;
  readonly impl: string;
  /** busyNs / (lanes x simulated time), 0..1. */
  readonly utilisation: number;
  /**
   * Each lane on its own, for components with more than one lane whose busy time is counted per
   * lane (`Component.laneBusyNs` adds up to `busyNs`); absent otherwise.
   */
  readonly lanes?: readonly LaneReport[];
  /**
   * The counters the component's model publishes (`Component.modelStats()`: a memory model's or
   * stage engine's `stats()`), checked and copied; absent when it publishes none.
   */
  readonly stats?: readonly ModelStat[];
}

/** Statistics of one directed link after a run (only links that carried packets). */
export interface LinkReport {
  readonly src: string;
  readonly dst: string;
  readonly bwGbs: number;
  readonly bytes: number;
  readonly packets: number;
  readonly busyNs: number;
  readonly utilisation: number;
}

/** Mean, max and min of a utilisation over a set, with where the max and the min are. */
export interface Spread {
  /** Members of the set. */
  readonly count: number;
  readonly mean: number;
  readonly max: number;
  readonly min: number;
  /** The member with the max (the first in id order on a tie): a component id, or `id lane` for a lane. */
  readonly busiest: string;
  /** The member with the min. */
  readonly idlest: string;
}

/** Per-kind totals, and how the utilisation spreads over the kind's components and their lanes. */
export interface KindReport extends CounterReport {
  readonly kind: string;
  readonly count: number;
  /** Mean utilisation over the kind's components. */
  readonly utilisation: number;
  /** Utilisation over the kind's components (each component's mean over its lanes). */
  readonly instances: Spread;
  /**
   * Utilisation over every lane of the kind's components (a one-lane component is one lane):
   * a PE_DMA read lane at 92% shows here while the component's mean over read and write is 46%.
   */
  readonly lanes: Spread;
}

/** What `Machine.stats()` returns. */
export interface MachineStats {
  readonly simTimeNs: number;
  readonly events: number;
  readonly components: readonly ComponentReport[];
  readonly links: readonly LinkReport[];
  readonly byKind: readonly KindReport[];
}

/** The reports of `components` and `links` after `simTimeNs` of simulated time. */
export function machineStats(
  components: readonly Component[],
  links: readonly Link[],
  simTimeNs: number,
  events: number,
): MachineStats {
  const perTime = (busyNs: number) => (simTimeNs > 0 ? busyNs / simTimeNs : 0);
  const reports: ComponentReport[] = components.map((component) => {
    const { busyNs, ops, bytes, queueFullStalls, flops } = component.stats;
    const lanes = laneReports(component, perTime);
    const published = modelStatsOf(component);
    return {
      id: component.id,
      kind: component.kind,
      impl: component.impl,
      busyNs,
      ops,
      bytes,
      queueFullStalls,
      flops,
      utilisation: perTime(busyNs) / component.lanes.length,
      ...(lanes === null ? {} : { lanes }),
      ...(published.length === 0 ? {} : { stats: published }),
    };
  });
  const linkReports: LinkReport[] = links
    .map((link) => ({
      src: link.edge.src,
      dst: link.edge.dst,
      bwGbs: link.edge.bwGbs,
      bytes: link.bytes,
      packets: link.packets,
      busyNs: link.busyNs,
      utilisation: Math.min(1, perTime(link.busyNs)),
    }))
    .sort((a, b) => (a.src === b.src ? compare(a.dst, b.dst) : compare(a.src, b.src)));
  const kinds = new Map<string, ComponentReport[]>();
  for (const report of reports) {
    const list = kinds.get(report.kind);
    if (list === undefined) kinds.set(report.kind, [report]);
    else list.push(report);
  }
  const byKind: KindReport[] = [...kinds]
    .map(([kind, list]) => kindReport(kind, list))
    .sort((a, b) => compare(a.kind, b.kind));
  return { simTimeNs, events, components: reports, links: linkReports, byKind };
}

/** A component's model counters, checked (a `MACHINE_INVARIANT` names the impl and the node). */
function modelStatsOf(component: Component): ModelStat[] {
  return checkModelStats(component.modelStats(), `${component.kind} ${component.impl}`, component.id);
}

/** The lanes of a multi-lane component whose per-lane busy time adds up to its busyNs; else null. */
function laneReports(component: Component, perTime: (busyNs: number) => number): LaneReport[] | null {
  const count = component.lanes.length;
  if (count < 2) return null;
  let sum = 0;
  for (const busy of component.laneBusyNs) sum += busy;
  const total = component.stats.busyNs;
  if (Math.abs(sum - total) > 1e-6 * Math.max(1, total)) return null;
  return Array.from(component.laneBusyNs, (busyNs, index) => ({
    name: component.laneName(index),
    busyNs,
    utilisation: perTime(busyNs),
  }));
}

function kindReport(kind: string, list: readonly ComponentReport[]): KindReport {
  let busyNs = 0;
  let ops = 0;
  let bytes = 0;
  let stalls = 0;
  let flops = 0;
  const instances = new SpreadBuilder();
  const lanes = new SpreadBuilder();
  for (const report of list) {
    busyNs += report.busyNs;
    ops += report.ops;
    bytes += report.bytes;
    stalls += report.queueFullStalls;
    flops += report.flops;
    instances.add(report.id, report.utilisation);
    if (report.lanes === undefined) lanes.add(report.id, report.utilisation);
    else for (const lane of report.lanes) lanes.add(`${report.id} ${lane.name}`, lane.utilisation);
  }
  const spread = instances.build();
  return {
    kind,
    count: list.length,
    busyNs,
    ops,
    bytes,
    queueFullStalls: stalls,
    flops,
    utilisation: spread.mean,
    instances: spread,
    lanes: lanes.build(),
  };
}

/** Accumulates a {@link Spread}. */
export class SpreadBuilder {
  private count = 0;
  private sum = 0;
  private max = Number.NEGATIVE_INFINITY;
  private min = Number.POSITIVE_INFINITY;
  private busiest = "";
  private idlest = "";

  add(name: string, value: number): void {
    this.count++;
    this.sum += value;
    if (value > this.max || (value === this.max && name < this.busiest)) {
      this.max = value;
      this.busiest = name;
    }
    if (value < this.min || (value === this.min && name < this.idlest)) {
      this.min = value;
      this.idlest = name;
    }
  }

  build(): Spread {
    if (this.count === 0) return { count: 0, mean: 0, max: 0, min: 0, busiest: "", idlest: "" };
    return {
      count: this.count,
      mean: this.sum / this.count,
      max: this.max,
      min: this.min,
      busiest: this.busiest,
      idlest: this.idlest,
    };
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
