import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import * as builtins from "@kb/builtins";
import { afterAll, describe, expect, it } from "vitest";
import { loadPlugins } from "./node.js";

// An installed plug-in package declares @kb/components and zod as peers. Used by a kb installed
// elsewhere (npm i -g @kb/cli), its folder may have neither: kernbench then hands it its own, as
// it does for a plug-in file, instead of failing with "Cannot find package '@kb/components'"
// (and, from its caller, @kb/builtins: kb hands PLUGIN_SHARED_MODULES of @kb/runtime/node).

const dir = realpathSync(mkdtempSync(join(tmpdir(), "kb-plugin-peers-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), text);
}

write(
  "node_modules/kb-plugin-peers/package.json",
  JSON.stringify({
    name: "kb-plugin-peers",
    type: "module",
    exports: { ".": "./dist/index.js" },
    peerDependencies: { "@kb/components": "^0.1.0", zod: "^4.0.0" },
  }),
);
// What tsup makes of a plug-in: ESM JavaScript importing its peers by name.
write(
  "node_modules/kb-plugin-peers/dist/index.js",
  `import { BUILTIN_COMPONENTS } from "@kb/builtins";
import { defineComponent, definePlugin } from "@kb/components";
import * as z from "zod";

const v1 = BUILTIN_COMPONENTS.find((definition) => definition.impl === "pe_gemm_v1");
export default definePlugin({
  meta: { name: "kb-plugin-peers", version: "0.1.0" },
  components: [
    defineComponent({
      kind: "pe_gemm",
      impl: "wide_gemm",
      description: "pe_gemm_v1 with a 256-wide array.",
      params: z.strictObject({}),
      create: (context) => v1.create(context, v1.params.parse({ mac_rows: 256, mac_cols: 256 })),
    }),
  ],
});
`,
);

// A plug-in on the contracts alone: peers @kb/spec and zod, neither installed beside it.
write(
  "node_modules/kb-plugin-spec-peers/package.json",
  JSON.stringify({
    name: "kb-plugin-spec-peers",
    type: "module",
    exports: { ".": "./dist/index.js" },
    peerDependencies: { "@kb/spec": "^0.1.0", zod: "^4.0.0" },
  }),
);
write(
  "node_modules/kb-plugin-spec-peers/dist/index.js",
  `import { defineStageEngine, definePlugin } from "@kb/spec";
import * as z from "zod";

export default definePlugin({
  meta: { name: "kb-plugin-spec-peers", version: "0.1.0" },
  components: [
    defineStageEngine({
      kind: "pe_math",
      impl: "flat_math",
      description: "Every MATH stage takes 10 ns.",
      params: z.strictObject({}),
      timing: () => 10,
    }),
  ],
});
`,
);

describe("an installed plug-in package whose peers are not installed beside it", () => {
  it("loads with kernbench's @kb/components and zod", async () => {
    const [plugin] = await loadPlugins(["kb-plugin-peers"], {
      from: dir,
      shared: { "@kb/builtins": builtins },
    });
    expect(plugin?.meta).toEqual({ name: "kb-plugin-peers", version: "0.1.0" });
    expect(plugin?.components.map((definition) => `${definition.kind}:${definition.impl}`)).toEqual([
      "pe_gemm:wide_gemm",
    ]);
  });

  it("would not import natively: its folder has no @kb/components", async () => {
    const url = pathToFileURL(join(dir, "node_modules", "kb-plugin-peers", "dist", "index.js"));
    await expect(import(url.href)).rejects.toThrow(
      /Cannot find (package|module) '@kb\/(builtins|components)'/,
    );
  });
});

describe("an installed plug-in package on @kb/spec alone, its peers not installed beside it", () => {
  it("loads with kernbench's @kb/spec and zod, and its definition is plain data", async () => {
    const [plugin] = await loadPlugins(["kb-plugin-spec-peers"], { from: dir });
    expect(
      plugin?.components.map((definition) => [definition.kind, definition.impl, definition.contract]),
    ).toEqual([["pe_math", "flat_math", "stage_engine"]]);
  });
});
