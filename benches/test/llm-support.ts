import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MemorySink, OpLogger } from "@kb/oplog";
import { type DeviceTensor, type Grid, replay, Simulator, verifyOutcome } from "@kb/runtime";
import type { Dtype, Tensor } from "@kb/tensor";
import { parseTopology, type Topology } from "@kb/topology";

// Shared by the per-kernel tests of benches/lib/llm: a simulator with an op log on default.yaml,
// one rank on cube 0 (4 PEs, so the round-robin over work items wraps), and phase-2 verification
// of device tensors against host references.

type VerifyReport = Awaited<ReturnType<typeof verifyOutcome>>;

/** A topology of the repository's topologies/ folder, parsed (a simulator takes the object). */
export function topologyFile(name: string): Topology {
  const path = fileURLToPath(new URL(`../../topologies/${name}.yaml`, import.meta.url));
  return parseTopology(readFileSync(path, "utf8"), path);
}

/** A simulator whose ops phase 2 can replay, and the grid of the single rank the kernels run on. */
export async function kernelSim() {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(topologyFile("default"), { opLogger: new OpLogger(sink) });
  const grid = sim.grid({ sips: [0], cubes: [0], pes: 4 });
  const put = (t: Tensor, name: string) => sim.toDevice(t, { sip: 0, cube: 0, name });
  const empty = (shape: readonly number[], dtype: Dtype, name: string) =>
    sim.empty(shape, dtype, { sip: 0, cube: 0, name });
  /** Replays the run (phase 2) and verifies each device tensor against its reference. */
  const verify = (checks: Record<string, [DeviceTensor, Tensor]>): Promise<VerifyReport> => {
    const check = Object.fromEntries(
      Object.entries(checks).map(([name, [actual, reference]]) => [
        name,
        { actual, reference: () => reference },
      ]),
    );
    return verifyOutcome({ check }, replay(sim.hostWrites, sink.records).store);
  };
  return { sim, grid, put, empty, verify };
}

/** The verdicts of a report as [name, pass, first mismatch] rows (readable when a test fails). */
export function verdicts(report: VerifyReport) {
  return report.outputs.map((o) => [o.name, o.pass, o.firstMismatch]);
}

/** The rows `[name, true, null]` of every check passing. */
export function allPass(...names: string[]) {
  return names.map((name) => [name, true, null]);
}

/**
 * A simulator on `topology` with an op log, noting each launch as `name @ sip0.cube0 sip0.cube1`
 * (its cubes) in order; `verify(outcome)` replays the run (phase 2) and verifies the outcome.
 */
export async function launchLogSim(topology: string) {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(topologyFile(topology), { opLogger: new OpLogger(sink) });
  const launches: string[] = [];
  const launch = sim.launch.bind(sim);
  sim.launch = ((kernel, options) => {
    const grid = options.grid as Grid;
    const cubes = grid.sips.flatMap((s) => grid.cubes.map((c) => `sip${s}.cube${c}`)).join(" ");
    launches.push(`${options.name} @ ${cubes}`);
    return launch(kernel, options);
  }) as typeof sim.launch;
  const verify = (outcome: Parameters<typeof verifyOutcome>[0]) =>
    verifyOutcome(outcome, replay(sim.hostWrites, sink.records).store);
  return { sim, launches, verify };
}
