import type { HbmAddressMap } from "@kb/topology";
import type { MemoryBlock } from "./message.js";

/** Bytes per pseudo-channel of a memory block, in first-touched order. */
export interface PcShare {
  readonly lane: number;
  bytes: number;
}

/**
 * Splits `block` (offsets within one HBM stack) into bytes per pseudo-channel lane (`h * Q + q`)
 * by the stack's address mapping. Whole aligned periods of the mapping (every lane holds the same
 * bytes) are added at once, lanes in the order the period's first granules touch them; only the
 * partial ends of a row are walked granule by granule.
 */
export function splitByPseudoChannel(block: MemoryBlock, offset: number, map: HbmAddressMap): PcShare[] {
  const lanes = map.lanes;
  const granule = map.granuleBytes;
  const period = map.periodBytes;
  const byLane: (PcShare | undefined)[] = new Array(lanes);
  const order: PcShare[] = [];
  const add = (lane: number, bytes: number): void => {
    let share = byLane[lane];
    if (share === undefined) {
      share = { lane, bytes: 0 };
      byLane[lane] = share;
      order.push(share);
    }
    share.bytes += bytes;
  };
  const perLane = period / lanes;
  const rows = block.rows;
  for (let row = 0; row < rows; row++) {
    let start = offset + row * (rows === 1 ? 0 : block.stride);
    let left = block.rowBytes;
    while (left > 0) {
      if (period > 0 && start % period === 0 && left >= period) {
        // Whole periods touch every lane equally: add them in the first period's order.
        const periods = Math.floor(left / period);
        const seen = new Uint8Array(lanes);
        for (let at = start; at < start + period; at += granule) {
          const lane = map.lane(at);
          if (seen[lane] === 0) {
            seen[lane] = 1;
            add(lane, periods * perLane);
          }
        }
        start += periods * period;
        left -= periods * period;
        continue;
      }
      const inGranule = Math.min(left, (Math.floor(start / granule) + 1) * granule - start);
      add(map.lane(start), inGranule);
      start += inGranule;
      left -= inGranule;
    }
  }
  return order;
}

/**
 * A block's bytes on each port as address ranges, computed on first use for all ports in one
 * walk (memory models that never look at addresses cost nothing). @internal
 */
export class BlockRanges {
  private pieces: number[][] | null = null;

  constructor(
    private readonly block: MemoryBlock,
    /** The block's first byte as an offset within its memory. */
    private readonly offset: number,
    /** The HBM mapping, or null for a single-port memory (SRAM). */
    private readonly map: HbmAddressMap | null,
  ) {}

  /** The ranges on `port` as `[offset, bytes, offset, bytes, ...]`, contiguous pieces merged. */
  of(port: number): readonly number[] {
    if (this.pieces === null) this.pieces = this.walk();
    return this.pieces[port] ?? EMPTY;
  }

  private walk(): number[][] {
    const { block, offset, map } = this;
    const pieces: number[][] = [];
    const push = (port: number, at: number, bytes: number): void => {
      let list = pieces[port];
      if (list === undefined) {
        list = [];
        pieces[port] = list;
      }
      const n = list.length;
      if (n > 0 && (list[n - 2] as number) + (list[n - 1] as number) === at)
        list[n - 1] = (list[n - 1] as number) + bytes;
      else list.push(at, bytes);
    };
    const granule = map === null ? 0 : map.granuleBytes;
    for (let row = 0; row < block.rows; row++) {
      let start = offset + row * (block.rows === 1 ? 0 : block.stride);
      if (map === null) {
        push(0, start, block.rowBytes);
        continue;
      }
      let left = block.rowBytes;
      while (left > 0) {
        const inGranule = Math.min(left, (Math.floor(start / granule) + 1) * granule - start);
        push(map.lane(start), start, inGranule);
        start += inGranule;
        left -= inGranule;
      }
    }
    return pieces;
  }
}

const EMPTY: readonly number[] = Object.freeze([]);
