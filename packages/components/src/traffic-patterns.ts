import { KbError } from "@kb/errors";
import { knuthRandom } from "./knuth-random.js";

/** A destination pattern for `startTraffic`: the endpoint a packet from `source` goes to. */
export type TrafficPattern = (source: number, random: () => number) => number;

/** The BookSim 2 traffic patterns `trafficPattern` knows (`src/traffic.cpp`). */
export const TRAFFIC_PATTERNS = [
  "uniform",
  "transpose",
  "bitcomp",
  "bitrev",
  "shuffle",
  "tornado",
  "neighbor",
  "randperm",
] as const;

/** A name of {@link TRAFFIC_PATTERNS}. */
export type TrafficPatternName = (typeof TRAFFIC_PATTERNS)[number];

/**
 * BookSim 2's traffic pattern `name` on a `cols` x `rows` mesh whose node id is `x + cols * y`
 * (x the column), as `src/traffic.cpp` defines it:
 *
 * - `uniform`: any node, the source included, equally likely;
 * - `transpose`: swaps the high and low halves of the id's bits, (x, y) -> (y, x) on a square mesh;
 * - `bitcomp`: the bitwise complement of the id, (x, y) -> (cols-1-x, rows-1-y);
 * - `bitrev`: the id's bits reversed; `shuffle`: the id's bits rotated left by one;
 * - `tornado`: each coordinate moves ceil(k / 2) - 1 places round its dimension of size k;
 * - `neighbor`: each coordinate moves one place round its dimension;
 * - `randperm`: a fixed random permutation of the nodes, the one BookSim draws with its Knuth
 *   generator from `perm_seed` 0; `randperm(SEED)` (BookSim's own syntax) from another seed.
 *
 * The bit patterns need a power-of-two node count (`transpose` an even number of id bits).
 * Throws `MACHINE_INVALID_COMMAND` for an unknown name or a mesh a pattern is not defined on.
 */
export function trafficPattern(name: string, cols: number, rows: number): TrafficPattern {
  const nodes = cols * rows;
  const bits = Math.log2(nodes);
  const bad = (why: string) =>
    new KbError("MACHINE_INVALID_COMMAND", `traffic pattern "${name}" on a ${cols}x${rows} mesh: ${why}`);
  const needPowerOfTwo = () => {
    if (!Number.isInteger(bits))
      throw bad(`${nodes} nodes is not a power of two (BookSim's bit patterns need one).`);
  };
  const mask = nodes - 1;
  const perm = /^randperm(?:\((.*)\))?$/.exec(name);
  if (perm !== null) {
    const seed = perm[1] === undefined ? 0 : Number(perm[1]);
    if (perm[1] === "" || !Number.isInteger(seed) || seed < 0 || seed >= 2 ** 30)
      throw bad("randperm(SEED) needs a whole number SEED in [0, 2^30), BookSim's perm_seed.");
    const destinations = randomPermutation(nodes, seed);
    return (source) => destinations[source] as number;
  }
  switch (name) {
    case "uniform":
      return (_source, random) => Math.min(nodes - 1, Math.floor(random() * nodes));
    case "transpose": {
      needPowerOfTwo();
      if (bits % 2 !== 0)
        throw bad(`${nodes} nodes has an odd number of id bits; transpose swaps two halves.`);
      const shift = bits / 2;
      const low = (1 << shift) - 1;
      return (source) => ((source >> shift) & low) | ((source << shift) & (low << shift));
    }
    case "bitcomp":
      needPowerOfTwo();
      return (source) => ~source & mask;
    case "bitrev":
      needPowerOfTwo();
      return (source) => {
        let out = 0;
        for (let bit = 0; bit < bits; bit++) if (source & (1 << bit)) out |= 1 << (bits - 1 - bit);
        return out;
      };
    case "shuffle":
      needPowerOfTwo();
      return (source) => ((source << 1) & mask) | ((source >> (bits - 1)) & 1);
    case "tornado":
      return (source) => moveRound(source, cols, rows, Math.ceil(cols / 2) - 1, Math.ceil(rows / 2) - 1);
    case "neighbor":
      return (source) => moveRound(source, cols, rows, 1, 1);
    default:
      throw bad(`unknown pattern; use one of ${TRAFFIC_PATTERNS.join(", ")}.`);
  }
}

/** The node `dx` columns and `dy` rows round from `source` (wrapping in each dimension). */
function moveRound(source: number, cols: number, rows: number, dx: number, dy: number): number {
  const x = source % cols;
  const y = Math.floor(source / cols);
  return ((x + dx) % cols) + cols * ((y + dy) % rows);
}

/**
 * BookSim 2's `RandomPermutationTrafficPattern::randomize`: node i goes to the source that is the
 * `RandomInt(nodes - 1 - i)`-th one still free; the destination of each source.
 */
function randomPermutation(nodes: number, seed: number): number[] {
  const next = knuthRandom(seed);
  const destinations = new Array<number>(nodes).fill(-1);
  for (let i = 0; i < nodes; i++) {
    const index = next() % (nodes - i);
    let j = 0;
    for (let free = 0; free < index || destinations[j] !== -1; j++) if (destinations[j] === -1) free++;
    destinations[j] = i;
  }
  return destinations;
}
