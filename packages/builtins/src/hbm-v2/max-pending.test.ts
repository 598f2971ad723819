// hbm_ctrl_v2's two admission limits: the queues' room in bursts (Ramulator's rule) and the
// memory component's back-pressure in whole requests (`max_pending`). With single-burst requests
// (32 B: mop4clxor's halves of a line) the default max_pending, (read_queue + write_queue) / 2 =
// 32 requests, binds before the queues (64 bursts): a request the queues would take waits in the
// component's inbox instead, inside its latency. The benches/perf/hbm configurations set 96
// (read_queue + write_queue + one activated request per bank), so only the queues refuse.

import { describe, expect, it } from "vitest";
import { hbm3Harness, hbmModel } from "./test-support.js";

const WRITE_ELSEWHERE = 1 << 16; // bank group 1 of port 0 (RoBaBgSiPcCo4ChCo1)

/** Port 0 after `reads` reads of `bytes` and one 32 B write, all at 0 (the first ACT is at 0.625). */
function fill(params: Record<string, unknown>, reads: number, bytes: number) {
  const h = hbm3Harness(params);
  // Consecutive bursts of one row of port 0: column bit 0 is A5, column bits 1-4 are A[13:10].
  const burstAddress = (c: number) => ((c & 1) << 5) | ((c >> 1) << 10);
  for (let i = 0; i < reads; i++) h.request("read", burstAddress((i * bytes) / 32), bytes);
  h.request("write", WRITE_ELSEWHERE, 32);
  h.machine.env.run(0.1);
  const m = hbmModel(h);
  return {
    maxPending: m.maxPending,
    readRoom: m.room(0, "read"),
    writeRoom: m.room(0, "write"),
    inbox: h.memory.queued,
  };
}

describe("hbm_ctrl_v2 max_pending against the queues' room", () => {
  it("32 single-burst reads fill the default max_pending (32): the write waits in the inbox, though its queue has room", () => {
    // 32 reads x 1 burst = the read queue's 32 bursts (room 0) and 32 unanswered requests.
    expect(fill({}, 32, 32)).toEqual({ maxPending: 32, readRoom: 0, writeRoom: 32, inbox: 1 });
  });

  it("with max_pending 96 the same write enters its queue at once: only the queues refuse", () => {
    expect(fill({ max_pending: 96 }, 32, 32)).toEqual({
      maxPending: 96,
      readRoom: 0,
      writeRoom: 31,
      inbox: 0,
    });
  });

  it("the default fits 64 B lines: 16 two-burst reads fill the read queue with 16 requests pending, and the write enters", () => {
    expect(fill({}, 16, 64)).toEqual({ maxPending: 32, readRoom: 0, writeRoom: 31, inbox: 0 });
  });
});
