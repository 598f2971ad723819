import { describe, expect, it } from "vitest";
import { siteTags, sourceColumn, takeSiteTag } from "./site-tags.js";

describe("site tags", () => {
  it("a tag is taken by the next call of its name on its receiver, once; any other call drops it", () => {
    const tl = {};
    const tag = siteTags("/k/tags-a.js", ["load", "store"], {});
    expect(tag(1, tl)).toEqual([]);
    const store = takeSiteTag(tl, "store");
    expect(store).toBeGreaterThanOrEqual(0);
    expect(takeSiteTag(tl, "store")).toBe(-1);
    tag(0, tl);
    expect(takeSiteTag(tl, "store")).toBe(-1); // the load's tag, dropped by a store
    expect(takeSiteTag(tl, "load")).toBe(-1);
    tag(0, {});
    expect(takeSiteTag(tl, "load")).toBe(-1); // another receiver's (Math.max, a handle)
    tag(0, tl);
    expect(takeSiteTag(tl, "load")).toBe(store - 1); // the module's tags are consecutive
  });

  it("moves a column back by the tags that start before it on its line", () => {
    // Line 3: tags at columns 40 and 98 (23 long each); line 4: one at 47.
    siteTags("/k/tags-b.js", [], { "3": [40, 23, 98, 23], "4": [47, 23] });
    expect(sourceColumn("/k/tags-b.js", 3, 20)).toBe(20);
    expect(sourceColumn("/k/tags-b.js", 3, 70)).toBe(70 - 23);
    expect(sourceColumn("file:///k/tags-b.js", 3, 130)).toBe(130 - 46);
    expect(sourceColumn("/k/tags-b.js", 4, 47)).toBe(47);
    expect(sourceColumn("/k/tags-b.js", 4, 80)).toBe(57);
    expect(sourceColumn("/k/tags-b.js", 5, 80)).toBe(80);
    expect(sourceColumn("/k/other.js", 3, 130)).toBe(130);
  });
});
