import { describe, expect, it } from "vitest";
import { FilteredSlices } from "./slice-filter.js";
import { filterLabel, filterOfQuery, filterQuery, normalFilter, sliceTest } from "./timeline-filter-model.js";
import { timelineOfTrace } from "./trace-timeline.js";

describe("the timeline's filter", () => {
  it("travels in the query of GET /api/timeline as site and q, empty parts dropped", () => {
    const filter = { site: "benches/attention.ts:37", search: " dma " };
    expect(filterQuery(filter)).toEqual({ site: "benches/attention.ts:37", q: "dma" });
    expect(filterOfQuery(new URLSearchParams(filterQuery(filter)))).toEqual({
      site: "benches/attention.ts:37",
      search: "dma",
    });
    expect(normalFilter({ search: "   " })).toBeNull();
    expect(filterQuery(null)).toEqual({});
  });

  it("keeps slices of the line, whose name or track holds the text in any case", () => {
    const test = sliceTest({ site: "k.ts:3", search: "DMA" });
    expect(test("dma_read t0", "sip0.cube0.pe0.pe_gemm", "k.ts:3")).toBe(true);
    expect(test("gemm t0", "sip0.cube0.pe0.pe_dma#0", "k.ts:3")).toBe(true);
    expect(test("gemm t0", "sip0.cube0.pe0.pe_gemm", "k.ts:3")).toBe(false);
    expect(test("dma_read t0", "sip0.cube0.pe0.pe_dma#0", "k.ts:4")).toBe(false);
    expect(filterLabel({ site: "k.ts:3", search: "dma" })).toBe('line k.ts:3, matching "dma"');
  });

  it("answers windows of the slices a kernel line issued (args.site of kb run --trace)", () => {
    const { slices } = timelineOfTrace(
      [
        { name: "thread_name", ph: "M", pid: 1, tid: 1, args: { name: "sip0.cube0.pe0.pe_dma#0" } },
        { name: "thread_name", ph: "M", pid: 1, tid: 2, args: { name: "sip0.cube0.pe0.pe_gemm" } },
        { name: "dma_read", ph: "B", ts: 0, pid: 1, tid: 1, args: { site: "k.ts:3" } },
        { name: "dma_read", ph: "E", ts: 0.25, pid: 1, tid: 1 },
        { name: "gemm", ph: "X", ts: 0.25, dur: 0.5, pid: 1, tid: 2, args: { site: "k.ts:4" } },
        { name: "dma_write", ph: "X", ts: 0.75, dur: 0.25, pid: 1, tid: 1, args: { site: "k.ts:4" } },
      ],
      "t.json",
    );
    const windows = new FilteredSlices(slices);
    // The whole run, 1000 ns in 4 columns of 250 ns; tracks: pe_dma#0 (0), pe_gemm (1).
    const line4 = windows.window(0, 1000, 4, { site: "k.ts:4" });
    expect(line4.sliceCount).toBe(2);
    expect(line4.slices).toEqual([1, 250, 750, 0, 0, 750, 1000, 1]);
    expect(line4.names).toEqual(["gemm", "dma_write"]);
    // pe_dma#0: only the last column (dma_write); pe_gemm: columns 1 and 2.
    expect([...Buffer.from(line4.busy, "base64")]).toEqual([0, 0, 0, 255, 0, 255, 255, 0]);
    expect(line4.filtered).toEqual({ site: "k.ts:4", slices: 2, tracks: [0, 1] });
    const line3 = windows.window(0, 1000, 4, { site: "k.ts:3" });
    expect(line3.filtered).toEqual({ site: "k.ts:3", slices: 1, tracks: [0] });
    const search = windows.window(0, 1000, 4, { search: "GEMM" });
    expect(search.filtered).toEqual({ search: "GEMM", slices: 1, tracks: [1] });
    // No filter: every slice, and no `filtered`.
    const all = windows.window(0, 1000, 4);
    expect(all.sliceCount).toBe(3);
    expect(all.filtered).toBeUndefined();
  });
});
