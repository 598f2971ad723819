import { KbError } from "@kb/errors";

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
 * - `neighbor`: each coordinate moves one place round its dimension.
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
