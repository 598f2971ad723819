import { describe, expect, it } from "vitest";
import { canonicalJson, completeManifest, sha256Hex } from "./manifest.js";

describe("run manifest", () => {
  it("writes canonical JSON: keys sorted at every depth, arrays in order, undefined left out", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    expect(() => canonicalJson({ x: Number.NaN })).toThrow(/NaN has no JSON form/);
  });

  it("hashes with sha256", async () => {
    // The sha256 of "abc" (FIPS 180-2, appendix B.1).
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("digests everything but the Node version", async () => {
    const input = {
      packages: { "@kb/runtime": "0.1.0" },
      plugins: [],
      topology: { name: "t", digest: "aa" },
      bench: { name: "gemm", digest: "bb" },
      params: { M: 64 },
      seed: 1,
      options: {},
      node: "v20.0.0",
    };
    const a = await completeManifest(input);
    const b = await completeManifest({ ...input, node: "v22.1.0" });
    const c = await completeManifest({ ...input, params: { M: 128 } });
    expect(a.digest).toBe(b.digest);
    expect(a.digest).not.toBe(c.digest);
    const { node: _node, digest: _digest, ...body } = a;
    expect(a.digest).toBe(await sha256Hex(canonicalJson(body)));
  });
});
