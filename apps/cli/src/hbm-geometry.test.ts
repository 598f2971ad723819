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
