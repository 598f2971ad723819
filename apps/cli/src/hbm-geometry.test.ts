import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

const fixture = (name: string) => fileURLToPath(new URL(`__fixtures__/${name}`, import.meta.url));

// issue 33 point 4: the HBM organisation has one source, cube.hbm.
describe("an override that changes the HBM organisation of one controller", () => {
  const file = fixture("override-hbm-channels.yaml");
  // `    params: { channels: 16 }`: the value 16 starts on line 5, column 25.
  const located = `${file}:5:25: overrides[0].params.channels: 16 would change the HBM organisation of node sip0.cube0.hbm for its model only: the pseudo-channel nodes, the fabric, the address map and the peaks are built from cube.hbm.channels (8). Set cube.hbm.channels instead (every stack has the organisation cube.hbm gives).\n`;

  it("is refused by kb topology validate at its place in the file", async () => {
    expect(await kb("topology", "validate", file)).toEqual({ code: 1, stdout: "", stderr: located });
  });

  it("is refused by kb run the same way, before anything runs", async () => {
    expect(await kb("run", "vector-add", "--topology", file)).toEqual({
      code: 1,
      stdout: "",
      stderr: located,
    });
  });
});

// The peak of a stack is its model's peak(): hbm_ctrl_v1 4 PCs x pc_bw_gbs 25.6 = 102.4 GB/s;
// hbm_ctrl_v2 (hbm3e) 4 PCs x 32 B / (2 / 2.4 ns) = 4 x 38.4 = 153.6 GB/s.
describe("kb topology show, kb probe and kb run agree on the HBM peak", () => {
  for (const [name, gbs, perPc, note] of [
    ["hbm-v1-small.yaml", "102.4", "25.6", ""],
    ["hbm-v2-small.yaml", "153.6", "38.4", "; hbm_ctrl_v2's peak(), not cube.hbm.pc_bw_gbs 25.6"],
  ] as const) {
    const file = fixture(name);
    it(`${name}: ${gbs} GB/s per stack`, async () => {
      const show = await kb("topology", "show", file);
      expect(show.code).toBe(0);
      expect(show.stdout).toContain(`cube0: 4 PEs (2 x 2), HBM 16 GiB at ${gbs} GB/s`);
      expect(show.stdout).toMatch(
        new RegExp(
          `\\n  HBM +${gbs} per stack \\(2 x 2 x ${perPc}${note.replace(/[().]/g, "\\$&")}\\), ${gbs} total \\(1 stack\\(s\\)\\)\\n`,
        ),
      );
      const probe = await kb("probe", "--topology", file);
      expect(probe.stdout).toContain(
        `HBM peak of sip0.cube0.hbm: ${gbs} GB/s (${name.includes("v2") ? "hbm_ctrl_v2" : "hbm_ctrl_v1"}'s peak(), 4 pseudo-channels x ${perPc} GB/s)`,
      );
      const run = await kb("run", "vector-add", "--topology", file, "--json");
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout).peak.hbmBytesPerS / 1e9).toBeCloseTo(Number(gbs), 9);
    }, 60_000);
  }
});
