import { describe, expect, it } from "vitest";
import { CallSite, type SiteCache } from "./call-site.js";

describe("CallSite.describe", () => {
  it("names the call and its location (this test's line)", () => {
    const site = CallSite.capture("recv"); // captured here
    expect(site.describe()).toMatch(/^tl\.recv at .*call-site\.test\.ts:6:\d+$/);
  });

  it("shows the key arguments recorded with withArguments", () => {
    const site = CallSite.capture("recv").withArguments('"west"');
    expect(site.describe()).toMatch(/^tl\.recv\("west"\) at .*call-site\.test\.ts:11:\d+$/);
  });

  it("without a parsable stack, names the call and its arguments only", () => {
    expect(new CallSite("wait", null).withArguments("RecvFuture(#0)").describe()).toBe(
      "tl.wait(RecvFuture(#0))",
    );
  });
});

/** The frames `cache` holds for this test file (by character offset). */
function testFrames(cache: SiteCache): Map<number, unknown> {
  const file = [...cache.keys()].find((name) => name.endsWith("call-site.test.ts"));
  return cache.get(file as string) as Map<number, unknown>;
}

describe("CallSite.captureLocated", () => {
  it("finds the same line as capture, once per frame: a loop's calls share one cache entry", () => {
    const cache: SiteCache = new Map();
    const sites = [];
    for (let index = 0; index < 3; index++) sites.push(CallSite.captureLocated("load", cache)); // the loop
    const other = CallSite.captureLocated("dot", cache); // another line
    // This file's frames: the loop's call and the other one (the walk stops at the first).
    expect(testFrames(cache).size).toBe(2);
    const loop = sites.map((site) => site.line);
    expect(new Set(loop).size).toBe(1);
    expect(loop[0]).toMatch(/call-site\.test\.ts:32$/);
    expect(other.line).toMatch(/call-site\.test\.ts:33$/);
    expect(sites[0]?.describe()).toMatch(/^tl\.load at .*call-site\.test\.ts:32:\d+$/);
    expect(sites[0]?.location).toBe(sites[2]?.location); // one location object, from the cache
  });

  it("with the call's entry, takes the entry's caller from one frame, as the whole stack finds it", () => {
    const cache: SiteCache = new Map();
    // A tl method (its frame is skipped as tl's own, by its class's name) that is its own entry.
    class TLContext {
      exp(cached: boolean): CallSite {
        return CallSite.captureLocated("exp", cache, cached ? TLContext.prototype.exp : null);
      }
    }
    const tl = new TLContext();
    const whole = tl.exp(false); // line 53
    const fromEntry = [0, 1].map(() => tl.exp(true)); // line 54: one call expression, twice
    expect(whole.describe()).toMatch(/^tl\.exp at .*call-site\.test\.ts:53:\d+$/);
    expect(fromEntry[0]?.describe()).toMatch(/^tl\.exp at .*call-site\.test\.ts:54:\d+$/);
    expect(fromEntry[1]?.location).toBe(fromEntry[0]?.location);
    // One call expression, read from the whole stack and from the entry: the same, column included.
    const again: CallSite[] = [];
    for (const cached of [false, true]) again.push(tl.exp(cached));
    expect(again[1]?.describe()).toBe(again[0]?.describe());
    expect(again[0]?.describe()).toMatch(/^tl\.exp at .*call-site\.test\.ts:60:\d+$/);
  });

  it("captureCaller takes the entry's caller, or null when that caller is a frame of @kb/tl", () => {
    const cache: SiteCache = new Map();
    const entry = (): CallSite | null => CallSite.captureCaller("exp", cache, entry);
    expect(entry()?.describe()).toMatch(/^tl\.exp at .*call-site\.test\.ts:68:\d+$/);
    // A method of a class named as tl's is skipped as tl's own (a helper calling a tl call).
    class TLContext {
      call(): CallSite | null {
        return entry();
      }
    }
    expect(new TLContext().call()).toBeNull();
  });
});
