import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { base64Url, decodeShared, encodeShared, type SharedRun } from "../src/ui/share.js";

// A shared link is the only copy of a user's edited bench: what a link carries must come back
// exactly, links made by older builds must still open, and a damaged link must say so rather than
// open something else. (Node 20 has the browser's CompressionStream, so this runs the page's code.)

const run: SharedRun = {
  main: "benches/vector-add.ts",
  bench: "// 🚀 édité\nexport default 1;\n".repeat(50),
  topology: { name: "my.yaml", text: "name: mine\nsystem: { sips: 1 }\n" },
  params: "n=4096 dtype=bf16",
  verify: true,
  limits: { maxEvents: "500", maxSimTimeNs: "" },
};

describe("share links", () => {
  it("gives back the bench, topology, params, verify flag and limits a link carries", async () => {
    const hash = await encodeShared(run);
    expect(hash).toMatch(/^#z=[A-Za-z0-9_-]+$/);
    expect(await decodeShared(hash)).toEqual(run);
  });

  it("carries an unchanged reference topology by its name only", async () => {
    const hash = await encodeShared({ ...run, topology: { ref: "ref-cube.yaml" } });
    expect((await decodeShared(hash))?.topology).toEqual({ ref: "ref-cube.yaml" });
  });

  it("compresses: the default example's bench makes a link well under its own length", async () => {
    const long = { ...run, bench: "const x = tl.load(part.x.at(i), [n], part.x.dtype);\n".repeat(100) };
    expect((await encodeShared(long)).length).toBeLessThan(long.bench.length / 10);
  });

  it("opens a link made before the limits were shared, with no limits", async () => {
    const { limits: _limits, ...old } = run;
    const json = Buffer.from(JSON.stringify({ v: 1, ...old }));
    const hash = `#z=${base64Url(deflateRawSync(json))}`;
    expect(await decodeShared(hash)).toEqual({ ...run, limits: { maxEvents: "", maxSimTimeNs: "" } });
    // The uncompressed form (browsers without CompressionStream write it).
    expect(await decodeShared(`#j=${base64Url(json)}`)).toEqual({
      ...run,
      limits: { maxEvents: "", maxSimTimeNs: "" },
    });
  });

  it("takes any other fragment for no shared run, and says a damaged link cannot be read", async () => {
    expect(await decodeShared("")).toBeNull();
    expect(await decodeShared("#results")).toBeNull();
    const hash = await encodeShared(run);
    await expect(decodeShared(hash.slice(0, hash.length / 2))).rejects.toThrow();
    const notARun = `#j=${base64Url(Buffer.from(JSON.stringify({ v: 1, hello: "world" })))}`;
    await expect(decodeShared(notARun)).rejects.toThrow(
      "the link does not carry a playground run (version, bench)",
    );
  });
});
