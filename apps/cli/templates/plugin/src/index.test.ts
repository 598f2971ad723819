import { fileURLToPath } from "node:url";
import { defaultRegistry } from "@kb/builtins";
import { gemmWork, StageEngine, tcmAddress } from "@kb/components";
import { buildMachineFromFile } from "@kb/components/node";
import { describe, expect, it } from "vitest";
import plugin, { bigArrayNs, bigArrayParams } from "./index.js";

// `npm test`. The machine loads the plug-in as kb does, from topologies/example.yaml's
// `plugins: [..]` (dist/ once built, else src/index.ts), with the one @kb/components this test
// imports: its engines are this test's StageEngine class.
const example = fileURLToPath(new URL("../topologies/example.yaml", import.meta.url));

describe("{{name}}", () => {
  it("big_array: 2 x 2 passes of k, plus the fill and drain", () => {
    expect(bigArrayNs(gemmWork(128, 128, 128, "f16"), bigArrayParams.parse({}))).toBe(4 * 128 + 128);
  });

  it("is the plug-in topologies/example.yaml loads", async () => {
    const { plugins } = await buildMachineFromFile(example, { registryFor: defaultRegistry });
    expect(plugins.map((loaded) => loaded.meta.name)).toEqual([plugin.meta.name]);
  });

  it("times a GEMM in a machine as its formula says (example.yaml: a 128 x 128 array)", async () => {
    const { machine } = await buildMachineFromFile(example, { registryFor: defaultRegistry });
    const engine = machine.component("sip0.cube0.pe0.pe_gemm");
    expect(engine).toBeInstanceOf(StageEngine);
    const tcm = (offset: number) => tcmAddress(0, 0, 0, offset); // sip, cube, PE, byte offset
    const done = machine.submit("sip0.cube0.pe0", [
      { kind: "gemm", a: tcm(0), b: tcm(0x8000), out: tcm(0x10000), m: 128, n: 128, k: 128, dtype: "f16" },
    ]);
    machine.run(done);
    expect(engine.stats.busyNs).toBe(128 + 128 + 128);
  });
});
