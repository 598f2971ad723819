/**
 * The @kb/ccl fidelity table: `pnpm bench:ccl [--json FILE]`.
 *
 * Runs the `ring` all-reduce (sum, one PE per SIP rank) on two machines and prints its simulated
 * time next to the cost model 2 (n - 1) a + 2 (n - 1) / n * S / b (Thakur, Rabenseifner and Gropp
 * 2005), with a and b read off the fabric route of a ring hop (`measureRingAllReduce`), alone and
 * with the PE term (the PE's work per piece from the topology's PE params: packages/ccl/README.md,
 * "The PE term"):
 *
 * - `ref-4sip-32gbs`: topologies/ref-4sip.yaml with 32 GB/s SIP links, so the links are the
 *   bottleneck as the model assumes (the case `packages/ccl/src/fidelity.test.ts` asserts);
 * - `ref-4sip`: as shipped, where the PE's 64 GB/s port is the narrowest link and the PE's own
 *   work per piece (load, add, store) about matches the wire time, so the ring runs PE-bound.
 *
 * Then `ring` against `tree` all-reduce (f32 sum) on the schema's default cube (8 PE ranks) and on
 * 4 such cubes (cube ranks, 8 PEs each): where the default `ccl.yaml` switches algorithms.
 *
 * Then every other collective against its own alpha-beta model (packages/ccl/src/cost-model.ts,
 * packages/ccl/README.md "Against the cost model"), one PE per SIP rank, on both machines:
 * all-to-all (n - 1) a + (n - 1)/2 S/b, reduce (n - 1) a + (S + (n - 2) c)/b, gather and scatter
 * (n - 1) a + (n - 1) S/b, send/recv h a + (S + (h - 1) c)/b (to the next SIP and 2 hops on),
 * each alone and with the PE term.
 *
 * Simulated times are deterministic; nothing here is wall-clock.
 */
import { readFileSync } from "node:fs";
import {
  type CollectiveDtype,
  type CollectiveMeasurement,
  initProcessGroup,
  MEASURED_COLLECTIVES,
  measureCollective,
  measureRingAllReduce,
  type RingMeasurement,
} from "@kb/ccl";
import { type DeviceTensor, Simulator } from "@kb/runtime";
import { Tensor } from "@kb/tensor";
import { parseTopology, type Topology, type TopologyInput } from "@kb/topology";
import { parseSuiteOptions, printTable, topologyFile, writeJson } from "./report.js";

const SCRIPT = "bench:ccl";
const USAGE = `Usage: pnpm ${SCRIPT} [--json FILE]

Ring all-reduce (f32 unless said, sum, 1 PE per SIP) against 2(n-1)a + 2(n-1)/n S/b, alone and
with the PE term, on ref-4sip.yaml with 32 GB/s SIP links and as shipped; ring against tree
all-reduce on the default cube; all-to-all, reduce, gather, scatter and send/recv against their
models. Prints the tables; --json writes the rows.`;

interface Row extends RingMeasurement {
  topology: string;
}

const options = parseSuiteOptions(SCRIPT, USAGE, [], 1);
if (options !== null) {
  const file = topologyFile("ref-4sip.yaml");
  const shipped = parseTopology(readFileSync(file, "utf8"), file);
  const slow: Topology = {
    ...shipped,
    name: "ref-4sip-32gbs",
    system: { ...shipped.system, sip_link: { ...shipped.system.sip_link, bw_gbs: 32 } },
  };
  const MiB = 2 ** 20;
  const cases: [Topology, number, number, CollectiveDtype][] = [
    ...[1, 2, 4, 8, 16].map((mib): [Topology, number, number, CollectiveDtype] => [
      slow,
      4,
      mib * MiB,
      "f32",
    ]),
    [slow, 4, 4 * MiB, "bf16"],
    [slow, 2, 1 * MiB, "f32"],
    [slow, 2, 4 * MiB, "f32"],
    ...[1, 4, 16].map((mib): [Topology, number, number, CollectiveDtype] => [shipped, 4, mib * MiB, "f32"]),
  ];
  const rows: Row[] = [];
  for (const [topology, n, bytes, dtype] of cases) {
    const sim = await Simulator.fromTopology(topology);
    rows.push({
      topology: topology.name,
      ...(await measureRingAllReduce(sim, { bytes, dtype, worldSize: n })),
    });
  }
  printTable(
    [
      "topology",
      "n",
      "S",
      "dtype",
      "a (ns)",
      "b (GB/s)",
      "per-hop model (us)",
      "with PE term (us)",
      "measured (us)",
      "/ per-hop",
      "/ with PE",
    ],
    rows.map((row) => [
      row.topology,
      String(row.n),
      `${row.bytes / MiB} MiB`,
      row.dtype,
      row.hopLatencyNs.toFixed(3),
      String(row.bwGbs),
      (row.linkModelNs / 1000).toFixed(2),
      (row.modelNs / 1000).toFixed(2),
      (row.measuredNs / 1000).toFixed(2),
      row.linkRatio.toFixed(3),
      row.ratio.toFixed(3),
    ]),
    1,
  );
  process.stdout.write("\n");
  const algorithms = await ringVersusTree();
  process.stdout.write("\n");
  const collectives = await otherCollectives([slow, shipped]);
  if (options.json !== undefined) writeJson(options.json, { suite: SCRIPT, rows, algorithms, collectives });
}

