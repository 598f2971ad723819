import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { BUILTIN_COMPONENTS, defaultRegistry, HBM_PRESETS, peGemmV2Cycles, peGemmV2Params } from "./index.js";

// The example of packages/builtins/README.md, run as written: `console` is a local that collects
// what the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("lists the built-in impls, registers them, times a systolic GEMM and reads an HBM preset", () => {
    const printed: unknown[][] = [];
    const console = { log: (...values: unknown[]) => printed.push(values) };
    // README example start
    // Every built-in impl, as a topology names it in `impl:`.
    console.log(
      BUILTIN_COMPONENTS.length,
      BUILTIN_COMPONENTS.map((definition) => definition.impl).includes("hbm_ctrl_v2"),
    ); // 16 true

    // The registry a machine resolves impls in: the built-ins plus the plug-ins of a run.
    const registry = defaultRegistry([]);
    console.log(registry.resolve({ id: "sip0.cube0.hbm", kind: "hbm_ctrl", impl: "hbm_ctrl_v2" }).impl); // hbm_ctrl_v2

    // pe_gemm_v2's closed form outside a machine: a 32 x 32 weight-stationary array.
    const params = peGemmV2Params.parse({ dataflow: "ws" });
    console.log(peGemmV2Cycles(params, 128, 128, 128, "f16")); // 3552: 16 folds x (32 preload + 128 + 62 fill and drain)

    // hbm_ctrl_v2's JEDEC presets.
    console.log(HBM_PRESETS.hbm3.timing.tRCD_RD); // 19.375 (ns)
    // README example end
    expect(printed).toEqual([[17, true], ["hbm_ctrl_v2"], [3552], [19.375]]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
