import { formatPercent } from "@kb/errors";
import * as z from "zod";

// The bottleneck verdict of a launch: which resource limited it, with its evidence. The rules
// (docs/reports.md "Bottleneck verdicts") read only busy fractions over the launch's window, so
// each can be tested on a crafted case.

/** A resource at or above this busy fraction is saturated. */
export const SATURATED = 0.7;

/** One lane of a kind (all PE_DMA read lanes) across the components that worked in the window. */
export interface EngineGroup {
  /** Component kind, e.g. `pe_dma`. */
  readonly kind: string;
  /** Lane name (`read`, `write`, `fetch`, `store`), or null for one-lane components. */
  readonly lane: string | null;
  /** Each component's busy fraction of that lane over the window, 0..1. */
  readonly members: readonly { readonly id: string; readonly utilisation: number }[];
}

/** What the verdict is decided from: busy fractions over a launch's kernel window. */
export interface BottleneckEvidence {
  readonly windowNs: number;
  /** Engine lanes by kind and lane, HBM controllers excluded. */
  readonly engines: readonly EngineGroup[];
  /** Each HBM controller that served the launch: the busy fraction of each pseudo-channel (port). */
  readonly hbmStacks: readonly { readonly id: string; readonly ports: readonly number[] }[];
  /** Each link that carried traffic (`src -> dst`) and its busy fraction. */
  readonly links: readonly { readonly name: string; readonly utilisation: number }[];
  /** HBM bytes / window / the peak of the stacks the launch touched (the launch's `achieved.hbmFraction`). */
  readonly hbmFraction: number;
  /**
   * The launch's shape: its programs and the PEs of its grid. A verdict on PE engines says when
   * the programs leave PEs idle (a tail wave, fewer programs than PEs) or the busiest PE works far
   * longer than the mean. Absent: no such note.
   */
  readonly launch?: { readonly programs: number; readonly pes: number };
}

/** A busiest PE at this multiple of the mean over the grid's PEs is an imbalance worth naming. */
export const IMBALANCE = 1.5;

/** Idle PE slots (a tail wave, PEs without a program) from this share on are worth naming. */
export const IDLE_SLOTS = 0.1;

/** The rules, in the order they are tried (docs/reports.md). */
export const VERDICT_RULES = [
  "hbm-hotspot",
  "hbm-bandwidth",
  "link",
  "compute",
  "latency",
  "unsaturated",
  "idle",
] as const;

/** `launches[i].verdict` of the results. */
export const verdictSchema = z
  .object({
    rule: z.enum(VERDICT_RULES).describe("The rule that decided it (docs/reports.md)."),
    resource: z
      .string()
      .describe(
        "The limiting resource: `<hbm_ctrl id> pc<N>`, a link `src -> dst`, a component kind with its lane (`pe_dma read`), or empty for idle.",
      ),
    utilisation: z.number().describe("Its busy fraction over the kernel window, 0..1."),
    text: z.string().describe("The verdict as kb run prints it, with its evidence."),
  })
  .describe("What limited the launch, decided from busy fractions over its kernel window.");

/** A bottleneck verdict. */
export type Verdict = z.infer<typeof verdictSchema>;

const pct = formatPercent;

/** Mean of `values` (0 when empty). */
function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** The kind as people write it: `pe_dma` -> `PE_DMA`. */
function kindName(kind: string): string {
  return kind.toUpperCase();
}

/** Where HBM stands, for the evidence of other verdicts. */
function hbmNote(evidence: BottleneckEvidence): string {
  return `HBM at ${pct(evidence.hbmFraction)} of peak`;
}

/**
 * Decides the verdict of a launch from its evidence. Resources whose busy time is their own
 * service (HBM pseudo-channels, links, PE_GEMM and PE_MATH) are tried first: the busiest of them,
 * when saturated (>= {@link SATURATED}), is the bottleneck. Otherwise an engine lane that is
 * saturated while waiting on them (a PE_DMA channel holds one copy at a time and is busy while it
 * is in flight) means the launch is latency-bound. Otherwise nothing was saturated.
 */
