import { describe, expect, it } from "vitest";
import { runScale, SCALE_CASES, scaleTopology } from "./scale.js";

describe("bench:scale", () => {
  it("builds each size from ref-4sip.yaml with 16 cubes of 16 PEs per SIP", () => {
    for (const scaleCase of SCALE_CASES) {
      const topology = scaleTopology(scaleCase.sips);
      const { system, sip, cube } = topology;
      expect(system.sips * sip.cubes * cube.noc.rows * cube.noc.cols).toBe(scaleCase.pes);
      expect(topology.name).toBe(`scale-${scaleCase.pes}`);
    }
    expect(SCALE_CASES.map((scaleCase) => scaleCase.pes)).toEqual([256, 1024, 4096, 8192]);
  });

  it("runs vector-add on every PE of the 256-PE machine: phase 2 verifies it, and a second run gives the same simulated time and events", async () => {
    const topology = scaleTopology(1);
    const checked = await runScale(topology, 32, true);
    expect(checked.problems).toEqual([]);
    expect(checked.verified).toBe(true);
    const again = await runScale(topology, 32, false);
    expect({ simNs: again.simNs, events: again.events }).toEqual({
      simNs: checked.simNs,
      events: checked.events,
    });
    expect(checked.events).toBeGreaterThan(256 * 4);
  }, 120_000);
});
