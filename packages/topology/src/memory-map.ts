import { KbError } from "@kb/errors";
import { ADDRESS_LAYOUT, TCM_WINDOW_BYTES } from "./address-layout.js";
import { type HbmCoordinates, hbmAddressMap } from "./hbm-mapping.js";
import { hbmOrganisationOf, type Topology } from "./schema.js";

/** The memories a device address can name: a cube's HBM stack, a PE's TCM, a cube's shared SRAM. */
export type MemorySpace = "hbm" | "tcm" | "sram";

/** A device physical address, decoded (see {@link encodeAddress} for the bit layout). */
export interface DeviceAddress {
  /** SIP index, 0..31. */
  readonly sip: number;
  /** Cube index within the SIP, 0..63. */
  readonly cube: number;
  /** Which memory of the cube. */
  readonly space: MemorySpace;
  /** Byte offset within that memory, 0..2^40 - 1. */
  readonly offset: number;
}

/** The spaces by their code in the address (`MEMORY_SPACES[code]`). */
export const MEMORY_SPACES: readonly MemorySpace[] = Object.freeze(["hbm", "tcm", "sram"] as const);

const OFFSET_LIMIT = 2 ** 40;
const SPACE_UNIT = 2 ** 40;
const CUBE_UNIT = 2 ** 42;
const SIP_UNIT = 2 ** 48;
const ADDRESS_LIMIT = 2 ** 53;
const CUBE_LIMIT = 2 ** 6;
const SIP_LIMIT = 2 ** 5;

/**
 * Encodes a device address as a number by the layout of {@link ADDRESS_LAYOUT}:
 * `sip * 2^48 + cube * 2^42 + spaceCode * 2^40 + offset`, in exact integer arithmetic (no
 * 32-bit bitwise operators). For example `{ sip: 1, cube: 2, space: "tcm", offset: 0x100 }` is
 * 2^48 + 2 * 2^42 + 2^40 + 256 = 0x1_0900_0000_0100.
 *
 * Throws `TOPOLOGY_BAD_ADDRESS` when a field is not an integer within its bits or the space is
 * not hbm, tcm or sram.
 */
export function encodeAddress(address: DeviceAddress): number {
  const { sip, cube, space, offset } = address;
  checkField("sip", sip, SIP_LIMIT);
  checkField("cube", cube, CUBE_LIMIT);
  checkField("offset", offset, OFFSET_LIMIT);
  const spaceCode = MEMORY_SPACES.indexOf(space);
  if (spaceCode < 0) {
    throw new KbError(
      "TOPOLOGY_BAD_ADDRESS",
      `device address space must be one of ${MEMORY_SPACES.map((name) => `"${name}"`).join(", ")}, got ${JSON.stringify(space) ?? String(space)}.`,
    );
  }
  return sip * SIP_UNIT + cube * CUBE_UNIT + spaceCode * SPACE_UNIT + offset;
}

/**
 * Decodes a number made by {@link encodeAddress}; `decodeAddress(encodeAddress(a))` equals `a`.
 *
 * Throws `TOPOLOGY_BAD_ADDRESS` when `address` is not an integer in [0, 2^53) or its space bits
 * are 3.
 */
export function decodeAddress(address: number): DeviceAddress {
  if (typeof address !== "number" || !Number.isInteger(address) || address < 0 || address >= ADDRESS_LIMIT) {
    throw new KbError(
      "TOPOLOGY_BAD_ADDRESS",
      `a device address must be an integer in [0, 2^53), got ${String(address)}. Build addresses with encodeAddress().`,
    );
  }
  const offset = address % OFFSET_LIMIT;
  let rest = (address - offset) / SPACE_UNIT;
  const spaceCode = rest % 4;
  rest = (rest - spaceCode) / 4;
  const cube = rest % CUBE_LIMIT;
  const sip = (rest - cube) / CUBE_LIMIT;
  const space = MEMORY_SPACES[spaceCode];
  if (space === undefined) {
    throw new KbError(
      "TOPOLOGY_BAD_ADDRESS",
      `device address 0x${address.toString(16)} has space bits [40, 42) = 3, which is no space (hbm = 0, tcm = 1, sram = 2). Build addresses with encodeAddress().`,
    );
  }
  return { sip, cube, space, offset };
}

/**
 * The device address of byte `offset` of the TCM of PE `pe` of cube `cube` of SIP `sip`: TCM
 * space, offset `pe * TCM_WINDOW_BYTES + offset`. For example `tcmAddress(0, 1, 3, 0x40)` is
 * `encodeAddress({ sip: 0, cube: 1, space: "tcm", offset: 3 * 2^28 + 0x40 })`.
 *
 * Throws `TOPOLOGY_BAD_ADDRESS` (from {@link encodeAddress}) when a field is out of range.
 */
export function tcmAddress(sip: number, cube: number, pe: number, offset: number): number {
  return encodeAddress({ sip, cube, space: "tcm", offset: pe * TCM_WINDOW_BYTES + offset });
}

/**
 * The PE and the offset within its TCM of a TCM address (the inverse of {@link tcmAddress}), or
 * null for an address of another space (HBM, SRAM).
 *
 * Throws `TOPOLOGY_BAD_ADDRESS` (from {@link decodeAddress}) when `address` is no device address.
 */
export function tcmLocation(
  address: number,
): { sip: number; cube: number; pe: number; offset: number } | null {
  const decoded = decodeAddress(address);
  if (decoded.space !== "tcm") return null;
  return {
    sip: decoded.sip,
    cube: decoded.cube,
    pe: Math.floor(decoded.offset / TCM_WINDOW_BYTES),
    offset: decoded.offset % TCM_WINDOW_BYTES,
  };
}

/**
 * Where a byte offset of a cube's HBM stack lives, by the topology's address mapping
 * (`cube.hbm.mapping`, see {@link hbmAddressMap}): channel, pseudo-channel, SID, bank group,
 * bank, row and column, plus `unit = floor(offset / interleave_bytes)`. With the default
 * `interleave` mapping over 8 channels x 2 PCs and 256 B: offset 0 -> ch0 pc0, 256 -> ch1 pc0,
 * 2048 -> ch0 pc1, 4096 -> ch0 pc0.
 *
 * Throws `TOPOLOGY_BAD_ADDRESS` when `offset` is not an integer in [0, capacity_bytes).
 */
export function hbmLocation(topology: Topology, offset: number): HbmCoordinates & { unit: number } {
  const { interleave_bytes: interleave, capacity_bytes: capacity } = topology.cube.hbm;
  if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0 || offset >= capacity) {
    throw new KbError(
      "TOPOLOGY_BAD_ADDRESS",
      `HBM offset must be an integer in [0, ${capacity}) (cube.hbm.capacity_bytes of topology "${topology.name}"), got ${String(offset)}.`,
    );
  }
  const map = hbmAddressMap(hbmOrganisationOf(topology.cube.hbm), topology.cube.hbm.mapping);
  return { ...map.locate(offset), unit: Math.floor(offset / interleave) };
}

function checkField(name: string, value: number, limit: number): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value >= limit) {
    throw new KbError(
      "TOPOLOGY_BAD_ADDRESS",
      `device address ${name} must be an integer in [0, ${limit}) (${Math.log2(limit)} bits), got ${String(value)}.`,
    );
  }
}