export function bottleneckVerdict(evidence: BottleneckEvidence): Verdict {
  // The busiest resource that serves on its own: pseudo-channel, link or compute engine.
  const found: { top: Top | null } = { top: null };
  const consider = (kind: Top["kind"], utilisation: number, index: number, sub: number) => {
    if (found.top === null || utilisation > found.top.utilisation)
      found.top = { kind, utilisation, index, sub };
  };
  for (const [index, stack] of evidence.hbmStacks.entries())
    for (const [port, utilisation] of stack.ports.entries()) consider("hbm", utilisation, index, port);
  for (const [index, link] of evidence.links.entries()) consider("link", link.utilisation, index, 0);
  for (const [index, group] of evidence.engines.entries()) {
    if (!COMPUTE.has(group.kind)) continue;
    for (const [sub, member] of group.members.entries()) consider("compute", member.utilisation, index, sub);
  }
  const top = found.top;
  if (top !== null && top.utilisation >= SATURATED) {
    if (top.kind === "hbm") return hbmVerdict(evidence, top.index, top.sub);
    if (top.kind === "link") return linkVerdict(evidence, top.index);
    return groupVerdict(evidence, evidence.engines[top.index] as EngineGroup, "compute");
  }
  // An engine lane saturated while what it waits on is not: latency.
  let busiestGroup: { group: EngineGroup; max: number } | null = null;
  for (const group of evidence.engines) {
    if (COMPUTE.has(group.kind)) continue;
    const max = Math.max(0, ...group.members.map((member) => member.utilisation));
    if (busiestGroup === null || max > busiestGroup.max) busiestGroup = { group, max };
  }
  if (busiestGroup !== null && busiestGroup.max >= SATURATED && busiestGroup.max > (top?.utilisation ?? 0)) {
    return groupVerdict(evidence, busiestGroup.group, "latency");
  }
  // Nothing saturated: name the busiest thing anyway.
  const candidates: { resource: string; utilisation: number; label: string }[] = [];
  if (top !== null) candidates.push(topCandidate(evidence, top));
  if (busiestGroup !== null) {
    const { group, max } = busiestGroup;
    candidates.push({ resource: groupResource(group), utilisation: max, label: groupLabel(group) });
  }
  const busiest = candidates.sort((a, b) => b.utilisation - a.utilisation)[0];
  if (busiest === undefined || busiest.utilisation <= 0) {
    return {
      rule: "idle",
      resource: "",
      utilisation: 0,
      text: `nothing was busy during the ${evidence.windowNs > 0 ? "launch" : "empty launch window"}: no lane, pseudo-channel or link did work`,
    };
  }
  return {
    rule: "unsaturated",
    resource: busiest.resource,
    utilisation: busiest.utilisation,
    text: `no resource saturated: the busiest, ${busiest.label}, was ${pct(busiest.utilisation)} busy, ${hbmNote(evidence)} (latency or dependencies between operations leave the hardware idle)`,
  };
}

/** Kinds whose busy time is their own service, tried with the pseudo-channels and links. */
const COMPUTE = new Set(["pe_gemm", "pe_math"]);

/** The busiest self-serving resource: a pseudo-channel (stack index, port), a link or a compute engine (group, member). */
interface Top {
  readonly kind: "hbm" | "link" | "compute";
  readonly utilisation: number;
  readonly index: number;
  readonly sub: number;
}

function hbmVerdict(evidence: BottleneckEvidence, index: number, port: number): Verdict {
  const stack = evidence.hbmStacks[index] as BottleneckEvidence["hbmStacks"][number];
  const utilisation = stack.ports[port] as number;
  const others = stack.ports.filter((_, p) => p !== port);
  const othersMean = mean(others);
  if (others.length > 0 && othersMean <= utilisation / 2) {
    return {
      rule: "hbm-hotspot",
      resource: `${stack.id} pc${port}`,
      utilisation,
      text: `bound by ${stack.id} HBM pseudo-channel ${port}: ${pct(utilisation)} busy while the other ${others.length} average ${pct(othersMean)} (address mapping hotspot: the launch's addresses fall on few pseudo-channels)`,
    };
  }
  const all = evidence.hbmStacks.flatMap((s) => s.ports);
  const stacks = evidence.hbmStacks.length;
  return {
    rule: "hbm-bandwidth",
    resource: `${stack.id} pc${port}`,
    utilisation,
    text: `bound by HBM bandwidth: ${all.length} pseudo-channels on ${stacks} stack${stacks === 1 ? "" : "s"} ${pct(mean(all))} busy on average (busiest ${stack.id} pc${port} at ${pct(utilisation)}), ${hbmNote(evidence)}`,
  };
}

