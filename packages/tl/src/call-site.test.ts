import { describe, expect, it } from "vitest";
import { CallSite } from "./call-site.js";

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

describe("CallSite.captureLocated", () => {
  it("finds the same line as capture, once per path of calls: a loop's calls share one cache entry", () => {
    const cache = new Map();
    const sites = [];
    for (let index = 0; index < 3; index++) sites.push(CallSite.captureLocated("load", cache)); // the loop
    const other = CallSite.captureLocated("dot", cache); // another line
    expect(cache.size).toBe(2);
    const loop = sites.map((site) => site.line);
    expect(new Set(loop).size).toBe(1);
    expect(loop[0]).toMatch(/call-site\.test\.ts:26$/);
    expect(other.line).toMatch(/call-site\.test\.ts:27$/);
    expect(sites[0]?.describe()).toMatch(/^tl\.load at .*call-site\.test\.ts:26:\d+$/);
  });
});
