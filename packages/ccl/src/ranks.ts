import { IPCQ_DIRECTIONS, type IpcqDirection, oppositeDirection } from "@kb/components";
import { KbError } from "@kb/errors";
import type { TL } from "@kb/tl";

/** The inter-PE queue directions (ADR-0046 D3.10), as `@kb/components` services them. */
export const DIRECTIONS = IPCQ_DIRECTIONS;

/** An IPCQ direction. */
export type Direction = IpcqDirection;

/**
 * The direction a payload arrives from at the receiver: what PE A sends `"east"` its east
 * neighbour receives with `tl.recv("west", ...)`.
 */
export { oppositeDirection };

/** What a rank is: a PE of one cube, a cube of one SIP, or a SIP of the system. */
export type RankScope = "pes" | "cubes" | "sips";

/**
 * A group of ranks arranged as a ring of single IPCQ hops: rank `r` sends to rank `r + 1` with
 * `tl.send(next[r], ...)` and receives what rank `r - 1` sent with `tl.recv(prev[r], ...)`; the
 * reverse direction works the same way (`tl.send(prev[r])` reaches `r - 1`, which receives it
 * from `next[r - 1]`). Plain data, so it can be a kernel argument.
 */
export interface RankGroup {
  readonly scope: RankScope;
  /** Number of ranks. */
  readonly size: number;
  /** `members[rank]`: the PE index in its cube ("pes"), the cube ("cubes") or the SIP ("sips"). */
  readonly members: readonly number[];
  /** `next[rank]`: the direction from `rank` to `rank + 1 (mod size)`; empty for one rank. */
  readonly next: readonly Direction[];
  /** `prev[rank]`: the direction from `rank` to `rank - 1 (mod size)`; empty for one rank. */
  readonly prev: readonly Direction[];
  /** What the ring was built on, for messages: `2 x 4 PE grid`, `4 cubes`, `2 SIPs`. */
  readonly shape: string;
  /**
   * "sips" scope: what a lane of a SIP rank is (see {@link laneOf}). `"sip"` (the default): every
   * PE of the launch's cubes in that SIP, one buffer per SIP; `"cube"`: each cube index is a ring
   * of its own (cube c of every SIP), a PE is a lane of its cube, and each ring has its own
   * buffers: give the kernel instances of cube c the arguments of ring c (see {@link ringPerCube}).
   */
  readonly lanesOf?: "sip" | "cube";
}

/**
 * The "sips" ring `group` with one ring per cube index ({@link RankGroup.lanesOf} `"cube"`): for a
 * hierarchical collective whose middle level joins cube c of every SIP, all cube indices in one
 * launch, each with its own buffers. Throws `RUNTIME_INVALID` for a group of another scope.
 */
export function ringPerCube(group: RankGroup): RankGroup {
  if (group.scope !== "sips") {
    throw new KbError(
      "RUNTIME_INVALID",
      `ringPerCube needs a "sips" group (a ring of SIPs), got a "${group.scope}" group over the ${group.shape}.`,
    );
  }
  return Object.freeze({ ...group, lanesOf: "cube" as const });
}

/**
 * A ring over the PEs of one cube's `rows x cols` grid (PE `p` at row `floor(p / cols)`, column
 * `p % cols`). The ring is a Hamiltonian cycle of the grid, so every hop is one neighbour:
 *
 * - an even number of rows: east along row 0, then a snake through columns 1.. of the other rows,
 *   back north along column 0 (2 x 4: PEs 0 1 2 3 7 6 5 4);
 * - else an even number of columns: the same with rows and columns swapped;
 * - 1 x 2 and 2 x 1: the two PEs, both hops between them.
 *
 * `size` (default all) takes the top-left `r x c` block of the grid with `r x c = size` that has
 * such a cycle, with the fewest rows (2 x 4 grid, size 4: PEs 0 1 5 4), or PEs 0 and 1 for 2.
 *
 * Throws `RUNTIME_INVALID` naming the shape when no cycle exists: an odd number of PEs (but 1), or
 * a single row or column of more than two. There is no multi-hop fallback: a "ring" whose
 * wrap-around hop went back through the row would make every step wait for that longest hop, and
 * the PEs on the way would forward it in the middle of their own steps.
 */
