import { KbError } from "@kb/errors";
import { ADDRESS_LAYOUT, TCM_WINDOW_BYTES } from "./address-layout.js";
import type { Topology } from "./schema.js";

/** A problem or remark about a place in a topology: its YAML path and what to do. */
export interface TopologyFinding {
  /** Path of the value in the file, such as `["sip", "cubes"]`. */
  readonly path: readonly (string | number)[];
  /** What is wrong (or suspicious) and what to write instead. */
  readonly message: string;
}

/**
 * The structural limits of a topology, from the device address layout (see `ADDRESS_LAYOUT`) and
 * from what a machine can hold in memory.
 */
export const TOPOLOGY_LIMITS = Object.freeze({
  /** SIPs of a device: the address's SIP field has `ADDRESS_LAYOUT.sipBits` (5) bits. */
  maxSips: 2 ** ADDRESS_LAYOUT.sipBits,
  /** Cubes per SIP: the cube field has `ADDRESS_LAYOUT.cubeBits` (6) bits. */
  maxCubesPerSip: 2 ** ADDRESS_LAYOUT.cubeBits,
  /** PEs per cube: each PE's TCM window (`TCM_WINDOW_BYTES`, 256 MiB) within the 40-bit offset. */
  maxPesPerCube: 2 ** ADDRESS_LAYOUT.offsetBits / TCM_WINDOW_BYTES,
  /** Bytes of a cube's HBM stack or shared SRAM: the 40-bit offset. */
  maxMemoryBytes: 2 ** ADDRESS_LAYOUT.offsetBits,
  /**
   * Nodes of the expanded graph. Every node is held in memory (about 1 KB each with its edges,
   * more once a machine is built), so 2^20 nodes is about 100 000 PEs.
   */
  maxNodes: 2 ** 20,
});

/**
 * The nodes `expandTopology` would make, computed from the counts alone (an upper bound when a
 * link pattern gives cubes fewer UCIe ports than the pattern's maximum), without allocating.
 */
export function expandedNodeBound(topology: Topology): number {
  const { sips } = topology.system;
  const { cubes, ucie } = topology.sip;
  const { hbm, noc } = topology.cube;
  return 1 + sips * (2 + cubes * nodesPerCube(hbm, noc.rows * noc.cols, maxPeers(ucie.pattern, cubes)));
}

/**
 * The structural limits a topology breaks (empty when it fits): SIPs, cubes per SIP and PEs per
 * cube within the device address fields, HBM and SRAM capacities within the 40-bit offset, and
 * the size of the expanded graph. Each finding is at the YAML path to change, in the file's
 * words. Runs in constant time, so absurd sizes (`sip: { cubes: 1e6 }`) fail before anything
 * is expanded. Part of the topology schema's checks: `parseTopology` and `resolveTopology`
 * report these with the schema's other errors.
 */
export function topologyLimitIssues(topology: Topology): TopologyFinding[] {
  const limits = TOPOLOGY_LIMITS;
  const issues: TopologyFinding[] = [];
  const { sips } = topology.system;
  const { cubes } = topology.sip;
  const { rows, cols } = topology.cube.noc;
  const pes = rows * cols;
  if (sips > limits.maxSips) {
    issues.push({
      path: ["system", "sips"],
      message: `${sips} SIPs do not fit the device address: its SIP field is ${ADDRESS_LAYOUT.sipBits} bits, so a device has at most ${limits.maxSips} SIPs. Set system.sips to ${limits.maxSips} or fewer.`,
    });
  }
  if (cubes > limits.maxCubesPerSip) {
    issues.push({
      path: ["sip", "cubes"],
      message: `${cubes} cubes per SIP do not fit the device address: its cube field is ${ADDRESS_LAYOUT.cubeBits} bits, so a SIP has at most ${limits.maxCubesPerSip} cubes. Set sip.cubes to ${limits.maxCubesPerSip} or fewer.`,
    });
  }
  if (pes > limits.maxPesPerCube) {
    issues.push({
      path: ["cube", "noc"],
      message: `rows x cols = ${rows} x ${cols} = ${pes} PEs per cube do not fit the device address: each PE has a ${TCM_WINDOW_BYTES / 2 ** 20} MiB TCM window in its cube's ${ADDRESS_LAYOUT.offsetBits}-bit offset, so a cube has at most ${limits.maxPesPerCube} PEs. Make rows x cols at most ${limits.maxPesPerCube} (64 x 64, for example).`,
    });
  }
  const memories = [
    ["hbm", topology.cube.hbm.capacity_bytes, "HBM stack"],
    ["sram", topology.cube.sram.capacity_bytes, "shared SRAM"],
  ] as const;
  for (const [key, bytes, what] of memories) {
    if (bytes > limits.maxMemoryBytes) {
      issues.push({
        path: ["cube", key, "capacity_bytes"],
        message: `${bytes} bytes do not fit the device address: offsets within a cube's ${what} are ${ADDRESS_LAYOUT.offsetBits} bits, so it holds at most ${limits.maxMemoryBytes} bytes (1 TiB). Set cube.${key}.capacity_bytes to ${limits.maxMemoryBytes} or less.`,
      });
    }
  }
  if (issues.length > 0) return issues;
  const nodes = expandedNodeBound(topology);
  if (nodes > limits.maxNodes) issues.push(nodeCountIssue(topology, nodes));
  return issues;
}

/**
 * Throws `TOPOLOGY_INVALID` listing `path: message` for each limit `topology` breaks; for
 * topologies that did not come through the schema (which checks the same), before expanding one.
 */
export function assertTopologyLimits(topology: Topology): void {
  const issues = topologyLimitIssues(topology);
  if (issues.length === 0) return;
  throw new KbError(
    "TOPOLOGY_INVALID",
    issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("\n"),
  );
}

function nodeCountIssue(topology: Topology, nodes: number): TopologyFinding {
  const { hbm, noc } = topology.cube;
  const pes = noc.rows * noc.cols;
  const channelNodes = hbm.channels * (1 + hbm.pseudo_channels);
  const sipsCubes = `${topology.system.sips} SIP(s) x ${topology.sip.cubes} cube(s)`;
  const perCube = `${pes} PEs (${10 * pes} nodes), ${hbm.channels} x ${hbm.pseudo_channels} HBM channels (${channelNodes} nodes)`;
  return {
    path: channelNodes > 10 * pes ? ["cube", "hbm", "channels"] : ["cube", "noc"],
    message: `this design expands to about ${nodes} nodes (${sipsCubes}, each cube ${perCube}); kb holds the whole graph in memory and builds at most ${TOPOLOGY_LIMITS.maxNodes}. Use fewer SIPs (system.sips), cubes (sip.cubes), PEs (cube.noc rows x cols) or HBM channels (cube.hbm channels x pseudo_channels).`,
  };
}

/** Nodes of one cube: itself, m_cpu, m_cpu_dma, hbm, xbar0/1, bridge, sram, channels, routers, PEs. */
function nodesPerCube(hbm: Topology["cube"]["hbm"], pes: number, ports: number): number {
  return 8 + hbm.channels * (1 + hbm.pseudo_channels) + pes * (1 + 1 + 8) + ports;
}

/** The most peers one member has under a link pattern among `count` members. */
function maxPeers(pattern: Topology["sip"]["ucie"]["pattern"], count: number): number {
  if (pattern === "none") return 0;
  if (pattern === "ring") return Math.min(2, count - 1);
  if (pattern === "mesh") return Math.min(4, count - 1);
  return count - 1;
}
