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