export function peRing(rows: number, cols: number, size = rows * cols): RankGroup {
  checkCount("peRing rows", rows);
  checkCount("peRing cols", cols);
  checkCount("peRing size", size);
  const total = rows * cols;
  if (size > total) {
    throw new KbError(
      "RUNTIME_INVALID",
      `a ring of ${size} PEs does not fit a ${rows} x ${cols} PE grid (${total} PEs).`,
    );
  }
  const shape = `${rows} x ${cols} PE grid`;
  if (size === 1) return group("pes", [0], [], [], shape);
  let order: number[] | null = null;
  for (let r = 1; r <= rows && order === null; r++) {
    const c = size / r;
    if (!Number.isInteger(c) || c > cols) continue;
    // The block's cycle, in the block's own numbering, then as PE indices of the whole grid.
    order = snake(r, c)?.map((i) => Math.floor(i / c) * cols + (i % c)) ?? null;
  }
  if (order === null) {
    const whole = size === total ? "" : ` (nor in any block of ${size} of its PEs)`;
    throw new KbError(
      "RUNTIME_INVALID",
      `no ring of ${size} PEs in the ${shape}${whole}: a grid has a ring of single hops (a Hamiltonian cycle) only with an even number of rows or columns and at least 2 of each. Use an even number of PEs, rank cubes or SIPs instead (scope "cubes" / "sips"), or write a line-based algorithm (docs/ccl-author-guide.md).`,
    );
  }
  const coord = (pe: number) => [Math.floor(pe / cols), pe % cols] as const;
  const step = (from: number, to: number): Direction => {
    const [r0, c0] = coord(from);
    const [r1, c1] = coord(to);
    if (r1 === r0 && c1 === c0 + 1) return "east";
    if (r1 === r0 && c1 === c0 - 1) return "west";
    if (c1 === c0 && r1 === r0 + 1) return "south";
    return "north";
  };
  const ring = order;
  const next = ring.map((pe, r) => step(pe, ring[(r + 1) % size] as number));
  const prev = ring.map((pe, r) => step(pe, ring[(r - 1 + size) % size] as number));
  return group("pes", ring, next, prev, shape);
}

/**
 * A ring over cubes `0..size-1` of a SIP with `cubes` cubes: `cube_next` / `cube_prev`, which wrap
 * around the SIP. A sub-ring (`size < cubes`) exists only for 1 or 2 cubes; for more the
 * wrap-around would be several hops, and this throws `RUNTIME_INVALID`.
 */
export function cubeRing(cubes: number, size = cubes): RankGroup {
  return axisRing("cubes", "cube_next", "cube_prev", cubes, size, "cube");
}

/** A ring over SIPs `0..size-1` with `sip_next` / `sip_prev`; the same rules as {@link cubeRing}. */
export function sipRing(sips: number, size = sips): RankGroup {
  return axisRing("sips", "sip_next", "sip_prev", sips, size, "SIP");
}

/** The hardware counts a {@link rankRing} needs. */
export interface RankShape {
  /** Rows and columns of a cube's PE grid. */
  readonly rows: number;
  readonly cols: number;
  readonly cubes: number;
  readonly sips: number;
}

/** The ring of `scope` over hardware of `shape`: {@link peRing}, {@link cubeRing} or {@link sipRing}. */
export function rankRing(scope: RankScope, shape: RankShape, size?: number): RankGroup {
  switch (scope) {
    case "pes":
      return peRing(shape.rows, shape.cols, size);
    case "cubes":
      return cubeRing(shape.cubes, size);
    case "sips":
      return sipRing(shape.sips, size);
    default:
      throw new KbError(
        "RUNTIME_INVALID",
        `unknown rank scope ${JSON.stringify(scope)}; use "pes", "cubes" or "sips".`,
      );
  }
}

/**
 * The rank of the kernel instance running `tl` in `group`: from its PE index, cube or SIP. The
 * process group's grids list the members in rank order, so there it equals `tl.programId(0)`,
 * `(1)` or `(2)`; going by the placement keeps the ring's hops right on a grid in any order.
 * Throws `RUNTIME_INVALID` when the instance's PE is not a member (a launch on the wrong grid).
 */
export function rankOf(tl: TL, group: RankGroup): number {
  const { peIndex, cube, sip, pe } = tl.placement;
  const index = group.scope === "pes" ? peIndex : group.scope === "cubes" ? cube : sip;
  const rank = group.members.indexOf(index);
  if (rank < 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${pe} is not in the ${group.size}-rank group over the ${group.shape} (members: ${group.scope} ${group.members.join(", ")}); launch on the group's PEs only.`,
      { context: { kernel: tl.kernel, pe } },
    );
  }
  return rank;
}

/**
 * Which share of its rank's data this kernel instance moves. A rank that is a cube or a SIP may
 * run on several PEs ("lanes"), each running the same algorithm on its own slice of the buffer
 * with the PEs of the same lane in the other ranks (whose cube / SIP queues connect the same PE
 * index). A rank that is a PE is one lane. A SIP rank's lanes are the PEs of all its cubes, or of
 * the instance's cube only when the group has one ring per cube ({@link ringPerCube}).
 */
export function laneOf(tl: TL, group: RankGroup): { readonly lane: number; readonly lanes: number } {
  if (group.scope === "pes") return { lane: 0, lanes: 1 };
  if (group.scope === "cubes" || group.lanesOf === "cube")
    return { lane: tl.programId(0), lanes: tl.numPrograms(0) };
  const perCube = tl.numPrograms(0);
  return { lane: tl.programId(1) * perCube + tl.programId(0), lanes: perCube * tl.numPrograms(1) };
}

