// The saturation rule and the targets of `pnpm bench:noc` (../shared/fidelity/noc/README.md,
// "Saturation rule and targets"), applied alike to the bench's points and the reference's.

/** A point in reference.json's schema. */
export interface NocPoint {
  readonly mesh: string;
  readonly routing: string;
  readonly traffic: string;
  readonly packet_flits: number;
  readonly offered: number;
  readonly accepted: number;
  readonly packet_latency: number;
  readonly network_latency: number;
  readonly flit_latency: number;
  readonly saturated: boolean;
}

/** The figures of one (mesh, routing, traffic, packet size). */
export interface NocSummary {
  readonly mesh: string;
  readonly routing: string;
  readonly traffic: string;
  readonly packet_flits: number;
  readonly zero_load_offered: number;
  readonly zero_load_latency: number;
  readonly saturation_throughput: number;
  readonly next_offered_above: number | null;
}

/** The targets (reference.json's `targets`). */
export const TARGETS = {
  zeroLoad: 0.02,
  saturation: 0.1,
  latency: 0.15,
  latencyUpToFractionOfSaturation: 0.8,
} as const;

/** The key of a point's series: mesh, routing, traffic and packet size. */
export function seriesKey(point: Pick<NocPoint, "mesh" | "routing" | "traffic" | "packet_flits">): string {
  return `${point.mesh}|${point.routing}|${point.traffic}|${point.packet_flits}`;
}

/** Whether a point passes: accepted >= 0.99 x offered and latency < 3 x zero-load. */
export function passes(
  point: Pick<NocPoint, "offered" | "accepted" | "packet_latency">,
  zeroLoad: number,
): boolean {
  return point.accepted >= 0.99 * point.offered && point.packet_latency < 3 * zeroLoad;
}

/** The summary of one series' points (any order): zero-load at the lowest rate, saturation by the rule. */
export function summarise(points: readonly NocPoint[]): NocSummary {
  const sorted = [...points].sort((a, b) => a.offered - b.offered);
  const lowest = sorted[0] as NocPoint;
  let saturation = 0;
  for (const point of sorted) if (!point.saturated) saturation = point.offered;
  const above = sorted.find((point) => point.offered > saturation);
  return {
    mesh: lowest.mesh,
    routing: lowest.routing,
    traffic: lowest.traffic,
    packet_flits: lowest.packet_flits,
    zero_load_offered: lowest.offered,
    zero_load_latency: lowest.packet_latency,
    saturation_throughput: saturation,
    next_offered_above: above?.offered ?? null,
  };
}

/** Groups points by series, in first-seen order. */
export function bySeries<T extends NocPoint>(points: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const point of points) {
    const key = seriesKey(point);
    let group = groups.get(key);
    if (group === undefined) {
      group = [];
      groups.set(key, group);
    }
    group.push(point);
  }
  return [...groups.values()];
}

/** Relative error of `value` against `reference`. */
export function relativeError(value: number, reference: number): number {
  return (value - reference) / reference;
}

/** One series judged against the reference's. */
export interface SeriesVerdict {
  readonly bench: NocSummary;
  readonly reference: NocSummary;
  readonly zeroLoadError: number;
  readonly saturationError: number;
  /** Latency errors at every reference rate up to 0.8 x the reference saturation (null: no bench point). */
  readonly latencyErrors: readonly { readonly offered: number; readonly error: number | null }[];
  readonly zeroLoadPass: boolean;
  readonly saturationPass: boolean;
  readonly latencyPass: boolean;
}

/** Judges one series of bench points against the same series of reference points. */
export function judge(bench: readonly NocPoint[], reference: readonly NocPoint[]): SeriesVerdict {
  const mine = summarise(bench);
  const theirs = summarise(reference);
  const zeroLoadError = relativeError(mine.zero_load_latency, theirs.zero_load_latency);
  const saturationError = relativeError(mine.saturation_throughput, theirs.saturation_throughput);
  const limit = TARGETS.latencyUpToFractionOfSaturation * theirs.saturation_throughput + 1e-12;
  const latencyErrors = reference
    .filter((point) => point.offered <= limit)
    .sort((a, b) => a.offered - b.offered)
    .map((point) => {
      const own = bench.find((candidate) => Math.abs(candidate.offered - point.offered) < 1e-9);
      return {
        offered: point.offered,
        error: own === undefined ? null : relativeError(own.packet_latency, point.packet_latency),
      };
    });
  return {
    bench: mine,
    reference: theirs,
    zeroLoadError,
    saturationError,
    latencyErrors,
    zeroLoadPass: Math.abs(zeroLoadError) <= TARGETS.zeroLoad,
    saturationPass: Math.abs(saturationError) <= TARGETS.saturation,
    latencyPass: latencyErrors.every(
      (entry) => entry.error !== null && Math.abs(entry.error) <= TARGETS.latency,
    ),
  };
}
