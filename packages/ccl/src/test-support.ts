import { encodeAddress } from "@kb/topology";
import type { Region } from "./kernel-support.js";
import type { RankGroup } from "./ranks.js";

/** One HBM buffer per rank (in its own SIP for "sips", else at distinct offsets of SIP 0 cube 0). */
export function buffersOf(
  group: RankGroup,
  count: number,
  dtype: Region["dtype"] = "f32",
  base = 0,
): Region[] {
  return group.members.map((member, rank) => ({
    address:
      group.scope === "sips"
        ? encodeAddress({ sip: member, cube: 0, space: "hbm", offset: base })
        : encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: base + rank * 2 ** 22 }),
    count,
    dtype,
  }));
}
