import { type Component, type Machine, MemoryComponent } from "@kb/components";
import type { BottleneckEvidence, EngineGroup } from "../bottleneck.js";

// How busy each lane, HBM pseudo-channel and link was during a launch: the difference of the
// busy counters at its start and end, over its kernel window. The bottleneck verdict reads it.

/** Busy counters of every component lane and link at an instant. */
export interface BusySnapshot {
  /** `laneBusyNs` of every component, concatenated in `machine.components` order. */
  readonly lanes: Float64Array;
  /** `stats.ops` of every component. */
  readonly ops: Float64Array;
  /** busyNs of each link that had carried traffic, by edge `src -> dst`. */
  readonly links: ReadonlyMap<string, number>;
}

/** @internal The busy counters now. */
export function snapshotBusy(machine: Machine): BusySnapshot {
  const components = machine.components;
  let total = 0;
  for (const component of components) total += component.laneBusyNs.length;
  const lanes = new Float64Array(total);
  const ops = new Float64Array(components.length);
  let offset = 0;
  components.forEach((component, index) => {
    lanes.set(component.laneBusyNs, offset);
    offset += component.laneBusyNs.length;
    ops[index] = component.stats.ops;
  });
  const links = new Map<string, number>();
  for (const link of machine.fabric.usedLinks()) links.set(linkName(link.edge), link.busyNs);
  return { lanes, ops, links };
}

function linkName(edge: { readonly src: string; readonly dst: string }): string {
  return `${edge.src} -> ${edge.dst}`;
}

/**
 * @internal The evidence of a launch's window: the busy fraction of each lane of the components
 * that serviced a message during it, grouped by kind and lane name; each HBM stack's
 * pseudo-channels; each link that carried traffic. `hbmFraction` is the launch's
 * `achieved.hbmFraction`.
 */
export function busyEvidence(
  machine: Machine,
  before: BusySnapshot,
  windowNs: number,
  hbmFraction: number,
  launch?: BottleneckEvidence["launch"],
): BottleneckEvidence {
  const groups = new Map<string, EngineGroup & { members: { id: string; utilisation: number }[] }>();
  const hbmStacks: { id: string; ports: number[] }[] = [];
  const per = (busyNs: number) => (windowNs > 0 ? Math.min(1, Math.max(0, busyNs / windowNs)) : 0);
  let offset = 0;
  machine.components.forEach((component: Component, index) => {
    const count = component.laneBusyNs.length;
    const start = offset;
    offset += count;
    if (component.stats.ops === before.ops[index]) return;
    const busy = (lane: number) =>
      per((component.laneBusyNs[lane] as number) - (before.lanes[start + lane] as number));
    if (component instanceof MemoryComponent && component.kind === "hbm_ctrl") {
      hbmStacks.push({ id: component.id, ports: Array.from({ length: count }, (_, lane) => busy(lane)) });
      return;
    }
    for (let lane = 0; lane < count; lane++) {
      const laneName = count > 1 ? component.laneName(lane) : null;
      const key = `${component.kind}\u0000${laneName ?? ""}`;
      let group = groups.get(key);
      if (group === undefined) {
        group = { kind: component.kind, lane: laneName, members: [] };
        groups.set(key, group);
      }
      group.members.push({ id: component.id, utilisation: busy(lane) });
    }
  });
  const links: { name: string; utilisation: number }[] = [];
  for (const link of machine.fabric.usedLinks()) {
    const name = linkName(link.edge);
    const was = before.links.get(name) ?? 0;
    if (link.busyNs > was) links.push({ name, utilisation: per(link.busyNs - was) });
  }
  return {
    windowNs,
    engines: [...groups.values()],
    hbmStacks,
    links,
    hbmFraction,
    ...(launch !== undefined ? { launch } : {}),
  };
}
