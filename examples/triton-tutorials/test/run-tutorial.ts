import { fileURLToPath } from "node:url";
import { MemorySink, OpLogger } from "@kb/oplog";
import { type Bench, PhaseComparer, replay, verifyOutcome } from "@kb/runtime";
import { loadSimulator } from "@kb/runtime/node";

/** A topology of the repository's topologies/ by name ("default", "ref-cube"). */
export const topology = (name: string) =>
  fileURLToPath(new URL(`../../../topologies/${name}.yaml`, import.meta.url));

/**
 * A tutorial's bench through the runtime API: phase 1 with an op log and the loads kept, then
 * phase 2 once, checking the outputs against the host references and every observed load against
 * phase 2's copy; with the bytes the PE_DMAs moved, the PE_GEMM ops (the dots) and their busy
 * time, the first launch's span, and the atomics the op log records.
 */
export async function runTutorial(bench: Bench, params: Record<string, unknown>, topologyName = "default") {
  const sink = new MemorySink();
  const sim = await loadSimulator(topology(topologyName), {
    opLogger: new OpLogger(sink),
    checkPhases: true,
  });
  const parsed = bench.params.parse(params);
  const outcome = await bench.run(sim, parsed as never);
  const comparer = new PhaseComparer(sim.loadObservations, sink.records);
  const phase2 = replay(sim.hostWrites, sink.records, { onExecuted: comparer.onExecuted });
  const report = await verifyOutcome(outcome ?? undefined, phase2.store);
  const dmaBytes = sim.machine
    .stats()
    .components.filter((c) => c.kind === "pe_dma")
    .reduce((sum, c) => sum + c.bytes, 0);
  const results = sim.results(bench.name, parsed as Record<string, unknown>);
  const launch = results.launches[0];
  // Atomic read-modify-writes in the op log, by op (`cas`, `xchg`, ...).
  const atomics: Record<string, number> = {};
  for (const record of sink.records) {
    const op = (record as { params?: { atomic?: { op: string } } }).params?.atomic?.op;
    if (op !== undefined) atomics[op] = (atomics[op] ?? 0) + 1;
  }
  return {
    atomics,
    report,
    outputs: report.outputs.map((output) => [output.name, output.pass, output.mismatches]),
    phases: comparer.result(),
    dmaBytes,
    dots: results.byKind.find((kind) => kind.kind === "pe_gemm")?.ops ?? Number.NaN,
    gemmBusyNs: results.byKind.find((kind) => kind.kind === "pe_gemm")?.busyNs ?? Number.NaN,
    launchNs: launch === undefined ? Number.NaN : launch.endNs - launch.startNs,
  };
}
