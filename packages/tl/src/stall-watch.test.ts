import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { KernelHost, KernelRunner, type RunSlices } from "./runner.js";
import { machineOf, placementOf, TestMemory } from "./test-support.js";

// The stall detector of KernelHost.run (stall-watch.ts) on its own: it counts calls and reads the
// progress it is given, never a clock; @kb/runtime gives it the machine's counters and the limits'
// message (packages/runtime/src/stall-faults.test.ts).

/** Runs 400 `tl.cycles(1)` calls on one PE with `slices`; returns what each `between` saw. */
async function run400(stall: RunSlices["stall"]) {
  const machine = machineOf();
  const host = new KernelHost(machine.env);
  const kernel = async function cyclist(tl: TLContext) {
    for (let i = 0; i < 400; i++) await tl.cycles(1);
  };
  const runner = new KernelRunner(host, kernel, [], {
    kernel: "cyclist",
    placement: placementOf(),
    scratch: { offset: 2 ** 20, bytes: 4096 },
    memory: new TestMemory(),
  });
  const seen: { calls: number; kernels: string[]; recent: string[] }[] = [];
  const slices: RunSlices = {
    events: 1e9,
    ...(stall !== undefined ? { stall } : {}),
    between: async () => {
      const report = host.stalled();
      if (report === null) return;
      seen.push({
        calls: report.calls,
        kernels: report.kernels.map(
          ({ kernel, calls }) => `${kernel.tl.placement.pe} ${kernel.name} ${calls}`,
        ),
        recent: (report.kernels[0]?.recent ?? []).map(({ site, command }) => `${site?.call} ${command.kind}`),
      });
    },
  };
  await host.run(machine.submit(placementOf().pe, runner, runner.name), slices);
  return { seen, host };
}

describe("KernelHost's stall detector", () => {
  it("trips every `calls` calls without progress; a front end that goes on starts counting again", async () => {
    const { seen, host } = await run400({ calls: 80, progress: () => 0 });
    expect(seen).toHaveLength(5);
    for (const report of seen) {
      expect(report.calls).toBe(80);
      expect(report.kernels).toEqual(["sip0.cube0.pe0 cyclist 80"]);
      expect(report.recent).toEqual(Array(4).fill("cycles cycles"));
    }
    expect(host.stalled()).toBeNull(); // the run is over: no watch
  });

  it("never trips while the progress it reads changes, nor without a budget", async () => {
    let progress = 0;
    expect((await run400({ calls: 80, progress: () => progress++ })).seen).toEqual([]);
    expect((await run400({ calls: Number.POSITIVE_INFINITY, progress: () => 0 })).seen).toEqual([]);
    expect((await run400(undefined)).seen).toEqual([]);
  });
});
