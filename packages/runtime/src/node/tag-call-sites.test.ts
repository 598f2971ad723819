import { describe, expect, it } from "vitest";
import { callSiteTransform } from "./tag-call-sites.js";

describe("callSiteTransform", () => {
  it("spreads a tag after each tl-named call's arguments and says where each line's tags start", async () => {
    const { apply } = await callSiteTransform();
    const code = [
      '"use strict";',
      "async function k(tl, a) {",
      '  const x = await tl.load(a, [8], "f32"); await tl.store(a, await tl.exp(x));',
      "  tl.barrier?.(); other.foo(1); tl.programId(0);",
      "}",
    ].join("\n");
    const tagged = apply(code, "/k/kernel.js");
    const lines = tagged.split("\n");
    // Lines keep their numbers; a tag follows the last argument (`...` of an empty array).
    expect(lines.slice(0, 5)).toEqual([
      '"use strict";',
      "async function k(tl, a) {",
      '  const x = await tl.load(a, [8], "f32", ...__kbSiteTag(0, tl)); await tl.store(a, await tl.exp(x, ...__kbSiteTag(2, tl)), ...__kbSiteTag(1, tl));',
      "  tl.barrier?.(); other.foo(1); tl.programId(0, ...__kbSiteTag(3, tl));",
      "}",
    ]);
    // By hand, line 3: the load's tag starts at column 40 (1-based) and is 23 long; the exp's at
    // 40 + 23 + 35 = 98 (the 35 characters between them, moved by the first tag); the store's
    // one character after it, at 98 + 23 + 1 = 122. Line 4: one tag at 47 (the optional call and
    // `other.foo` have none).
    expect(lines[5]).toBe(
      ';function __kbSiteTag(index, receiver) { return (__kbSiteTags ??= require("@kb/tl").siteTags("/k/kernel.js", ["load","store","exp","programId"], {"3":[40,23,98,23,122,23],"4":[47,23]}))(index, receiver); }',
    );
    expect(lines[6]).toBe("var __kbSiteTags;");
  });

  it("leaves line 1 (node's module wrapper shares it) and a module with a source map as they are", async () => {
    const { apply } = await callSiteTransform();
    expect(apply("tl.load(a);\n", "/k/a.js")).toBe("tl.load(a);\n");
    const mapped = "\nawait tl.load(a);\n//# sourceMappingURL=data:application/json;base64,e30=\n";
    expect(apply(mapped, "/k/b.js")).toBe(mapped);
  });
});