function linkVerdict(evidence: BottleneckEvidence, index: number): Verdict {
  const link = evidence.links[index] as BottleneckEvidence["links"][number];
  const saturated = evidence.links.filter((other) => other.utilisation >= SATURATED).length;
  return {
    rule: "link",
    resource: link.name,
    utilisation: link.utilisation,
    text: `bound by link ${link.name}: ${pct(link.utilisation)} busy (${saturated} of ${evidence.links.length} links used are at ${pct(SATURATED)} or more), ${hbmNote(evidence)}`,
  };
}

/** `pe_dma read`, or `pe_gemm`. */
function groupResource(group: EngineGroup): string {
  return group.lane === null ? group.kind : `${group.kind} ${group.lane}`;
}

/** `PE_DMA read lanes`, or `PE_GEMM`. */
function groupLabel(group: EngineGroup): string {
  return group.lane === null ? kindName(group.kind) : `${kindName(group.kind)} ${group.lane} lanes`;
}

/** A verdict on a group: how busy its busiest members are and on how many of them. */
function groupVerdict(
  evidence: BottleneckEvidence,
  group: EngineGroup,
  rule: "compute" | "latency",
): Verdict {
  const max = Math.max(...group.members.map((member) => member.utilisation));
  // The members within 10 points of the busiest carry the bottleneck.
  const near = group.members.filter((member) => member.utilisation >= max - 0.1);
  const where = `${near.length}/${group.members.length} ${group.kind.startsWith("pe_") ? "PEs" : "instances"}`;
  const busy = `${pct(mean(near.map((member) => member.utilisation)))} busy on ${where}`;
  const why =
    rule === "compute"
      ? ""
      : group.kind === "pe_dma"
        ? " (latency: each PE_DMA channel has one copy in flight at a time; more PEs, larger tiles or tl.loadAsync overlap more)"
        : " (latency: the lane is busy waiting on the stages it feeds, which are not saturated)";
  return {
    rule,
    resource: groupResource(group),
    utilisation: max,
    text: `bound by ${groupLabel(group)}: ${busy}, ${hbmNote(evidence)}${why}${shapeNote(evidence, group)}`,
  };
}

/**
 * What the launch's shape does to a PE engine group: ` (tail: 19 programs on 16 PEs run in 2
 * waves, the last with 3; 40.6% of PE slots idle)`, ` (3 programs on 16 PEs: 13 PEs had none)`,
 * or ` (imbalance: the busiest PE 90.0% busy, the mean over 16 PEs 20.0%)`; empty otherwise.
 */
function shapeNote(evidence: BottleneckEvidence, group: EngineGroup): string {
  const shape = evidence.launch;
  if (shape === undefined || !group.kind.startsWith("pe_") || shape.pes < 2 || shape.programs < 1) return "";
  const { programs, pes } = shape;
  if (programs < pes) {
    return ` (${programs} program${programs === 1 ? "" : "s"} on ${pes} PEs: ${pes - programs} PEs had none)`;
  }
  const waves = Math.ceil(programs / pes);
  const idle = (waves * pes - programs) / (waves * pes);
  if (idle >= IDLE_SLOTS) {
    const last = programs - (waves - 1) * pes;
    return ` (tail: ${programs} programs on ${pes} PEs run in ${waves} waves, the last with ${last}; ${pct(idle)} of PE slots idle)`;
  }
  const max = Math.max(...group.members.map((member) => member.utilisation));
  const meanOverGrid = group.members.reduce((sum, member) => sum + member.utilisation, 0) / pes;
  if (meanOverGrid > 0 && max >= IMBALANCE * meanOverGrid) {
    return ` (imbalance: the busiest PE ${pct(max)} busy, the mean over ${pes} PEs ${pct(meanOverGrid)})`;
  }
  return "";
}

function topCandidate(
  evidence: BottleneckEvidence,
  top: Top,
): { resource: string; utilisation: number; label: string } {
  if (top.kind === "hbm") {
    const id = (evidence.hbmStacks[top.index] as BottleneckEvidence["hbmStacks"][number]).id;
    return {
      resource: `${id} pc${top.sub}`,
      utilisation: top.utilisation,
      label: `${id} HBM pseudo-channel ${top.sub}`,
    };
  }
  if (top.kind === "link") {
    const name = (evidence.links[top.index] as BottleneckEvidence["links"][number]).name;
    return { resource: name, utilisation: top.utilisation, label: `link ${name}` };
  }
  const group = evidence.engines[top.index] as EngineGroup;
  return { resource: groupResource(group), utilisation: top.utilisation, label: groupLabel(group) };
}
