import { defaultRegistry } from "@kb/builtins";
import { MemorySink, OpLogger } from "@kb/oplog";
import { encodeAddress } from "@kb/topology";
import { loadTopologyGraphFile } from "@kb/topology/node";
import { expect, it } from "vitest";
import { buildMachine, TraceRecorder } from "./index.js";
import { topologyPath } from "./test-support.js";

// The example of packages/components/README.md, verbatim but for the file path and console output.
it("README example: a composite GEMM on one PE of default.yaml", () => {
  const { graph } = loadTopologyGraphFile(topologyPath("default"));
  const ops = new MemorySink();
  const opLogger = new OpLogger(ops);
  const tracer = new TraceRecorder();
  const machine = buildMachine(graph, { registry: defaultRegistry(), opLogger, tracer });

  const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
  const done = machine.submit("sip0.cube0.pe0", [
    {
      kind: "composite_gemm",
      a: hbm(0),
      b: hbm(1 << 20),
      c: hbm(2 << 20),
      m: 256,
      n: 256,
      k: 256,
      dtype: "f16",
    },
  ]);
  machine.run(done);
  opLogger.close();

  const stats = machine.stats();
  const gemm = stats.byKind.find((kind) => kind.kind === "pe_gemm");
  const trace = tracer.toChromeTrace();
  console.log(machine.env.now, ops.records.length, gemm?.ops, gemm?.busyNs, trace.traceEvents.length);
  // The first tile's fill writes 64 KiB to PE_TCM (129 ns) and the last drain reads 32 KiB (65 ns)
  // on the critical path: 194 ns more than when DMA did not use PE_TCM (17645.11).
  expect(machine.env.now).toBeCloseTo(17839.11, 2);
  expect(ops.records).toHaveLength(32);
  expect(gemm?.ops).toBe(8);
  expect(gemm?.busyNs).toBe(8 * 2056);
});
