import { describe, expect, it } from "vitest";
import {
  formatByteCount,
  formatExactBytes,
  formatFixed,
  formatNs,
  formatNumber,
  formatPercent,
  formatQuantity,
  formatRatio,
  formatSi,
  withoutFloatNoise,
} from "./index.js";

// Every magnitude a computed value can take: a 1e300 ns link latency makes rates of 1e-290 B/s,
// sums of such latencies overflow to Infinity, 0/0 is NaN.
const magnitudes = [
  ...Array.from({ length: 61 }, (_, i) => 10 ** (i * 10 - 300)),
  ...Array.from({ length: 61 }, (_, i) => -(10 ** (i * 10 - 300))),
  Number.MIN_VALUE,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  0,
  -0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
];

describe("fault: number formats at any magnitude", () => {
  it("never throw and always print something readable, for 1e-300..1e300, NaN and Infinity", () => {
    for (const value of magnitudes) {
      for (const text of [
        formatNumber(value, 4),
        formatNs(value),
        formatSi(value, "B/s"),
        formatQuantity(value, "J"),
        formatPercent(value),
        formatRatio(value),
        formatFixed(value, 2),
        formatFixed(value, 150),
        formatByteCount(value),
        formatExactBytes(value),
      ]) {
        expect(text, String(value)).toMatch(/^-?(?:[0-9][0-9.,]*(?:e[+-]\d+)?|NaN|Infinity)(?: ?\S*)?$/);
        expect(text.length, String(value)).toBeLessThan(48);
      }
    }
  });

  it("keep the value of tiny and huge numbers (an exponent where digits would not fit)", () => {
    expect(formatNumber(1.23456e-300, 4)).toBe("1.235e-300");
    expect(formatNumber(1.23456e300, 4)).toBe("1.235e+300");
    expect(formatSi(2e-290, "B/s")).toBe("2e-290 B/s");
    expect(formatNs(1e300)).toBe("1e+291 s");
    expect(formatPercent(1e-300)).toBe("0.0%");
    expect(formatFixed(1e-300, 2)).toBe("0.00");
    expect(formatFixed(2.5e300, 2)).toBe("2.5e+300");
  });

  it("formatQuantity gives a quantity below 1 its prefix, down to f (energy and power)", () => {
    expect(formatQuantity(0.000512, "J")).toBe("512 µJ");
    expect(formatQuantity(2.5e-3, "W")).toBe("2.5 mW");
    expect(formatQuantity(1.23456e-9, "J")).toBe("1.235 nJ");
    expect(formatQuantity(4100, "J")).toBe("4.1 kJ");
    expect(formatQuantity(0, "J")).toBe("0 J");
    expect(formatQuantity(3e-18, "J")).toBe("0.003 fJ");
  });

  it("print non-finite values as such", () => {
    expect(formatNumber(Number.NaN, 4)).toBe("NaN");
    expect(formatNs(Number.POSITIVE_INFINITY)).toBe("Infinity s");
    expect(formatPercent(Number.NaN)).toBe("NaN%");
    expect(formatFixed(Number.NEGATIVE_INFINITY, 2)).toBe("-Infinity");
  });

  it("print ordinary values as before", () => {
    expect(formatNumber(2048.9049999999997, 4)).toBe("2049");
    expect(formatNumber(0.00012345, 3)).toBe("0.000123");
    expect(formatSi(819.2e9, "B/s")).toBe("819.2 GB/s");
    expect(formatFixed(1.005, 2)).toBe((1.005).toFixed(2));
    expect(formatPercent(0.278)).toBe("27.8%");
  });
});

describe("byte sizes", () => {
  it("formatByteCount: bytes below 1 KiB, then 4 significant digits in the largest binary unit", () => {
    expect(formatByteCount(512)).toBe("512 B");
    expect(formatByteCount(24 * 1024)).toBe("24 KiB");
    expect(formatByteCount(1.5 * 1024 * 1024)).toBe("1.5 MiB");
    expect(formatByteCount(1234567)).toBe("1.177 MiB"); // 1234567 / 1048576 = 1.17737...
    expect(formatByteCount(2 ** 50)).toBe("1024 TiB");
  });

  it("formatExactBytes: the largest binary unit that divides the size exactly", () => {
    expect(formatExactBytes(16 * 2 ** 30)).toBe("16 GiB");
    expect(formatExactBytes(8 * 2 ** 20)).toBe("8 MiB");
    expect(formatExactBytes(1000)).toBe("1000 B");
    expect(formatExactBytes(1536 * 1024)).toBe("1536 KiB");
  });
});

describe("numbers kept in files", () => {
  it("withoutFloatNoise: sums' noise gone at 12 significant digits, integers and non-finite kept", () => {
    expect(withoutFloatNoise(94045.54999999997)).toBe(94045.55);
    expect(withoutFloatNoise(0.1 * 3)).toBe(0.3);
    expect(withoutFloatNoise(0.0012529918910541428)).toBe(0.00125299189105);
    expect(withoutFloatNoise(2 ** 60)).toBe(2 ** 60);
    expect(withoutFloatNoise(-7)).toBe(-7);
    expect(withoutFloatNoise(Number.NaN)).toBeNaN();
    expect(withoutFloatNoise(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
  });
});
