import { isKbError, type KbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { ADDRESS_LAYOUT, TCM_WINDOW_BYTES } from "./address-layout.js";
import { resolveTopology } from "./load.js";
import {
  type DeviceAddress,
  decodeAddress,
  encodeAddress,
  hbmLocation,
  type MemorySpace,
  tcmAddress,
  tcmLocation,
} from "./memory-map.js";

function thrown(action: () => unknown): KbError {
  try {
    action();
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}

describe("device addresses", () => {
  it("lay out offset [0, 40), space [40, 42), cube [42, 48), sip [48, 53)", () => {
    expect(ADDRESS_LAYOUT).toEqual({
      offsetBits: 40,
      spaceShift: 40,
      spaceBits: 2,
      cubeShift: 42,
      cubeBits: 6,
      sipShift: 48,
      sipBits: 5,
    });
    expect(encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: 0 })).toBe(0);
    expect(encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: 0x1234 })).toBe(0x1234);
    // sram = 2: 2 * 2^40 + 5 = 2199023255557
    expect(encodeAddress({ sip: 0, cube: 0, space: "sram", offset: 5 })).toBe(2_199_023_255_557);
    // 2^48 + 2 * 2^42 + 1 * 2^40 + 0x100 = 281474976710656 + 8796093022208 + 1099511627776 + 256
    expect(encodeAddress({ sip: 1, cube: 2, space: "tcm", offset: 0x100 })).toBe(291_370_581_360_896);
    expect(encodeAddress({ sip: 1, cube: 2, space: "tcm", offset: 0x100 })).toBe(0x1_0900_0000_0100);
    // The largest: 31 * 2^48 + 63 * 2^42 + 2 * 2^40 + (2^40 - 1) = 2^53 - 2^40 - 1.
    expect(encodeAddress({ sip: 31, cube: 63, space: "sram", offset: 2 ** 40 - 1 })).toBe(
      2 ** 53 - 2 ** 40 - 1,
    );
    expect(2 ** 53 - 2 ** 40 - 1).toBe(9_006_099_743_113_215);
  });

  it("decode what they encode", () => {
    const spaces: MemorySpace[] = ["hbm", "tcm", "sram"];
    const samples: DeviceAddress[] = [];
    for (const sip of [0, 1, 17, 31]) {
      for (const cube of [0, 1, 42, 63]) {
        for (const space of spaces) {
          for (const offset of [0, 1, 255, 2 ** 32, 2 ** 32 + 7, 2 ** 40 - 1])
            samples.push({ sip, cube, space, offset });
        }
      }
    }
    for (const address of samples) expect(decodeAddress(encodeAddress(address))).toEqual(address);
    expect(decodeAddress(0x1_0900_0000_0100)).toEqual({ sip: 1, cube: 2, space: "tcm", offset: 256 });
    expect(decodeAddress(2 ** 53 - 2 ** 40 - 1)).toEqual({
      sip: 31,
      cube: 63,
      space: "sram",
      offset: 2 ** 40 - 1,
    });
  });

  it("refuse fields out of range (TOPOLOGY_BAD_ADDRESS)", () => {
    const base: DeviceAddress = { sip: 0, cube: 0, space: "hbm", offset: 0 };
    const cases: [Partial<DeviceAddress>, string][] = [
      [{ sip: 32 }, "device address sip must be an integer in [0, 32) (5 bits), got 32."],
      [{ sip: -1 }, "device address sip must be an integer in [0, 32) (5 bits), got -1."],
      [{ cube: 64 }, "device address cube must be an integer in [0, 64) (6 bits), got 64."],
      [{ cube: 1.5 }, "device address cube must be an integer in [0, 64) (6 bits), got 1.5."],
      [
        { offset: 2 ** 40 },
        "device address offset must be an integer in [0, 1099511627776) (40 bits), got 1099511627776.",
      ],
      [
        { offset: Number.NaN },
        "device address offset must be an integer in [0, 1099511627776) (40 bits), got NaN.",
      ],
      [
        { space: "dram" as MemorySpace },
        'device address space must be one of "hbm", "tcm", "sram", got "dram".',
      ],
    ];
    for (const [change, detail] of cases) {
      const error = thrown(() => encodeAddress({ ...base, ...change }));
      expect(error.code).toBe("TOPOLOGY_BAD_ADDRESS");
      expect(error.detail).toBe(detail);
    }
  });

  it("refuse to decode non-addresses and space 3", () => {
    for (const address of [-1, 0.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = thrown(() => decodeAddress(address));
      expect(error.code).toBe("TOPOLOGY_BAD_ADDRESS");
      expect(error.detail).toBe(
        `a device address must be an integer in [0, 2^53), got ${address}. Build addresses with encodeAddress().`,
      );
    }
    const error = thrown(() => decodeAddress(3 * 2 ** 40 + 16));
    expect(error.detail).toBe(
      "device address 0x30000000010 has space bits [40, 42) = 3, which is no space (hbm = 0, tcm = 1, sram = 2). Build addresses with encodeAddress().",
    );
  });
});

