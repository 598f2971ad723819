// Row-buffer hits under ref-cube's `xor` mapping (issue 37: `kb run vector-add --topology
// ref-cube` with hbm_ctrl_v2 reports 0 row hits and ~186 k conflicts). Not a counting bug: `xor`
// scatters a sequential stream over every bank of the stack (a bank every 32 KiB of the stream:
// 16 channels x 2 PCs x 32 banks x 32 B), so a row hit needs its row to stay open while the
// stream walks 32 KiB; vector-add's 96 streams (32 PEs x a, b, out) put 95 other rows into each
// bank in between. One stream alone hits as the row layout says.
import type { MemoryHarness } from "@kb/probe";
import { describe, expect, it } from "vitest";
import type { HbmCtrlV2Model } from "./hbm-ctrl-v2.js";
import { refCubeHarness } from "./test-support.js";

/** ref-cube's stack (topologies/ref-cube.yaml `cube.hbm`), refresh off (a refresh closes rows). */
const refCube = (): MemoryHarness => refCubeHarness({ refresh: "none" });

/** `streams` sequential readers, k x 256 KiB + j x 8 MiB apart (vector-add's a, b, out of 32 PEs), 1 KiB reads in rounds. */
function stream(streams: number, reads: number): Record<string, number> {
  const h = refCube();
  for (let i = 0; i < reads; i++) {
    if (h.machine.env.now < i * 50 * streams) h.machine.env.run(i * 50 * streams);
    for (let s = 0; s < streams; s++)
      h.request("read", (s % 32) * 262144 + Math.floor(s / 32) * 8388608 + i * 1024, 1024);
  }
  h.machine.run();
  return Object.fromEntries((h.memory.model as HbmCtrlV2Model).stats().map((s) => [s.name, s.total]));
}

describe("hbm_ctrl_v2 row hits under the xor mapping (ref-cube)", () => {
  it("one 256 KiB stream: each of the 1024 banks (32 PCs x 32) gets 8 bursts of row 0, 32 KiB apart: 1024 misses, 7168 hits", () => {
    // A 1 KiB read puts one burst on each of 32 ports, each its own run: 8192 runs.
    expect(stream(1, 256)).toMatchObject({
      rd: 8192,
      row_hits: 7168,
      row_misses: 1024,
      row_conflicts: 0,
      act: 1024,
    });
  }, 60_000);

  it("96 streams of 8 KiB (less than the 32 KiB to come back to a bank; no two share a row of a bank): every run opens its row", () => {
    // 96 x 8 KiB / 32 B = 24 576 bursts, each its own run; 1024 banks opened first, the rest conflicts.
    expect(stream(96, 8)).toMatchObject({
      rd: 24576,
      row_hits: 0,
      row_misses: 1024,
      row_conflicts: 23552,
      act: 24576,
    });
  }, 60_000);
});
