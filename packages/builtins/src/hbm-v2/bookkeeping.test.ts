// The controller's bookkeeping stays amortised (issue 37 point 3, speed): freeing finished
// requests walks every live request, so it must not run once per arrival.
import { describe, expect, it, vi } from "vitest";
import { PortState } from "./port-state.js";
import { hbm3Harness, hbmModel } from "./test-support.js";

describe("hbm_ctrl_v2 bookkeeping", () => {
  it("frees finished requests in batches: a few cleanups for 4096 streamed reads, not one per arrival", () => {
    const cleanup = vi.spyOn(PortState.prototype as unknown as { cleanup: () => void }, "cleanup");
    const h = hbm3Harness();
    // 4096 reads of 64 B, 8 in flight per 10 ns, all on port 0 (RoBaBgSiPcCo4ChCo1: bits 6-9 are
    // the channel, bit 14 the PC; offsets 16 KiB... apart stay on channel 0, PC 0).
    let answered = 0;
    for (let i = 0; i < 4096; i++) {
      if (h.machine.env.now < Math.floor(i / 8) * 10) h.machine.env.run(Math.floor(i / 8) * 10);
      const column = (i % 16) * 1024;
      const row = Math.floor(i / 16) * 32768;
      h.request("read", row + column, 64).addCallback(() => {
        answered++;
      });
    }
    h.machine.run();
    expect(answered).toBe(4096);
    expect(hbmModel(h).stats(0).readBursts).toBe(8192);
    // Amortised: at most one cleanup per 16 arrivals (the pools grow while most slots are live).
    expect(cleanup.mock.calls.length).toBeLessThanOrEqual(4096 / 16);
    cleanup.mockRestore();
  }, 60_000);
});
