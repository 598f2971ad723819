// What a memory model reads of an HBM stack's address mapping: the organisation, and the bank,
// row and column of a byte offset. The mappings themselves (interleave, xor, bit orders) are built
// by @kb/topology from `cube.hbm.mapping`; a model only reads them through this interface.

/**
 * The organisation of one HBM stack, as the address mapping sees it. Every count except
 * `channels` and the interleave may be any positive integer under `interleave`; the bit-layout
 * mappings (`xor`, `mop4clxor`, bit-order strings) need powers of two.
 */
export interface HbmOrganisation {
  /** Channels per stack. */
  readonly channels: number;
  /** Pseudo-channels per channel. */
  readonly pseudoChannels: number;
  /** Stack IDs (SIDs, ranks) per pseudo-channel. */
  readonly sids: number;
  /** Bank groups per SID. */
  readonly bankGroups: number;
  /** Banks per bank group. */
  readonly banksPerGroup: number;
  /** Row (page) size of one pseudo-channel's bank, bytes. */
  readonly rowBytes: number;
  /** Bytes of one column access (a burst): pseudo-channel width x burst length / 8. */
  readonly burstBytes: number;
  /** `interleave` mapping only: the unit spread over channels, then pseudo-channels. */
  readonly interleaveBytes: number;
}

/** Where one byte of an HBM stack lives. */
export interface HbmCoordinates {
  channel: number;
  pseudoChannel: number;
  sid: number;
  bankGroup: number;
  /** Bank within its bank group. */
  bank: number;
  row: number;
  /** Column in bursts (0 .. rowBytes / burstBytes - 1). */
  column: number;
}

/**
 * Coordinates at zero, for a caller that hands `HbmAddressMap.locate` one object to fill again
 * and again (no allocation per lookup).
 */
export function hbmCoordinatesScratch(): HbmCoordinates {
  return { channel: 0, pseudoChannel: 0, sid: 0, bankGroup: 0, bank: 0, row: 0, column: 0 };
}

/**
 * An address mapping of an HBM stack: which pseudo-channel, bank, row and column hold a byte
 * offset. The fabric splits a block into per-pseudo-channel packets with it, and memory models
 * compute banks and rows with the same object (`cube.hbm.mapping`).
 */
export interface HbmAddressMap {
  /** The mapping as written in the topology (`interleave`, `xor`, `mop4clxor`, a bit-order string). */
  readonly name: string;
  readonly organisation: HbmOrganisation;
  /** Pseudo-channel lanes: `channels x pseudoChannels`. */
  readonly lanes: number;
  /**
   * Bytes of an aligned block whose bytes always share a lane (a power of two, or the interleave
   * unit): the step in which the fabric walks a block.
   */
  readonly granuleBytes: number;
  /**
   * Bytes of an aligned period in which every lane holds the same number of bytes (0 when no
   * such period exists): a block covering whole periods is split without walking its granules.
   */
  readonly periodBytes: number;
  /** The lane (`channel x pseudoChannels + pseudoChannel`) of a byte offset. */
  lane(offset: number): number;
  /** Every coordinate of a byte offset (written into `out` when given). */
  locate(offset: number, out?: HbmCoordinates): HbmCoordinates;
  /** The layout in words, MSB first, for `kb topology show` and the docs. */
  describe(): string;
}
