import { describe, expect, it } from "vitest";
import { type HbmOrganisation, hbmAddressMap } from "./hbm-mapping.js";

// JEDEC HBM3 as Ramulator 2.1's HBM3_16Gb_8hi (../shared/fidelity/hbm-reference.md).
const hbm3: HbmOrganisation = {
  channels: 16,
  pseudoChannels: 2,
  sids: 2,
  bankGroups: 4,
  banksPerGroup: 4,
  rowBytes: 1024,
  burstBytes: 32,
  interleaveBytes: 256,
};
const hbm2: HbmOrganisation = { ...hbm3, channels: 8, sids: 1 };

const bit = (a: number, b: number): number => Math.floor(a / 2 ** b) % 2;

describe("hbmAddressMap", () => {
  it("interleave: units over channels, then pseudo-channels (today's mapping)", () => {
    const map = hbmAddressMap({ ...hbm3, channels: 8 }, "interleave");
    expect([0, 256, 2048, 4096].map((offset) => map.lane(offset))).toEqual([0, 2, 1, 0]);
    expect(map.granuleBytes).toBe(256);
    expect(map.periodBytes).toBe(16 * 256);
  });

  it("the bit-order string of the hbm3 reference: row | bank | bg | SID | PC | column 1-4 | channel | column 0", () => {
    const map = hbmAddressMap(hbm3, "RoBaBgSiPcCo4ChCo1");
    // A = row 3, bank 2, bg 1, sid 1, pc 1, column 0b10110 (bits 1-4 = 0b1011 at A[13:10], bit 0 at A5), channel 9.
    const a =
      3 * 2 ** 20 + 2 * 2 ** 18 + 1 * 2 ** 16 + 2 ** 15 + 2 ** 14 + 0b1011 * 2 ** 10 + 9 * 2 ** 6 + 0 * 32;
    expect(map.locate(a)).toEqual({
      channel: 9,
      pseudoChannel: 1,
      sid: 1,
      bankGroup: 1,
      bank: 2,
      row: 3,
      column: 0b10110,
    });
    expect(map.lane(a)).toBe(9 * 2 + 1);
    expect(map.granuleBytes).toBe(64);
    expect(map.periodBytes).toBe(2 ** 15);
  });

  it("mop4clxor reproduces the hbm3-xor table of hbm-reference.md bit by bit", () => {
    const map = hbmAddressMap(hbm3, "mop4clxor");
    for (const a of [0, 32, 0x12345660, 0x3fffffe0, 0x2aaaaaa0, 0x15555540, 1234567 * 32]) {
      const c = map.locate(a);
      expect(c.channel).toBe(Math.floor(a / 64) % 16);
      expect(c.column).toBe(
        bit(a, 5) | (bit(a, 10) << 1) | (bit(a, 17) << 2) | (bit(a, 18) << 3) | (bit(a, 19) << 4),
      );
      expect(c.pseudoChannel).toBe(bit(a, 11) ^ bit(a, 5));
      expect(c.sid).toBe(bit(a, 12) ^ bit(a, 10));
      expect(c.bankGroup).toBe((bit(a, 13) ^ bit(a, 17)) | ((bit(a, 14) ^ bit(a, 18)) << 1));
      expect(c.bank).toBe((bit(a, 15) ^ bit(a, 19)) | (bit(a, 16) << 1));
      expect(c.row).toBe(Math.floor(a / 2 ** 20));
    }
    // The two bursts of a 64 B line are in different pseudo-channels of one channel.
    expect(map.lane(0)).not.toBe(map.lane(32));
    expect(map.granuleBytes).toBe(32);
  });

  it("mop4clxor reproduces the hbm2-xor table", () => {
    const map = hbmAddressMap(hbm2, "mop4clxor");
    for (const a of [0, 32, 0x12345660, 0x3fffffe0, 0x2aaaaaa0]) {
      const c = map.locate(a);
      expect(c.channel).toBe(Math.floor(a / 64) % 8);
      expect(c.column).toBe(
        bit(a, 5) | (bit(a, 9) << 1) | (bit(a, 15) << 2) | (bit(a, 16) << 3) | (bit(a, 17) << 4),
      );
      expect(c.pseudoChannel).toBe(bit(a, 10) ^ bit(a, 5));
      expect(c.bankGroup).toBe((bit(a, 11) ^ bit(a, 9)) | ((bit(a, 12) ^ bit(a, 15)) << 1));
      expect(c.bank).toBe((bit(a, 13) ^ bit(a, 16)) | ((bit(a, 14) ^ bit(a, 17)) << 1));
      expect(c.row).toBe(Math.floor(a / 2 ** 18));
    }
  });

  it("xor spreads a power-of-two stride over every lane, where interleave and mop4clxor do not", () => {
    const lanesHit = (mapping: string): number => {
      const map = hbmAddressMap(hbm3, mapping);
      const lanes = new Set<number>();
      for (let i = 0; i < 512; i++) lanes.add(map.lane(i * 8192));
      return lanes.size;
    };
    expect(lanesHit("interleave")).toBe(1);
    expect(lanesHit("mop4clxor")).toBe(1);
    expect(lanesHit("xor")).toBe(32);
  });

  it("every mapping is a bijection on a window of the stack", () => {
    for (const mapping of [
      "interleave",
      "xor",
      "mop4clxor",
      "RoBaBgSiPcCo4ChCo1",
      "RoBaRaPcCoCh",
      "RoCoBaBgSiPcCh",
    ]) {
      const map = hbmAddressMap(hbm3, mapping);
      const seen = new Set<string>();
      for (let a = 0; a < 2 ** 22; a += 32) {
        const c = map.locate(a);
        seen.add(`${c.channel}.${c.pseudoChannel}.${c.sid}.${c.bankGroup}.${c.bank}.${c.row}.${c.column}`);
      }
      expect(seen.size, mapping).toBe(2 ** 17);
    }
  });

  it("refuses unknown names, missing fields and non-powers of two", () => {
    expect(() => hbmAddressMap(hbm3, "RoBaCh")).toThrow(
      /pseudo-channel \(Pc\) has 0 bit\(s\), the organisation needs 1: add Pc/,
    );
    expect(() => hbmAddressMap(hbm3, "fancy")).toThrow(/cannot read "fancy"/);
    expect(() => hbmAddressMap({ ...hbm3, channels: 12 }, "xor")).toThrow(
      /channels must be a power of two, got 12/,
    );
    expect(() => hbmAddressMap(hbm3, "RoCoBaBgSiPcChCo")).toThrow(/Co appears more than once/);
  });
});

describe("lane()", () => {
  it("equals the lane of locate() for every mapping (its table form is exact)", () => {
    for (const mapping of ["xor", "mop4clxor", "RoBaBgSiPcCo4ChCo1", "RoCoBaBgSiPcCh"]) {
      const map = hbmAddressMap(hbm3, mapping);
      let state = 12345;
      for (let i = 0; i < 20000; i++) {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        const offset = (state % 2 ** 29) * 32 + (i % 3) * 2 ** 30;
        const c = map.locate(offset);
        expect(map.lane(offset), `${mapping} @ ${offset}`).toBe(c.channel * 2 + c.pseudoChannel);
      }
    }
  });
});