/** Simulated ns of one f32 sum all-reduce of `bytes` per rank with `algorithm`. */
async function allReduceNs(
  topology: TopologyInput,
  scope: "pes" | "cubes",
  algorithm: string,
  bytes: number,
): Promise<number> {
  const sim = await Simulator.fromTopology(topology);
  const pg = initProcessGroup(sim, { backend: "ahbm", scope, cclConfig: { allReduce: [{ algorithm }] } });
  const tensors: DeviceTensor[] = [];
  for (let rank = 0; rank < pg.getWorldSize(); rank++) {
    const where = scope === "cubes" ? { cube: pg.group.members[rank] as number } : {};
    tensors.push(await sim.toDevice(Tensor.full([bytes / 4], rank, "f32"), where));
  }
  const { launch } = await pg.allReduce(tensors, "sum");
  return launch.endNs - launch.startNs;
}

async function ringVersusTree() {
  const cube: TopologyInput = { name: "default" };
  const cubes: TopologyInput = { name: "default-4-cubes", sip: { cubes: 4 } };
  const rows = [];
  for (const bytes of [2048, 8192, 65536, 2 ** 20]) {
    rows.push({
      bytes,
      pesRing: await allReduceNs(cube, "pes", "ring", bytes),
      pesTree: await allReduceNs(cube, "pes", "tree", bytes),
      cubesRing: await allReduceNs(cubes, "cubes", "ring", bytes),
      cubesTree: await allReduceNs(cubes, "cubes", "tree", bytes),
    });
  }
  const ns = (value: number) =>
    value >= 10_000 ? `${(value / 1000).toFixed(1)} us` : `${value.toFixed(0)} ns`;
  printTable(
    ["bytes", "8 PEs: ring", "8 PEs: tree", "4 cubes: ring", "4 cubes: tree"],
    rows.map((row) => [
      row.bytes >= 2 ** 20 ? `${row.bytes / 2 ** 20} MiB` : `${row.bytes / 1024} KiB`,
      ns(row.pesRing),
      ns(row.pesTree),
      ns(row.cubesRing),
      ns(row.cubesTree),
    ]),
    1,
  );
  return rows;
}

/** Every other collective's fidelity line: n = 4 SIPs, f32, 1 and 4 MiB, on each topology. */
async function otherCollectives(topologies: readonly Topology[]) {
  const MiB = 2 ** 20;
  const rows: (CollectiveMeasurement & { topology: string; peer?: number })[] = [];
  for (const topology of topologies) {
    for (const collective of MEASURED_COLLECTIVES) {
      for (const bytes of [MiB, 4 * MiB]) {
        for (const peer of collective === "sendRecv" ? [1, 2] : [undefined]) {
          const sim = await Simulator.fromTopology(topology);
          const measured = await measureCollective(sim, {
            collective,
            bytes,
            worldSize: 4,
            ...(peer !== undefined ? { peer } : {}),
          });
          rows.push({ topology: topology.name, ...measured, ...(peer !== undefined ? { peer } : {}) });
        }
      }
    }
  }
  printTable(
    [
      "topology",
      "collective",
      "per-hop model",
      "n",
      "S",
      "per-hop (us)",
      "with PE term (us)",
      "measured (us)",
      "/ per-hop",
      "/ with PE",
    ],
    rows.map((row) => [
      row.topology,
      row.peer !== undefined ? `${row.collective} 0->${row.peer}` : row.collective,
      row.formula,
      String(row.n),
      `${row.bytes / MiB} MiB`,
      (row.linkModelNs / 1000).toFixed(2),
      (row.modelNs / 1000).toFixed(2),
      (row.measuredNs / 1000).toFixed(2),
      row.linkRatio.toFixed(3),
      row.ratio.toFixed(3),
    ]),
    1,
  );
  return rows;
}