describe("hbmLocation", () => {
  // Defaults: 8 channels x 2 pseudo-channels, 256-byte interleave, 16 GiB.
  const topology = resolveTopology({ name: "hbm" });

  it("interleaves across channels first, then pseudo-channels", () => {
    const at = (offset: number) => hbmLocation(topology, offset);
    expect(at(0)).toMatchObject({ channel: 0, pseudoChannel: 0, unit: 0 });
    expect(at(255)).toMatchObject({ channel: 0, pseudoChannel: 0, unit: 0 });
    expect(at(256)).toMatchObject({ channel: 1, pseudoChannel: 0, unit: 1 });
    expect(at(7 * 256)).toMatchObject({ channel: 7, pseudoChannel: 0, unit: 7 });
    // unit 8 = one round of the 8 channels: pseudo-channel 1.
    expect(at(2048)).toMatchObject({ channel: 0, pseudoChannel: 1, unit: 8 });
    // 2816 / 256 = unit 11: channel 11 mod 8 = 3, pseudo-channel floor(11 / 8) mod 2 = 1.
    expect(at(2816)).toMatchObject({ channel: 3, pseudoChannel: 1, unit: 11 });
    // unit 16: both rounds done, back to ch0 pc0.
    expect(at(4096)).toMatchObject({ channel: 0, pseudoChannel: 0, unit: 16 });
    // Last byte: unit (2^34 - 1) >> 8 = 2^26 - 1 = 67108863; mod 8 = 7; 8388607 mod 2 = 1.
    expect(at(16 * 2 ** 30 - 1)).toMatchObject({ channel: 7, pseudoChannel: 1, unit: 67_108_863 });
  });

  it("follows the topology's channels, pseudo-channels and interleave", () => {
    const custom = resolveTopology({
      name: "custom",
      cube: { hbm: { channels: 3, pseudo_channels: 4, interleave_bytes: 1024, capacity_bytes: 1 << 20 } },
    });
    // 10000 / 1024 = unit 9: channel 9 mod 3 = 0, pseudo-channel 3 mod 4 = 3.
    expect(hbmLocation(custom, 10_000)).toMatchObject({ channel: 0, pseudoChannel: 3, unit: 9 });
    // unit 13: channel 1, pseudo-channel 4 mod 4 = 0.
    expect(hbmLocation(custom, 13 * 1024)).toMatchObject({ channel: 1, pseudoChannel: 0, unit: 13 });
  });

  it("follows cube.hbm.mapping: xor places a 8 KiB stride on every channel", () => {
    const xor = resolveTopology({ name: "xor", cube: { hbm: { mapping: "xor" } } });
    const channels = new Set([0, 1, 2, 3, 4, 5, 6, 7].map((i) => hbmLocation(xor, i * 8192).channel));
    expect(channels.size).toBe(8);
    expect(hbmLocation(xor, 0)).toEqual({
      channel: 0,
      pseudoChannel: 0,
      sid: 0,
      bankGroup: 0,
      bank: 0,
      row: 0,
      column: 0,
      unit: 0,
    });
  });

  it("refuses offsets outside the stack (TOPOLOGY_BAD_ADDRESS)", () => {
    for (const offset of [16 * 2 ** 30, -1, 1.5]) {
      const error = thrown(() => hbmLocation(topology, offset));
      expect(error.code).toBe("TOPOLOGY_BAD_ADDRESS");
      expect(error.detail).toBe(
        `HBM offset must be an integer in [0, 17179869184) (cube.hbm.capacity_bytes of topology "hbm"), got ${offset}.`,
      );
    }
  });
});

describe("TCM addresses", () => {
  it("give each PE a 256 MiB window of its cube's TCM space", () => {
    expect(TCM_WINDOW_BYTES).toBe(2 ** 28);
    expect(tcmAddress(0, 0, 0, 0)).toBe(encodeAddress({ sip: 0, cube: 0, space: "tcm", offset: 0 }));
    // PE 3 of sip0.cube1, byte 0x40: TCM offset 3 x 2^28 + 0x40 = 0x3000_0040.
    expect(tcmAddress(0, 1, 3, 0x40)).toBe(
      encodeAddress({ sip: 0, cube: 1, space: "tcm", offset: 0x3000_0040 }),
    );
    expect(tcmAddress(0, 1, 3, 0x40)).toBe(2 ** 42 + 2 ** 40 + 0x3000_0040);
  });

  it("locate what they address, and nothing of another space", () => {
    for (const [sip, cube, pe, offset] of [
      [0, 0, 0, 0],
      [1, 2, 3, 0x40],
      [31, 63, 4095, TCM_WINDOW_BYTES - 1],
    ] as const) {
      expect(tcmLocation(tcmAddress(sip, cube, pe, offset))).toEqual({ sip, cube, pe, offset });
    }
    expect(tcmLocation(encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: 0x40 }))).toBeNull();
    expect(tcmLocation(encodeAddress({ sip: 0, cube: 0, space: "sram", offset: 0 }))).toBeNull();
  });

  it("refuse a PE past the address space (TOPOLOGY_BAD_ADDRESS)", () => {
    // PE 4096's window starts at 2^40, past the 40 offset bits.
    expect(thrown(() => tcmAddress(0, 0, 4096, 0)).code).toBe("TOPOLOGY_BAD_ADDRESS");
    expect(thrown(() => tcmLocation(-1)).code).toBe("TOPOLOGY_BAD_ADDRESS");
  });
});
