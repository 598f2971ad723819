import { describe, expect, it } from "vitest";
import { csvHeader, csvRow, metricAt, metricsOf, type SweepRow } from "./table.js";

const row = (values: Record<string, unknown>, reason: string | null = null): SweepRow => ({
  point: 0,
  key: "k",
  status: reason === null ? "ok" : "failed",
  reason,
  digest: null,
  values,
  metrics: { time_ns: -12.5 },
});

describe("results.csv cells", () => {
  it("quotes commas, quotes and newlines as RFC 4180 says", () => {
    expect(csvRow(row({ name: 'a,"b"\nc' }), ["name"], ["time_ns"])).toBe('0,ok,"a,""b""\nc",-12.5,,k,\n');
  });

  it("never lets a spec's text start a spreadsheet formula (=, +, -, @, tab, CR get a leading ')", () => {
    const line = csvRow(
      row({ a: '=HYPERLINK("http://x")', b: "+1", c: "-cmd", d: "@SUM(A1)", e: "\tx" }, "=2+3"),
      ["a", "b", "c", "d", "e"],
      ["time_ns"],
    );
    expect(line).toBe(`0,failed,"'=HYPERLINK(""http://x"")",'+1,'-cmd,'@SUM(A1),'\tx,-12.5,,k,'=2+3\n`);
  });

  it("keeps numbers, negative ones too, as numbers; an axis name is text like any other", () => {
    expect(csvHeader(["-x"], ["time_ns"])).toBe("point,status,'-x,time_ns,digest,key,reason\n");
    expect(csvRow(row({ n: -3, list: [-1, 2] }), ["n", "list"], ["time_ns"])).toBe(
      '0,ok,-3,"[-1,2]",-12.5,,k,\n',
    );
  });
});

describe("metrics read from a run's results", () => {
  it("keep numbers without the float noise of sums, so results.jsonl and results.csv print 94045.55", () => {
    const results = { simTimeNs: 94045.54999999997, launches: [{ endNs: 0.1 * 3 }], events: 368123 };
    expect(metricsOf(results, { time_ns: "simTimeNs", end: "launches[0].endNs", events: "events" })).toEqual({
      time_ns: 94045.55,
      end: 0.3,
      events: 368123,
    });
    expect(
      csvRow({ ...row({}), metrics: { time_ns: metricAt(results, "simTimeNs") } }, [], ["time_ns"]),
    ).toBe("0,ok,94045.55,,k,\n");
  });
});
