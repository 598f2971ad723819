import { KbError } from "@kb/errors";
import type { KernelPlacement } from "@kb/tl";
import type { Topology } from "@kb/topology";

/** Which PEs a launch runs on: a count (the first n) or explicit indices per level; default all. */
export interface GridSpec {
  readonly sips?: number | readonly number[];
  readonly cubes?: number | readonly number[];
  readonly pes?: number | readonly number[];
}

/** A resolved grid: the PEs of a launch (and, in a persistent launch, each one's program ids). */
export interface Grid {
  readonly sips: readonly number[];
  readonly cubes: readonly number[];
  readonly pes: readonly number[];
  /** PEs: sips x cubes x pes (the programs of a persistent launch). */
  readonly size: number;
}

/**
 * Resolves a grid on `topology`: every PE by default; numbers take the first n, arrays pick
 * indices. `topologyName` names the topology in messages.
 *
 * Throws `RUNTIME_INVALID` for a count or index list that does not fit the topology.
 */
export function resolveGrid(spec: GridSpec, topology: Topology, topologyName: string): Grid {
  const pick = (what: string, value: number | readonly number[] | undefined, limit: number): number[] => {
    if (value === undefined) return Array.from({ length: limit }, (_, i) => i);
    const list = typeof value === "number" ? Array.from({ length: value }, (_, i) => i) : [...value];
    if (
      list.length === 0 ||
      (typeof value === "number" && (!Number.isInteger(value) || value > limit)) ||
      list.some((i) => !Number.isInteger(i) || i < 0 || i >= limit) ||
      new Set(list).size !== list.length
    ) {
      throw new KbError(
        "RUNTIME_INVALID",
        `grid ${what}: ${JSON.stringify(value)} is not a count 1..${limit} or a list of distinct indices 0..${limit - 1} (topology ${topologyName} has ${limit}).`,
      );
    }
    return list;
  };
  const sips = pick("sips", spec.sips, topology.system.sips);
  const cubes = pick("cubes", spec.cubes, topology.sip.cubes);
  const pes = pick("pes", spec.pes, topology.cube.noc.rows * topology.cube.noc.cols);
  return { sips, cubes, pes, size: sips.length * cubes.length * pes.length };
}

/** True for a resolved {@link Grid} (as opposed to a {@link GridSpec} still to resolve). */
export function isGrid(grid: Grid | GridSpec | undefined): grid is Grid {
  return grid !== undefined && "size" in grid && Array.isArray(grid.sips);
}

/**
 * The placement of every PE of `grid`, SIP-major then cube then PE; each one's program ids are
 * its position in the grid, PE first (`[pe, cube, sip]`): the programs of a persistent launch. A
 * logical launch (`LaunchOptions.programs`) gives its programs these PEs with logical ids instead
 * (`programPlacement` of program-grid.ts).
 */
export function gridPlacements(grid: Grid): KernelPlacement[] {
  const placements: KernelPlacement[] = [];
  grid.sips.forEach((sip, sipIndex) => {
    grid.cubes.forEach((cube, cubeIndex) => {
      grid.pes.forEach((pe, peIndex) => {
        placements.push({
          pe: `sip${sip}.cube${cube}.pe${pe}`,
          sip,
          cube,
          peIndex: pe,
          programId: [peIndex, cubeIndex, sipIndex],
          numPrograms: [grid.pes.length, grid.cubes.length, grid.sips.length],
        });
      });
    });
  });
  return placements;
}
