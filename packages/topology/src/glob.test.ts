import { describe, expect, it } from "vitest";
import { idGlobToRegExp, isIdGlob } from "./glob.js";

describe("node-id globs", () => {
  it("* matches within one dot-separated segment", () => {
    const pattern = idGlobToRegExp("sip*.cube0.pe*.pe_dma");
    expect(pattern.test("sip0.cube0.pe0.pe_dma")).toBe(true);
    expect(pattern.test("sip12.cube0.pe63.pe_dma")).toBe(true);
    expect(pattern.test("sip0.cube0.pe0.pe_cpu")).toBe(false);
    expect(pattern.test("sip0.cube1.pe0.pe_dma")).toBe(false);
    // `pe*` may not swallow the dot: "pe0.x" is two segments.
    expect(idGlobToRegExp("sip0.cube0.pe*").test("sip0.cube0.pe0.pe_dma")).toBe(false);
    expect(idGlobToRegExp("sip0.*").test("sip0.io_cpu")).toBe(true);
    expect(idGlobToRegExp("sip0.*").test("sip0.cube0.m_cpu")).toBe(false);
  });

  it("* matches an empty run, ** is not special, and the match is anchored", () => {
    expect(idGlobToRegExp("pe*").test("pe")).toBe(true);
    expect(idGlobToRegExp("sip0.**").test("sip0.io_cpu")).toBe(true);
    expect(idGlobToRegExp("sip0.**").test("sip0.cube0.m_cpu")).toBe(false);
    expect(idGlobToRegExp("cube0").test("sip0.cube0")).toBe(false);
    expect(idGlobToRegExp("sip0.cube0").test("sip0.cube01")).toBe(false);
  });

  it("every other character matches itself (regex syntax is escaped)", () => {
    expect(idGlobToRegExp("a.b").test("axb")).toBe(false);
    expect(idGlobToRegExp("a?b").test("a?b")).toBe(true);
    expect(idGlobToRegExp("a?b").test("ab")).toBe(false);
    expect(idGlobToRegExp("x[0]+(y)|{z}$^\\").test("x[0]+(y)|{z}$^\\")).toBe(true);
  });

  it("isIdGlob tells globs from exact ids", () => {
    expect(isIdGlob("sip0.cube0.pe*.pe_dma")).toBe(true);
    expect(isIdGlob("sip0.cube0.pe0.pe_dma")).toBe(false);
  });
});
