import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { timelineOfTrace } from "@kb/web-ui/trace-timeline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kb } from "./test-support.js";

// Issue 33 point 3: a memory port's trace slices span its data-bus busy time, so the trace, the
// results and kb web's timeline tell the same story about an HBM-bound run.

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "kb-cli-trace-busy-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface TraceEvent {
  readonly name: string;
  readonly ph: string;
  readonly ts: number;
  readonly pid: number;
  readonly tid: number;
  readonly args?: { readonly name?: string };
}

interface Results {
  readonly components: readonly {
    readonly id: string;
    readonly kind: string;
    readonly busyNs: number;
    readonly lanes?: readonly { readonly name: string; readonly busyNs: number }[];
  }[];
}

/** The summed B/E slice time per track name, ns. */
function sliceNsByTrack(events: readonly TraceEvent[]): Map<string, number> {
  const names = new Map<string, string>();
  for (const event of events) {
    if (event.ph === "M" && event.name === "thread_name")
      names.set(`${event.pid}:${event.tid}`, event.args?.name ?? "");
  }
  const open = new Map<string, number[]>();
  const sums = new Map<string, number>();
  for (const event of events) {
    const key = `${event.pid}:${event.tid}`;
    if (event.ph === "B") open.set(key, [...(open.get(key) ?? []), event.ts]);
    else if (event.ph === "E") {
      const start = open.get(key)?.pop() as number;
      const name = names.get(key) as string;
      sums.set(name, (sums.get(name) ?? 0) + (event.ts - start) * 1000);
    }
  }
  return sums;
}

describe("fault: the trace shows memory busy time (HBM-bound vector-add)", () => {
  const trace = join(scratch, "va.trace.json");
  const again = join(scratch, "va-again.trace.json");
  let results: Results;
  let events: TraceEvent[];
  const args = ["run", repo("benches/vector-add.ts"), "--topology", repo("topologies/default.yaml")];

  beforeAll(async () => {
    const run = await kb(...args, "--param", "n=262144", "--trace", trace, "--json");
    expect(run.code).toBe(0);
    results = JSON.parse(run.stdout) as Results;
    events = (JSON.parse(readFileSync(trace, "utf8")) as { traceEvents: TraceEvent[] }).traceEvents;
  }, 60_000);

  /** Every HBM port as [track name, its busy ns in the results]. */
  const hbmPorts = (): [string, number][] =>
    results.components
      .filter((component) => component.kind === "hbm_ctrl")
      .flatMap((component) =>
        (component.lanes ?? []).map(
          (lane, port) => [`${component.id}#${port}`, lane.busyNs] as [string, number],
        ),
      );

  it("each HBM track's slices add up to that port's busy time in the results (within 1%)", () => {
    const ports = hbmPorts();
    expect(ports.length).toBe(32);
    const sliceNs = sliceNsByTrack(events);
    for (const [track, busyNs] of ports) {
      expect(busyNs, track).toBeGreaterThan(0);
      expect(Math.abs((sliceNs.get(track) ?? 0) - busyNs), track).toBeLessThanOrEqual(0.01 * busyNs);
    }
  });

  it("kb web's busy fraction of each HBM track over the run is the results' (within 1 point)", () => {
    const { timeline, slices } = timelineOfTrace(events, trace);
    const window = slices.window(0, timeline.endNs, 1);
    const busy = [...Buffer.from(window.busy, "base64")];
    for (const [track, busyNs] of hbmPorts()) {
      const row = timeline.tracks.findIndex((shown) => shown.name === track);
      expect(row, track).toBeGreaterThanOrEqual(0);
      const fraction = (busy[row] as number) / 255;
      expect(Math.abs(fraction - busyNs / (window.toNs - window.fromNs)), track).toBeLessThanOrEqual(0.01);
    }
  });

  it("the trace is deterministic: the same run writes the same bytes", async () => {
    expect((await kb(...args, "--param", "n=262144", "--trace", again)).code).toBe(0);
    expect(readFileSync(again).equals(readFileSync(trace))).toBe(true);
  }, 60_000);
});
