import type { TL } from "@kb/tl";
import { describe, expect, it } from "vitest";
import { Simulator } from "./index.js";
import { failure, thrown } from "./test-support.js";

// A launch that deadlocks reports its kernels first (PE, pending tl call with its direction or
// handle, the call's line, since when), then the machine's processes grouped by kind.

/** PE 1 receives from the west; nobody sends. */
const lonely = async (tl: TL) => {
  if (tl.programId(0) === 1) await tl.recv("west", { shape: [1, 16], dtype: "f32" });
};

/** PE 2 waits for an async receive from the east; nobody sends. */
const waiting = async (tl: TL) => {
  if (tl.programId(0) !== 2) return;
  const future = await tl.recvAsync("east", { shape: [1, 16], dtype: "f32" });
  await tl.wait(future);
};

async function deadlock(kernel: (tl: TL) => Promise<void>) {
  const sim = await Simulator.fromTopology({ name: "deadlock" });
  return failure(sim.launch(kernel, { args: [] }));
}

describe("a deadlocked launch", () => {
  it("leads with the blocked kernel: its PE, tl.recv with its direction, the line and since when", async () => {
    const error = await deadlock(lonely);
    expect(error.code).toBe("DES_DEADLOCK");
    const lines = error.message.split("\n");
    expect(lines[0]).toMatch(
      /^\[DES_DEADLOCK\] .*deadlock-report\.test\.ts:11:\d+ kernel lonely on sip0\.cube0\.pe1 at t=[\d.]+ ns: the launch deadlocked: 1 kernel\(s\) wait on a tl call that can never complete:$/,
    );
    expect(lines[1]).toMatch(
      /^ {2}sip0\.cube0\.pe1: kernel lonely, tl\.recv\("west"\) at .*deadlock-report\.test\.ts:11:\d+ \(since t=[\d.]+ ns\)$/,
    );
    expect(lines[2]).toContain("check that every receive has a matching send");
  });

  it("then lists the machine's processes by kind, alike waits counted rather than listed", async () => {
    const error = await deadlock(lonely);
    const lines = error.message.split("\n");
    const processes = lines.findIndex((line) => line.startsWith("The machine's processes:"));
    expect(processes).toBe(3);
    expect(lines[processes]).toContain("119 process(es) wait forever (by kind");
    // The odd one out first: the PE_CPU waiting on its west slots, before its 7 idle peers.
    expect(lines[processes + 1]).toBe(
      '  - process "sip0.cube0.pe1.pe_cpu" waits on get from Store "sip0.cube0.pe1<west slots" (0/inf items, 0 putter(s) and 1 getter(s) waiting)',
    );
    expect(lines[processes + 2]).toMatch(
      /^ {2}- 7 processes "sip\*\.cube\*\.pe\*\.pe_cpu" wait alike, e\.g\. "sip0\.cube0\.pe0\.pe_cpu" on get from Store "sip0\.cube0\.pe0\.pe_cpu"/,
    );
    expect(lines).toContain(
      '  - 16 processes "sip*.cube*.hbm#*" wait alike, e.g. "sip0.cube0.hbm#0" on get from Store "sip0.cube0.hbm#0" (0/64 items, 0 putter(s) and 1 getter(s) waiting)',
    );
    expect(lines.length).toBeLessThan(30);
  });

  it("names the handle of a tl.wait that can never complete", async () => {
    const error = await deadlock(waiting);
    expect(error.message.split("\n")[1]).toMatch(
      /^ {2}sip0\.cube0\.pe2: kernel waiting, tl\.wait\(RecvFuture\(#0\)\) at .*deadlock-report\.test\.ts:18:\d+ \(since t=[\d.]+ ns\)$/,
    );
  });

  it("leaves the simulator refusing further work, with the deadlock as the cause", async () => {
    const sim = await Simulator.fromTopology({ name: "deadlock" });
    const error = await failure(sim.launch(lonely, { args: [] }));
    const refused = thrown(() => sim.empty([4], "f32"));
    expect(refused.code).toBe("RUNTIME_INVALID");
    expect(refused.cause).toBe(error);
  });
});
