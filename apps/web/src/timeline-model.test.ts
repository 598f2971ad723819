import { describe, expect, it } from "vitest";
import { decodeBusy, pan, ticks, zoom } from "./timeline-model.js";

describe("the timeline's window", () => {
  it("zooms around the pointer, keeping the time under it in place", () => {
    // 1000 ns window, pointer at 250 ns (a quarter in): halving keeps 250 a quarter in.
    expect(zoom({ fromNs: 0, toNs: 1000 }, 0.5, 250, 10_000)).toEqual({ fromNs: 125, toNs: 625 });
  });

  it("never leaves the run, nor grows past it", () => {
    expect(zoom({ fromNs: 0, toNs: 1000 }, 4, 900, 2000)).toEqual({ fromNs: 0, toNs: 2000 });
    expect(pan({ fromNs: 100, toNs: 600 }, -500, 2000)).toEqual({ fromNs: 0, toNs: 500 });
    expect(pan({ fromNs: 100, toNs: 600 }, 5000, 2000)).toEqual({ fromNs: 1500, toNs: 2000 });
  });

  it("ticks at 1, 2 or 5 x 10^k ns", () => {
    expect(ticks({ fromNs: 0, toNs: 1000 }, 5)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(ticks({ fromNs: 130, toNs: 190 }, 3)).toEqual([140, 160, 180]);
  });

  it("decodes the busy bytes the server sends as base64", () => {
    const busy = decodeBusy({ busy: btoa(String.fromCharCode(0, 255, 0, 1, 0, 0)) });
    expect([...busy]).toEqual([0, 255, 0, 1, 0, 0]);
  });
});
