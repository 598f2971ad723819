import { describe, expect, it } from "vitest";
import { NO_DATA_COLOUR, needsLightText, trackKind, UTILISATION_STOPS, utilisationColour } from "./colour.js";
import { escapeHtml, formatNs, formatRatio, formatSi } from "./format.js";

describe("utilisationColour", () => {
  it("runs from the first stop at 0 to the last at 1, clamped", () => {
    expect(utilisationColour(0)).toBe(UTILISATION_STOPS[0]);
    expect(utilisationColour(1)).toBe(UTILISATION_STOPS[UTILISATION_STOPS.length - 1]);
    expect(utilisationColour(-1)).toBe(utilisationColour(0));
    expect(utilisationColour(7)).toBe(utilisationColour(1));
    expect(utilisationColour(0.25)).toBe(UTILISATION_STOPS[1]);
  });

  it("interpolates between stops and has a neutral colour for no data", () => {
    expect(utilisationColour(0.125)).toMatch(/^#[0-9a-f]{6}$/);
    expect(utilisationColour(0.125)).not.toBe(utilisationColour(0.25));
    expect(utilisationColour(null)).toBe(NO_DATA_COLOUR);
  });

  it("asks for light text on the dark end only", () => {
    expect(needsLightText(utilisationColour(1))).toBe(true);
    expect(needsLightText(utilisationColour(0))).toBe(false);
  });
});

describe("trackKind", () => {
  it("names the component kind of a trace track", () => {
    expect(trackKind("sip0.cube0.pe3.pe_gemm")).toBe("pe_gemm");
    expect(trackKind("sip0.cube0.pe3.pe_dma#1")).toBe("pe_dma");
    expect(trackKind("sip0.cube0.hbm#12")).toBe("hbm");
    expect(trackKind("sip0.cube0.noc.r1c3")).toBe("noc");
    expect(trackKind("sip0.cube1.ucie0")).toBe("ucie");
    expect(trackKind("sip0.io_cpu")).toBe("io_cpu");
  });
});

describe("formats", () => {
  it("writes times, rates and ratios as kb run does", () => {
    expect(formatNs(850)).toBe("850 ns");
    expect(formatNs(12_345)).toBe("12.35 µs");
    expect(formatSi(409.6e9, "B/s")).toBe("409.6 GB/s");
    expect(formatRatio(1.23456)).toBe("1.235 x");
    expect(formatRatio(null)).toBe("-");
  });

  it("escapes text for tooltips", () => {
    expect(escapeHtml(`<b a="x">&'`)).toBe("&#60;b a=&#34;x&#34;&#62;&#38;&#39;");
  });
});
