import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import type { Machine } from "./machine.js";
import { machineOf } from "./test-support.js";
import { Transfer } from "./transfer.js";

// Why a hop is served in its own event (docs/latency-model.md section 4, "One event per hop, not
// one per path"): at a merge point the event path serves packets in arrival order, and a packet
// that queued upstream arrives after one that a later event sends. Reserved ahead, at the upstream
// hop's event, the merge point would serve the queued packet first.
//
// default.yaml, cube0: interleave 256 puts offset 0 on ch0.pc0 (behind xbar0) and offsets 1024,
// 1280, 1536, 1792 on ch4..ch7.pc0 (behind xbar1). Links: pe_dma -> xbar 2 mm (0.02 ns), xbar ->
// bridge and bridge -> xbar 1 mm (0.01 ns); first_flit_ns 1 at each XBAR half and the bridge.

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
const XBAR0_PES = ["pe0", "pe1", "pe4", "pe5"].map((pe) => `sip0.cube0.${pe}.pe_dma`);
const PE7 = "sip0.cube0.pe7.pe_dma";

/** 64 B writes: the four xbar0 PEs' at 0 ns to ch4..ch7, PE7's at `lateNs` to ch0 (null: none). Commit times. */
function writes(machine: Machine, early: boolean, lateNs: number | null): { early: number[]; late: number } {
  const done: number[] = [];
  let late = -1;
  const write = (dma: string, offset: number, onDone: (t: number) => void) => {
    const transfer = new Transfer(machine.env);
    machine.fabric.write(dma, { address: hbm(offset), rows: 1, rowBytes: 64, stride: 64 }, transfer);
    transfer.seal();
    transfer.done.addCallback(() => onDone(machine.env.now));
  };
  if (early) {
    for (const [i, dma] of XBAR0_PES.entries()) {
      write(dma, 1024 + 256 * i, (t) => {
        done.push(t);
      });
    }
  }
  if (lateNs !== null) {
    machine.env.timeout(lateNs).addCallback(() => {
      write(PE7, 0, (t) => {
        late = t;
      });
    });
  }
  machine.env.run();
  return { early: done.sort((a, b) => a - b), late };
}

describe("a merge point serves packets in arrival order, not in the order their upstream hops ran", () => {
  it("the paths cross the bridge from both XBAR halves", () => {
    const machine = machineOf("default");
    const ids = (dma: string, offset: number) =>
      machine.fabric
        .path(dma, offset === 0 ? "sip0.cube0.hbm.ch0.pc0" : "sip0.cube0.hbm.ch4.pc0", "memory")
        .stops.map((stop) => stop.component?.id ?? "-");
    for (const dma of XBAR0_PES) {
      expect(ids(dma, 1024)).toEqual([
        dma,
        "sip0.cube0.xbar0",
        "sip0.cube0.bridge",
        "sip0.cube0.xbar1",
        "sip0.cube0.hbm",
      ]);
    }
    expect(ids(PE7, 0)).toEqual([
      PE7,
      "sip0.cube0.xbar1",
      "sip0.cube0.bridge",
      "sip0.cube0.xbar0",
      "sip0.cube0.hbm",
    ]);
  });

  it("PE7's write, sent at 1.5 ns, waits at the bridge behind one xbar0 packet, not three (hand-computed)", () => {
    // xbar0 serves the four writes that reach it at 0.02 over [0.02, 4.02] (their four arrival
    // events are at 0.02), so they reach the bridge at 1.03, 2.03, 3.03 and 4.03. PE7's reaches xbar1
    // at 1.52 (an event after xbar0's), leaves it at 2.52 and reaches the bridge at 2.53: the
    // bridge, serving [1.03, 2.03] and [2.03, 3.03], takes it at 3.03 (0.5 ns late), ahead of the
    // packets arriving at 3.03 and 4.03, which leave it 1 ns later than without it (5.03, 6.03;
    // no wait at xbar1 after that). The first two reach xbar1 at 2.04 and 3.04, where PE7's
    // holds it until 2.52: 0.48 ns late each. Had xbar0's event reserved the bridge for all
    // four, PE7's would have waited until 5.03 (2.5 ns late).
    const alone = writes(machineOf("default"), false, 1.5).late;
    const earlyAlone = writes(machineOf("default"), true, null).early;
    const both = writes(machineOf("default"), true, 1.5);
    expect(both.late - alone).toBeCloseTo(0.5, 9);
    expect(both.early.map((t, i) => t - (earlyAlone[i] as number))).toEqual(
      [0.48, 0.48, 1, 1].map((d) => expect.closeTo(d, 9)),
    );
  });
});
