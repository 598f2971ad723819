import type { RunResults } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { launchesSummary, launchRows } from "./launch-model.js";

type Launch = RunResults["launches"][number];
const launch = (name: string, startNs: number, endNs: number, verdict?: Launch["verdict"]): Launch =>
  ({ name, pes: 8, startNs, endNs, ...(verdict === undefined ? {} : { verdict }) }) as Launch;

describe("the launches of a run on the page", () => {
  it("are a row each: window, the verdict's rule and resource, and how busy that was", () => {
    const rows = launchRows({
      launches: [
        launch("allreduce", 100, 350, {
          rule: "link",
          resource: "sip0 -> sip1",
          utilisation: 0.875,
          text: "",
        }),
        launch("allreduce", 400, 1400),
      ],
    });
    expect(rows).toEqual([
      ["0", "allreduce", "8", "100 ns", "250 ns", "link: sip0 -> sip1", "87.5%"],
      ["1", "allreduce", "8", "400 ns", "1 µs", "-", "-"],
    ]);
  });

  it("are one line in the summary: the launch itself, or the count and the time in kernels", () => {
    expect(launchesSummary({ launches: [] })).toBe("(none)");
    expect(launchesSummary({ launches: [launch("gemm", 0, 2500)] })).toBe("gemm on 8 PE(s), 2.5 µs");
    const eleven = Array.from({ length: 11 }, (_, i) => launch("allreduce", i * 1000, i * 1000 + 300));
    expect(launchesSummary({ launches: eleven })).toBe("11 launches, 3.3 µs in kernels (see Launches)");
  });
});
