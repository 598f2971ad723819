// The class-1 lists' row lists (issue 37 point 3, seventh pass): the scan walks a list only up to
// its oldest column candidate at the bus bound, then its row list alone, so at every scan each row
// list must hold exactly the entries of its list whose bank is not open to their row, in the
// list's order, and each bank's count of the others (B_NHIT) must be right.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  B_NHIT,
  B_ROW,
  BANK_STRIDE,
  E_NEXT,
  E_RIN,
  E_RNEXT,
  E_RPREV,
  E_STRIDE,
  LIST_READS,
  LIST_WRITES,
} from "./layout.js";
import { PortScan } from "./scan.js";
import { refCubeHarness, requestAt } from "./test-support.js";

/** What is wrong with `port`'s row lists (empty: nothing). */
function rowListErrors(port: PortScan): string[] {
  const errors: string[] = [];
  const { st, ed, eB, eRow } = port;
  const hits = new Map<number, number>();
  for (let list = LIST_READS; list <= LIST_WRITES; list++) {
    const expected: number[] = [];
    for (let e = st[port.listHead(list)] as number; e >= 0; e = ed[e * E_STRIDE + E_NEXT] as number) {
      const b = eB[e] as number;
      const candidate = st[b + B_ROW] !== eRow[e];
      if (candidate) expected.push(e);
      else hits.set(b, (hits.get(b) ?? 0) + 1);
      if ((ed[e * E_STRIDE + E_RIN] === 1) !== candidate) errors.push(`list ${list}: entry ${e}'s flag`);
    }
    const actual: number[] = [];
    let prev = -1;
    for (let e = st[port.rowListHead(list)] as number; e >= 0; e = ed[e * E_STRIDE + E_RNEXT] as number) {
      if (ed[e * E_STRIDE + E_RPREV] !== prev) errors.push(`list ${list}: entry ${e}'s back link`);
      actual.push(e);
      prev = e;
      if (actual.length > expected.length + 1) break;
    }
    if (st[port.rowListHead(list) + 1] !== prev) errors.push(`list ${list}: tail`);
    if (actual.join(",") !== expected.join(",")) errors.push(`list ${list}: [${actual}] not [${expected}]`);
  }
  for (let bank = 0; bank < port.nBanks; bank++) {
    const b = bank * BANK_STRIDE;
    if (st[b + B_NHIT] !== (hits.get(b) ?? 0)) errors.push(`bank ${bank}: ${st[b + B_NHIT]} hits counted`);
  }
  return errors;
}

/** Seeded random traffic (mulberry32) on ref-cube's stack with `params`: reads and writes of 32 B to 4 KiB. */
function runRandomTraffic(params: Record<string, unknown>, seed: number, count: number): void {
  let state = seed >>> 0;
  const random = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const sizes = [32, 64, 128, 256, 1024, 4096];
  const h = refCubeHarness(params);
  let now = 0;
  for (let i = 0; i < count; i++) {
    now += Math.floor(random() * 16) * 0.625;
    const kind = random() < 1 / 3 ? "write" : "read";
    const bytes = sizes[Math.floor(random() * sizes.length)] as number;
    // A 1 MiB region: few rows per bank, so rows open and close with hits queued to them.
    const offset = Math.floor((random() * 1048576) / bytes) * bytes;
    requestAt(h, now, kind, offset, bytes);
  }
  h.machine.run();
}

describe("hbm_ctrl_v2 row lists", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    ["pseudo-channel queues", {}],
    ["channel queues, per-bank refresh", { queue_scope: "channel", refresh: "per_bank" }],
    ["adaptive page, answers predicted from 64 B", { page_policy: "adaptive", predict_bytes: 64 }],
    ["closed page, one burst in the active buffer", { page_policy: "closed", active_buffer: "burst" }],
  ])(
    "hold exactly the row candidates of their lists, in order, at every scan (%s)",
    (_name, params) => {
      const proto = PortScan.prototype as unknown as { scan: () => boolean };
      const scan = proto.scan;
      let scans = 0;
      let candidates = 0;
      const errors: string[] = [];
      vi.spyOn(proto, "scan").mockImplementation(function (this: PortScan) {
        scans++;
        if (errors.length === 0) errors.push(...rowListErrors(this));
        for (let list = LIST_READS; list <= LIST_WRITES; list++)
          if ((this.st[this.rowListHead(list)] as number) >= 0) candidates++;
        return scan.call(this);
      });
      runRandomTraffic({ refresh: "all_bank", ...params }, 5, 1200);
      expect(errors).toEqual([]);
      // The traffic exercises the lists (else the check above proves little).
      expect(scans).toBeGreaterThan(1000);
      expect(candidates).toBeGreaterThan(scans / 10);
    },
    120_000,
  );
});
