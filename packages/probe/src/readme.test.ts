import { readmeExample } from "@kb/tooling/readme-example";
import { expandTopology, parseTopology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { MemoryHarness, runProbe } from "./index.js";

// The example of packages/probe/README.md, run as written: `console` is a local that collects
// what the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("drives the HBM model alone, then probes the topology's models against their formulas", () => {
    const printed: unknown[][] = [];
    const console = { log: (...values: unknown[]) => printed.push(values) };
    // README example start
    // One cube of 2 x 2 PEs over an HBM stack of 2 channels x 2 pseudo-channels (hbm_ctrl_v1).
    const yaml =
      "name: t\ncube:\n  hbm: { channels: 2, pseudo_channels: 2, pc_bw_gbs: 25.6 }\n  noc: { rows: 2, cols: 2 }\n";
    const graph = expandTopology(parseTopology(yaml, "t.yaml"));

    // The memory model alone: a 64 B read at stack offset 0x1000, as the fabric would deliver it.
    const harness = new MemoryHarness(graph); // the built-ins plus { plugins } if given
    const read = harness.request("read", 0x1000, 64);
    harness.machine.run(read);
    console.log(read.value.doneNs - read.value.arrivalNs); // 42.5: 40 ns access + 64 B at 25.6 GB/s

    // kb probe's catalog on the same topology: every case against its formula.
    const report = runProbe(graph);
    console.log(report.pass, report.cases.length); // true 9
    // README example end
    expect(printed).toEqual([[42.5], [true, 9]]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
