import type { RunResults } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { launchSources, siteFiles, splitSiteKey } from "./source-model.js";

const row = (line: string, share: number) => ({
  line,
  calls: ["load"],
  count: 1,
  waitNs: share * 100,
  share,
  busyNs: {},
  bytes: 0,
});

const results = {
  launches: [
    {
      name: "k",
      sites: { programNs: 100, lines: [row("src/k.ts:3", 0.6), row("src/k.ts:2", 0.4)] },
    },
    { name: "old" },
  ],
} as unknown as RunResults;

describe("the source view's model", () => {
  it("lays each launch's lines over the kernel's text, the figures on the lines that issued commands", () => {
    const [view] = launchSources(results, { "src/k.ts": "a\nb\nc\nd\n" });
    expect(view?.launch).toBe("k (launch 1)");
    expect(view?.maxShare).toBe(0.6);
    const file = view?.files[0];
    expect(file?.hasText).toBe(true);
    expect(file?.lines.map((line) => [line.number, line.text, line.site?.share ?? null])).toEqual([
      [1, "a", null],
      [2, "b", 0.4],
      [3, "c", 0.6],
      [4, "d", null],
    ]);
  });

  it("without the file's text, lists the sited lines in line order", () => {
    const [view] = launchSources(results, {});
    expect(view?.files[0]?.hasText).toBe(false);
    expect(view?.files[0]?.lines.map((line) => line.key)).toEqual(["src/k.ts:2", "src/k.ts:3"]);
  });

  it("names the files the sites come from; a Windows-less key splits at its last colon", () => {
    expect(siteFiles(results)).toEqual(["src/k.ts"]);
    expect(splitSiteKey("C:/k.ts:12")).toEqual({ file: "C:/k.ts", line: 12 });
  });
});