/** A kernel instance's view of the ring its lane goes round (see {@link laneRing}). */
export interface LaneRing {
  /** True when this lane goes round the ring backwards. */
  readonly reverse: boolean;
  /** The rank's place in this lane's ring: its rank, or `-rank mod n` backwards. */
  readonly position: number;
  /** Towards the next place (`tl.send(next, ...)`); undefined in a group of one. */
  readonly next: Direction | undefined;
  /** Where the previous place's payloads come from (`tl.recv(prev, ...)`); undefined in a group of one. */
  readonly prev: Direction | undefined;
  /** The rank at `position` of this lane's ring (for data that belongs to a rank, like its segment). */
  rankAt(position: number): number;
}

/**
 * The ring of `rank`'s lane `lane`: odd lanes go round the ring the other way (for more than two
 * ranks), so when a rank runs on several PEs both directions of every link carry data. A ring
 * step that sends forward uses only one direction of each link; with half the lanes going
 * backwards, a cube or SIP ring moves about 1.6 times the bytes in the same time.
 */
export function laneRing(group: RankGroup, rank: number, lane: number): LaneRing {
  const n = group.size;
  const reverse = lane % 2 === 1 && n > 2;
  return {
    reverse,
    position: reverse ? mod(-rank, n) : rank,
    next: reverse ? group.prev[rank] : group.next[rank],
    prev: reverse ? group.next[rank] : group.prev[rank],
    rankAt: (position) => (reverse ? mod(-position, n) : mod(position, n)),
  };
}

/** `a mod n` in `0..n-1` for negative `a` too. */
export function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}

function group(
  scope: RankScope,
  members: readonly number[],
  next: readonly Direction[],
  prev: readonly Direction[],
  shape: string,
): RankGroup {
  return Object.freeze({
    scope,
    size: members.length,
    members: Object.freeze([...members]),
    next: Object.freeze([...next]),
    prev: Object.freeze([...prev]),
    shape,
  });
}

function axisRing(
  scope: RankScope,
  forward: Direction,
  backward: Direction,
  count: number,
  size: number,
  noun: string,
): RankGroup {
  checkCount(`${scope} count`, count);
  checkCount(`${scope} ring size`, size);
  const shape = `${count} ${noun}${count === 1 ? "" : "s"}`;
  if (size > count) {
    throw new KbError("RUNTIME_INVALID", `a ring of ${size} ${noun}s does not fit ${shape}.`);
  }
  const members = Array.from({ length: size }, (_, i) => i);
  if (size === 1) return group(scope, members, [], [], shape);
  if (size === count) {
    return group(
      scope,
      members,
      members.map(() => forward),
      members.map(() => backward),
      shape,
    );
  }
  if (size === 2) return group(scope, members, [forward, backward], [forward, backward], shape);
  throw new KbError(
    "RUNTIME_INVALID",
    `no ring of ${size} of the ${shape}: ${forward} / ${backward} wrap around all ${count}, so ${size} of them form a ring only for 1, 2 or all ${count}. Use worldSize ${count} (or 2).`,
  );
}

/** PE indices of a Hamiltonian cycle of a `rows x cols` grid (both >= 2), or null when none exists. */
function snake(rows: number, cols: number): number[] | null {
  if (rows === 1 && cols === 2) return [0, 1];
  if (rows === 2 && cols === 1) return [0, 1];
  if (rows < 2 || cols < 2) return null;
  if (rows % 2 === 0) {
    const order: number[] = [];
    for (let c = 0; c < cols; c++) order.push(c); // row 0, west to east
    for (let r = 1; r < rows; r++) {
      // Rows 1.. snake through columns cols-1 .. 1; column 0 is the way back north.
      const eastward = r % 2 === 0;
      for (let i = 0; i < cols - 1; i++) order.push(r * cols + (eastward ? 1 + i : cols - 1 - i));
    }
    for (let r = rows - 1; r >= 1; r--) order.push(r * cols);
    return order;
  }
  if (cols % 2 === 0) {
    // The transposed snake: down column 0, up and down columns 1.., back west along row 0.
    const order: number[] = [];
    for (let r = 0; r < rows; r++) order.push(r * cols);
    for (let c = 1; c < cols; c++) {
      const southward = c % 2 === 0;
      for (let i = 0; i < rows - 1; i++) order.push((southward ? 1 + i : rows - 1 - i) * cols + c);
    }
    for (let c = cols - 1; c >= 1; c--) order.push(c);
    return order;
  }
  return null;
}

function checkCount(what: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new KbError("RUNTIME_INVALID", `${what} must be a whole number >= 1, got ${value}.`);
  }
}
