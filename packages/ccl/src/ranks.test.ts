import { isKbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import {
  cubeRing,
  type Direction,
  laneOf,
  oppositeDirection,
  peRing,
  type RankGroup,
  rankRing,
  ringPerCube,
  sipRing,
} from "./ranks.js";

const COLS = { east: 1, west: -1, north: 0, south: 0 } as const;
const ROWS = { east: 0, west: 0, north: -1, south: 1 } as const;

/** Checks that each hop of a PE ring goes to the grid neighbour the next rank sits at. */
function checkPeRing(group: RankGroup, cols: number): void {
  const n = group.size;
  const pos = (pe: number) => [Math.floor(pe / cols), pe % cols] as const;
  for (let r = 0; r < n; r++) {
    const [row, col] = pos(group.members[r] as number);
    for (const [direction, other] of [
      [group.next[r], group.members[(r + 1) % n]],
      [group.prev[r], group.members[(r - 1 + n) % n]],
    ] as const) {
      const d = direction as keyof typeof COLS;
      expect(pos(other as number)).toEqual([row + ROWS[d], col + COLS[d]]);
    }
    // What r - 1 sends "next" arrives from prev[r].
    expect(group.prev[r]).toBe(oppositeDirection(group.next[(r - 1 + n) % n] as Direction));
  }
  expect(new Set(group.members).size).toBe(n);
}

describe("peRing", () => {
  it("snakes through a grid with an even number of rows, back up column 0", () => {
    const ring = peRing(2, 4);
    expect(ring.members).toEqual([0, 1, 2, 3, 7, 6, 5, 4]);
    expect(ring.next).toEqual(["east", "east", "east", "south", "west", "west", "west", "north"]);
    checkPeRing(ring, 4);
    expect(peRing(4, 3).members).toEqual([0, 1, 2, 5, 4, 7, 8, 11, 10, 9, 6, 3]);
    checkPeRing(peRing(4, 3), 3);
  });

  it("snakes by columns when only the number of columns is even", () => {
    const ring = peRing(3, 4);
    expect(ring.members).toEqual([0, 4, 8, 9, 5, 6, 10, 11, 7, 3, 2, 1]);
    checkPeRing(ring, 4);
    for (const [rows, cols] of [
      [2, 2],
      [6, 6],
      [5, 2],
      [1, 2],
      [2, 1],
    ] as const) {
      checkPeRing(peRing(rows, cols), cols);
    }
  });

  it("takes a block of the grid for fewer ranks", () => {
    expect(peRing(2, 4, 4).members).toEqual([0, 1, 5, 4]);
    checkPeRing(peRing(2, 4, 4), 4);
    expect(peRing(2, 4, 6).members).toEqual([0, 1, 2, 6, 5, 4]);
    expect(peRing(2, 4, 2)).toMatchObject({
      members: [0, 1],
      next: ["east", "west"],
      prev: ["east", "west"],
    });
    expect(peRing(2, 4, 1)).toMatchObject({ size: 1, members: [0], next: [] });
  });

  it("names the shape when no ring of single hops exists", () => {
    for (const [rows, cols, size, pattern] of [
      [3, 3, 9, /no ring of 9 PEs in the 3 x 3 PE grid: a grid has a ring of single hops/],
      [1, 4, 4, /no ring of 4 PEs in the 1 x 4 PE grid/],
      [2, 4, 3, /no ring of 3 PEs in the 2 x 4 PE grid \(nor in any block of 3 of its PEs\)/],
      [2, 4, 9, /a ring of 9 PEs does not fit a 2 x 4 PE grid/],
    ] as const) {
      let error: unknown;
      try {
        peRing(rows, cols, size);
      } catch (e) {
        error = e;
      }
      expect(isKbError(error, "RUNTIME_INVALID")).toBe(true);
      expect(String(error)).toMatch(pattern);
    }
  });
});

describe("cubeRing and sipRing", () => {
  it("use the wrapping cube and SIP queues", () => {
    expect(cubeRing(4)).toMatchObject({
      scope: "cubes",
      members: [0, 1, 2, 3],
      next: ["cube_next", "cube_next", "cube_next", "cube_next"],
      prev: ["cube_prev", "cube_prev", "cube_prev", "cube_prev"],
    });
    expect(sipRing(2, 2).next).toEqual(["sip_next", "sip_next"]);
    // Two of four: rank 1 goes back with sip_prev.
    expect(sipRing(4, 2)).toMatchObject({ next: ["sip_next", "sip_prev"], prev: ["sip_next", "sip_prev"] });
  });

  it("refuse a sub-ring whose wrap-around would take several hops", () => {
    expect(() => cubeRing(4, 3)).toThrow(
      /no ring of 3 of the 4 cubes: cube_next \/ cube_prev wrap around all 4/,
    );
    expect(() => sipRing(2, 3)).toThrow(/a ring of 3 SIPs does not fit 2 SIPs/);
  });

  it("rankRing picks by scope", () => {
    const shape = { rows: 2, cols: 4, cubes: 2, sips: 4 };
    expect(rankRing("pes", shape).size).toBe(8);
    expect(rankRing("cubes", shape).size).toBe(2);
    expect(rankRing("sips", shape, 2).size).toBe(2);
    expect(() => rankRing("racks" as never, shape)).toThrow(/unknown rank scope "racks"/);
  });
});

describe("lanes of a SIP rank", () => {
  /** A kernel instance on PE `pe` of cube `cube`, in a launch of `pes` PEs x `cubes` cubes. */
  const at = (pe: number, pes: number, cube: number, cubes: number) =>
    ({
      programId: (axis = 0) => (axis === 0 ? pe : axis === 1 ? cube : 0),
      numPrograms: (axis = 0) => (axis === 0 ? pes : axis === 1 ? cubes : 1),
    }) as unknown as Parameters<typeof laneOf>[0];

  it("are every PE of the SIP's cubes, or each cube's own with ringPerCube", () => {
    const ring = sipRing(4);
    // PE 3 of cube 1, 8 PEs x 2 cubes: lane 1 x 8 + 3 = 11 of 16 (one buffer per SIP).
    expect(laneOf(at(3, 8, 1, 2), ring)).toEqual({ lane: 11, lanes: 16 });
    // One ring per cube index, each with its own buffers: lane 3 of its cube's 8.
    const perCube = ringPerCube(ring);
    expect(perCube).toMatchObject({ scope: "sips", size: 4, lanesOf: "cube" });
    expect(laneOf(at(3, 8, 1, 2), perCube)).toEqual({ lane: 3, lanes: 8 });
    expect(() => ringPerCube(cubeRing(4))).toThrow(/ringPerCube needs a "sips" group/);
  });
});
