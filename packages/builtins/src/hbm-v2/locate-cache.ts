import { hbmCoordinatesScratch } from "@kb/spec";
import type { HbmAddressMap, HbmCoordinates } from "@kb/topology";

const LOCATE_BITS = 19;
const LOCATE_MASK = (1 << LOCATE_BITS) - 1;

/** The largest burst index the cache holds (its tags are int32). */
const LOCATE_MAX = 0x7fffffff;

const SHARED = new WeakMap<HbmAddressMap, Map<string, LocateCache>>();

/**
 * Where recently seen bursts live (flat bank, row), shared by the ports of a stack: one slot of
 * four int32 (burst index as the tag, bank, row, unused) per burst index modulo 2^19, so a
 * lookup reads one cache line. Bursts past index 2^31 - 1 (64 GiB of 32 B bursts) are not cached.
 */
export class LocateCache {
  /**
   * The cache of the stacks that share `map` (a machine builds one address map for all its
   * stacks, `MachineGraph.hbmAddressMap`): a burst index locates the same way in each, so one
   * cache of 8 MiB serves them all (ref-4sip's 16 stacks held 128 MiB of caches before).
   * `burstBytes`, `bankGroups` and `banksPerGroup` are part of the key: a cache holds what one
   * set of them gives.
   */
  static shared(
    map: HbmAddressMap,
    burstBytes: number,
    bankGroups: number,
    banksPerGroup: number,
  ): LocateCache {
    let byShape = SHARED.get(map);
    if (byShape === undefined) {
      byShape = new Map();
      SHARED.set(map, byShape);
    }
    const key = `${burstBytes}/${bankGroups}/${banksPerGroup}`;
    let cache = byShape.get(key);
    if (cache === undefined) {
      cache = new LocateCache();
      byShape.set(key, cache);
    }
    return cache;
  }

  readonly slots = new Int32Array(4 << LOCATE_BITS).fill(-1);
  /** The flat bank (`(sid x groups + group) x banks per group + bank`) of the burst {@link locate} found. */
  bank = 0;
  /** Its row. */
  row = 0;
  private readonly coordinates: HbmCoordinates = hbmCoordinatesScratch();

  /**
   * Bank and row of burst `j` (bytes `j x burstBytes` of the port) into {@link bank} and
   * {@link row}: from the cache, else through `map` (re-read data skips `locate()`).
   */
  locate(map: HbmAddressMap, j: number, burstBytes: number, bankGroups: number, banksPerGroup: number): void {
    const slots = this.slots;
    const slot = (j & LOCATE_MASK) << 2;
    if (slots[slot] === j) {
      this.bank = slots[slot + 1] as number;
      this.row = slots[slot + 2] as number;
      return;
    }
    const c = this.coordinates;
    map.locate(j * burstBytes, c);
    const bank = (c.sid * bankGroups + c.bankGroup) * banksPerGroup + c.bank;
    const row = c.row;
    this.bank = bank;
    this.row = row;
    if (j <= LOCATE_MAX && row <= LOCATE_MAX) {
      slots[slot] = j;
      slots[slot + 1] = bank;
      slots[slot + 2] = row;
    }
  }
}
