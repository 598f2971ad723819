import { KbError } from "@kb/errors";
import type { DeviceTensor, GridSpec, LaunchRecord, Simulator } from "@kb/runtime";
import { DTYPE_BYTES } from "@kb/tensor";
import { type P2PArgs, p2pTransfers, type Transfer } from "./algorithms/p2p.js";
import { type BarrierArgs, ringBarrier } from "./algorithms/ring-barrier.js";
import {
  type CclConfig,
  type CclConfigInput,
  cclConfig,
  DEFAULT_CCL_CONFIG,
  resolveWorldSize,
  selectAlgorithm,
} from "./config.js";
import type { ReduceOp, Region } from "./kernel-support.js";
import { type P2POp, P2PQueue, type P2PResult, type Work } from "./p2p.js";
import { bytesOf, checkIndex, checkOp, unsupported } from "./process-group-checks.js";
import {
  type AllToAllBlocks,
  listBlocks,
  type RankTensors,
  rankRegions,
  singleBlocks,
} from "./rank-tensors.js";
import { type RankGroup, type RankScope, rankRing } from "./ranks.js";
import {
  type AlgorithmRegistry,
  type CollectiveAlgorithm,
  type CollectiveArgsByKind,
  type CollectiveKind,
  defaultAlgorithms,
} from "./registry.js";

/** The backends {@link initProcessGroup} knows. */
export const BACKENDS = ["ahbm"] as const;

/** A backend name. */
export type Backend = (typeof BACKENDS)[number];

/** The IPCQ slot size of the built-in PE_CPU, bytes (pe_cpu param `ipcq_slot_bytes`). */
export const DEFAULT_SLOT_BYTES = 16384;

/** Options of {@link initProcessGroup}. */
export interface ProcessGroupOptions {
  /** `"ahbm"`: collectives as kernels over the inter-PE queues of the simulated machine. */
  readonly backend: string;
  /** Algorithm rules and defaults (`parseCclConfig` / `loadCclConfig` of `@kb/ccl/node`, or the same as an object). */
  readonly cclConfig?: CclConfig | CclConfigInput;
  /** What a rank is (default `"sips"`: rank = SIP, as in distributed runs). */
  readonly scope?: RankScope;
  /** Algorithms `cclConfig` may name (default: the built-ins). */
  readonly registry?: AlgorithmRegistry;
  /** The SIP whose cubes or PEs are the ranks (`"cubes"`, `"pes"`; default 0). */
  readonly sip?: number;
  /** The cube whose PEs are the ranks (`"pes"`), or where a SIP rank's PEs run (`"sips"`); default 0. */
  readonly cube?: number;
  /**
   * PEs per rank for `"cubes"` and `"sips"` (default: every PE of a cube): each moves its own slice
   * of the data with the PEs of the same index in the other ranks, over their own queues.
   */
  readonly lanes?: number;
}

/** What a collective did. */
export interface CollectiveResult {
  readonly collective: CollectiveKind | "barrier";
  /** The algorithm `ccl.yaml` chose (`ring`, `tree`, ...). */
  readonly algorithm: string;
  readonly worldSize: number;
  /** Bytes of each rank's buffer (the size `ccl.yaml` rules compare with `maxBytes`). */
  readonly bytes: number;
  /** The kernel launch (simulated start and end, work). */
  readonly launch: LaunchRecord;
}

/**
 * A torch.distributed-like process group on a simulator (DESIGN §3): each collective picks its
 * algorithm from `ccl.yaml` by message size and launches it as a kernel on every rank's PEs
 * (`sim.launch`), so it takes simulated time on the machine's queues and fabric and leaves op
 * records that phase 2 replays.
 *
 * **When to use**: host programs and benches that model communication as torch code would write
 * it. To run an algorithm on a grid of your own, launch its kernel (`ringAllReduce`, ...) directly.
 *
 * **Gotchas**: the host program drives every rank, so tensors are given for all ranks at once and
 * `getRank()` is 0. Point-to-point ops say whose they are (`{ rank }`, default 0) and run when a
 * handle is waited on, all matched ones in one launch: post both sides first (`send` / `recv`
 * wait at once, so the other side must be an `isend` / `irecv` posted before). Only the
 * collectives listed by the error of an unsupported method exist.
 */
export class ProcessGroup {
  readonly backend: Backend = "ahbm";
  readonly scope: RankScope;
  /** The ranks and the ring's hops. */
  readonly group: RankGroup;
  readonly config: CclConfig;
  readonly registry: AlgorithmRegistry;
  /** Largest message, bytes. */
  readonly slotBytes: number;
  /** Slots of each IPCQ (pe_cpu `ipcq_slots`): messages a kernel may have in flight to a neighbour. */
  readonly queueSlots: number;
  /** PEs per rank. */
  readonly lanes: number;
  private readonly sip: number;
  private readonly cube: number;
  private readonly p2p: P2PQueue;

  /** @internal Use {@link initProcessGroup}. */
  constructor(
    readonly sim: Simulator,
    options: ProcessGroupOptions,
  ) {
    if (!(BACKENDS as readonly string[]).includes(options.backend)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `backend ${JSON.stringify(options.backend)} is not available; @kb/ccl provides ${BACKENDS.map((b) => `"${b}"`).join(", ")} (collectives over the simulated machine's inter-PE queues).`,
      );
    }
    this.registry = options.registry ?? defaultAlgorithms();
    this.config =
      options.cclConfig === undefined
        ? DEFAULT_CCL_CONFIG
        : cclConfig(options.cclConfig, { registry: this.registry });
    this.scope = options.scope ?? "sips";
    const topology = sim.machine.graph.topology;
    const shape = {
      rows: topology.cube.noc.rows,
      cols: topology.cube.noc.cols,
      cubes: topology.sip.cubes,
      sips: topology.system.sips,
    };
    this.sip = checkIndex("sip", options.sip ?? 0, shape.sips);
    this.cube = checkIndex("cube", options.cube ?? 0, shape.cubes);
    const available =
      this.scope === "pes" ? shape.rows * shape.cols : this.scope === "cubes" ? shape.cubes : shape.sips;
    const { worldSize } = resolveWorldSize({ available, defaults: this.config.defaults });
    this.group = rankRing(this.scope, shape, worldSize);
    const perCube = shape.rows * shape.cols;
    this.lanes = this.scope === "pes" ? 1 : checkIndex("lanes", (options.lanes ?? perCube) - 1, perCube) + 1;
    const hardware = slotBytesOf(sim, this.sip, this.cube);
    const asked = this.config.defaults.slotBytes;
    if (asked !== undefined && asked > hardware) {
      throw new KbError(
        "RUNTIME_INVALID",
        `ccl defaults.slotBytes ${asked} is larger than the ${hardware}-byte IPCQ slots of topology ${sim.topologyName} (pe_cpu ipcq_slot_bytes); a message must fit a slot.`,
      );
    }
    this.slotBytes = asked ?? hardware;
    this.queueSlots = peCpuParam(sim, this.sip, this.cube, "ipcq_slots", 1);
    this.p2p = new P2PQueue(
      this.group.size,
      (transfers) => this.launchTransfers(transfers),
      () => sim.now,
      (running) => sim.waitFor(running),
    );
  }

  /** 0: one host program drives every rank (the rank whose view a torch program would take). */
  getRank(): number {
    return 0;
  }

  /** Number of ranks. */
  getWorldSize(): number {
    return this.group.size;
  }

  /** The algorithm `ccl.yaml` chooses for `collective` with `bytes` per rank. */
  algorithmFor<C extends CollectiveKind>(collective: C, bytes: number): CollectiveAlgorithm<C> {
    return selectAlgorithm(this.config, this.registry, collective, bytes, this.group.size);
  }

  /** Every rank's tensor becomes the elementwise `op` over all of them (torch `all_reduce`). */
  async allReduce(tensors: RankTensors, op: ReduceOp = "sum"): Promise<CollectiveResult> {
    checkOp(op);
    const buffers = this.regions("allReduce", tensors);
    return this.run("allReduce", {
      group: this.group,
      buffers,
      slotBytes: this.slotBytes,
      queueSlots: this.queueSlots,
      op,
    });
  }

  /**
   * Rank `r`'s `output` becomes the `op` over every rank's segment `r` of `input`, which holds
   * `worldSize` segments of the output's size (torch `reduce_scatter_tensor`).
   */
  async reduceScatter(
    output: RankTensors,
    input: RankTensors,
    op: ReduceOp = "sum",
  ): Promise<CollectiveResult> {
    checkOp(op);
    const buffers = this.regions("reduceScatter input", input);
    const outputs = this.regions("reduceScatter output", output);
    this.checkSegments("reduceScatter", outputs, buffers, "output", "input");
    return this.run("reduceScatter", {
      group: this.group,
      buffers,
      outputs,
      slotBytes: this.slotBytes,
      queueSlots: this.queueSlots,
      op,
    });
  }

  /**
   * Rank `r`'s `output` becomes the concatenation of every rank's `input` (torch
   * `all_gather_into_tensor`): `worldSize` segments of the input's size.
   */
  async allGather(output: RankTensors, input: RankTensors): Promise<CollectiveResult> {
    const buffers = this.regions("allGather output", output);
    const inputs = this.regions("allGather input", input);
    this.checkSegments("allGather", inputs, buffers, "input", "output");
    return this.run("allGather", {
      group: this.group,
      buffers,
      inputs,
      slotBytes: this.slotBytes,
      queueSlots: this.queueSlots,
    });
  }

  /** Every rank's tensor becomes a copy of rank `src`'s (torch `broadcast`). */
  async broadcast(tensors: RankTensors, src = 0): Promise<CollectiveResult> {
    if (!Number.isInteger(src) || src < 0 || src >= this.group.size) {
      throw new KbError(
        "RUNTIME_INVALID",
        `broadcast: src must be a rank 0..${this.group.size - 1}, got ${src}.`,
      );
    }
    const buffers = this.regions("broadcast", tensors);
    return this.run("broadcast", {
      group: this.group,
      buffers,
      slotBytes: this.slotBytes,
      queueSlots: this.queueSlots,
      root: src,
    });
  }

  /** Returns when every rank has reached it: a token twice round the ring, one PE per rank. */
  async barrier(): Promise<CollectiveResult> {
    const args: BarrierArgs = { group: this.group };
    const launch = await this.sim.launch(ringBarrier, {
      grid: this.grid(1),
      args: [args],
      name: "ccl.barrier.ring",
    });
    return { collective: "barrier", algorithm: "ring", worldSize: this.group.size, bytes: 0, launch };
  }

  /**
   * Rank `dst`'s tensor becomes the elementwise `op` over every rank's (torch `reduce`); the
   * other ranks' tensors stay as they were.
   */
  async reduce(tensors: RankTensors, dst = 0, op: ReduceOp = "sum"): Promise<CollectiveResult> {
    checkOp(op);
    const root = this.rootRank("reduce", "dst", dst);
    const buffers = this.regions("reduce", tensors);
    return this.run("reduce", { ...this.common(), buffers, op, root });
  }

  /**
   * Rank `dst`'s `gatherList[r]` becomes rank `r`'s `tensor` (torch `gather`): `gatherList` is
   * `worldSize` tensors in `dst`'s memory, or one of them stacked by rank.
   */
  async gather(tensors: RankTensors, gatherList: RankTensors, dst = 0): Promise<CollectiveResult> {
    const root = this.rootRank("gather", "dst", dst);
    const buffers = this.regions("gather tensor", tensors);
    const gathered = this.regions("gather gatherList", gatherList);
    this.checkSegments("gather", buffers, gathered, "tensor", "gatherList entry", 1);
    return this.run("gather", { ...this.common(), buffers, root, gathered });
  }

  /**
   * Rank `r`'s `tensor` becomes rank `src`'s `scatterList[r]` (torch `scatter`): `scatterList` is
   * `worldSize` tensors in `src`'s memory, or one of them stacked by rank.
   */
  async scatter(tensors: RankTensors, scatterList: RankTensors, src = 0): Promise<CollectiveResult> {
    const root = this.rootRank("scatter", "src", src);
    const buffers = this.regions("scatter tensor", tensors);
    const pieces = this.regions("scatter scatterList", scatterList);
    this.checkSegments("scatter", buffers, pieces, "tensor", "scatterList entry", 1);
    return this.run("scatter", { ...this.common(), buffers, root, pieces });
  }

  /**
   * Rank `d`'s `outputs[d][s]` becomes rank `s`'s `inputs[s][d]` (torch `all_to_all`): every
   * rank has a list of `worldSize` tensors each way; a pair's two tensors have one size.
   */
  async allToAll(
    outputs: readonly (readonly DeviceTensor[])[],
    inputs: readonly (readonly DeviceTensor[])[],
  ): Promise<CollectiveResult> {
    return this.allToAllBlocks(listBlocks(outputs, inputs, this.group.size));
  }

  /**
   * Block `d` of rank `s`'s `input` becomes block `s` of rank `d`'s `output` (torch
   * `all_to_all_single`): `worldSize` equal blocks, or with split sizes (all-to-all-v)
   * `inputSplitSizes[s][d]` rows of rank `s`'s input for rank `d` and `outputSplitSizes[d][s]`
   * rows of rank `d`'s output from rank `s` (either may be left out).
   */
  async allToAllSingle(
    output: RankTensors,
    input: RankTensors,
    outputSplitSizes?: readonly (readonly number[])[],
    inputSplitSizes?: readonly (readonly number[])[],
  ): Promise<CollectiveResult> {
    const n = this.group.size;
    return this.allToAllBlocks(singleBlocks(output, input, n, outputSplitSizes, inputSplitSizes));
  }

  /** Rank `rank` (default 0) sends `tensor` to rank `dst` and waits (torch `send`): post the `irecv` first. */
  send(tensor: DeviceTensor, dst: number, options: { rank?: number; tag?: number } = {}): Promise<P2PResult> {
    return this.p2p.post({ op: "isend", tensor, peer: dst, ...options }, "send").wait();
  }

  /** Rank `rank` (default 0) receives `tensor` from rank `src` and waits (torch `recv`): post the `isend` first. */
  recv(tensor: DeviceTensor, src: number, options: { rank?: number; tag?: number } = {}): Promise<P2PResult> {
    return this.p2p.post({ op: "irecv", tensor, peer: src, ...options }, "recv").wait();
  }

  /** Posts rank `rank`'s (default 0) send of `tensor` to `dst` (torch `isend`); it runs when a handle is waited on. */
  isend(tensor: DeviceTensor, dst: number, options: { rank?: number; tag?: number } = {}): Work {
    return this.p2p.post({ op: "isend", tensor, peer: dst, ...options }, "isend");
  }

  /** Posts rank `rank`'s (default 0) receive of `tensor` from `src` (torch `irecv`). */
  irecv(tensor: DeviceTensor, src: number, options: { rank?: number; tag?: number } = {}): Work {
    return this.p2p.post({ op: "irecv", tensor, peer: src, ...options }, "irecv");
  }

  /** Posts every op (torch `batch_isend_irecv`); waiting on any handle runs all matched ones as one launch. */
  batchIsendIrecv(ops: readonly P2POp[]): Work[] {
    return ops.map((op) => this.p2p.post(op, "batchIsendIrecv"));
  }

  /** Not supported by the `ahbm` backend: throws `RUNTIME_INVALID` naming what is. */
  allGatherObject(..._args: unknown[]): never {
    return unsupported("allGatherObject");
  }
  /** Not supported by the `ahbm` backend: throws `RUNTIME_INVALID` naming what is. */
  gatherObject(..._args: unknown[]): never {
    return unsupported("gatherObject");
  }
  /** Not supported by the `ahbm` backend: throws `RUNTIME_INVALID` naming what is. */
  scatterObjectList(..._args: unknown[]): never {
    return unsupported("scatterObjectList");
  }
  /** Not supported by the `ahbm` backend: throws `RUNTIME_INVALID` naming what is. */
  broadcastObjectList(..._args: unknown[]): never {
    return unsupported("broadcastObjectList");
  }
  /** Not supported by the `ahbm` backend: throws `RUNTIME_INVALID` naming what is. */
  allReduceCoalesced(..._args: unknown[]): never {
    return unsupported("allReduceCoalesced");
  }
  /** Not supported by the `ahbm` backend: throws `RUNTIME_INVALID` naming what is. */
  monitoredBarrier(..._args: unknown[]): never {
    return unsupported("monitoredBarrier");
  }
  /** Not supported by the `ahbm` backend: throws `RUNTIME_INVALID` naming what is. */
  newGroup(..._args: unknown[]): never {
    return unsupported("newGroup");
  }
  /** Not supported by the `ahbm` backend: throws `RUNTIME_INVALID` naming what is. */
  newSubgroups(..._args: unknown[]): never {
    return unsupported("newSubgroups");
  }

  // ---------------------------------------------------------------------------------------------

  /** The arguments every collective kernel takes. */
  private common(): { group: RankGroup; slotBytes: number; queueSlots: number } {
    return { group: this.group, slotBytes: this.slotBytes, queueSlots: this.queueSlots };
  }

  /** `value` as the root rank of `collective`; else `RUNTIME_INVALID` naming the parameter. */
  private rootRank(collective: string, name: string, value: number): number {
    if (!Number.isInteger(value) || value < 0 || value >= this.group.size) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${collective}: ${name} must be a rank 0..${this.group.size - 1}, got ${value}.`,
      );
    }
    return value;
  }

  /** Runs an all-to-all of `blocks`; `ccl.yaml` rules compare rank 0's input bytes. */
  private allToAllBlocks(blocks: AllToAllBlocks): Promise<CollectiveResult> {
    const first = blocks.sends[0] as Region[];
    const bytes = first.reduce((sum, block) => sum + block.count * DTYPE_BYTES[block.dtype], 0);
    return this.run("allToAll", { ...this.common(), ...blocks }, bytes);
  }

  /** Launches rank-ordered point-to-point transfers as one kernel (see `p2pTransfers`). */
  private async launchTransfers(transfers: readonly Transfer[]): Promise<LaunchRecord> {
    return this.sim.launch(p2pTransfers, {
      grid: this.grid(this.lanes),
      args: [{ group: this.group, transfers, slotBytes: this.slotBytes }] as [P2PArgs],
      name: "ccl.p2p.ring",
    });
  }

  private async run<C extends CollectiveKind>(
    collective: C,
    args: CollectiveArgsByKind[C],
    bytes = bytesOf((args as { buffers: readonly Region[] }).buffers[0] as Region),
  ): Promise<CollectiveResult> {
    const algorithm = this.algorithmFor(collective, bytes);
    const launch = await this.sim.launch(algorithm.kernel, {
      grid: this.grid(this.lanes),
      args: [args] as [CollectiveArgsByKind[C]],
      name: `ccl.${collective}.${algorithm.name}`,
    });
    return { collective, algorithm: algorithm.name, worldSize: this.group.size, bytes, launch };
  }

  /** The launch grid: every rank's PEs (`lanes` of them for a cube or SIP rank). */
  private grid(lanes: number): GridSpec {
    const members = this.group.members;
    switch (this.scope) {
      case "pes":
        return { sips: [this.sip], cubes: [this.cube], pes: members };
      case "cubes":
        return { sips: [this.sip], cubes: members, pes: lanes };
      default:
        return { sips: members, cubes: [this.cube], pes: lanes };
    }
  }

  /** Each rank's buffer: a list of tensors (one per rank), or one tensor stacked by rank. */
  private regions(what: string, tensors: RankTensors): Region[] {
    return rankRegions(what, tensors, this.group.size);
  }

  private checkSegments(
    collective: string,
    small: readonly Region[],
    large: readonly Region[],
    smallName: string,
    largeName: string,
    times = this.group.size,
  ): void {
    const s = small[0] as Region;
    const l = large[0] as Region;
    if (l.count !== s.count * times || l.dtype !== s.dtype) {
      const size = times === 1 ? "the size and dtype of" : `worldSize (${this.group.size}) x`;
      throw new KbError(
        "RUNTIME_INVALID",
        `${collective}: each rank's ${largeName} must be ${size} its ${smallName}: got ${l.count} x ${l.dtype} and ${s.count} x ${s.dtype}.`,
      );
    }
  }
}

/**
 * Creates the process group of a simulator (torch's `init_process_group`): ranks are the SIPs by
 * default, or the cubes of a SIP, or the PEs of a cube (`scope`), as many as `ccl.yaml`'s
 * `defaults.worldSize` says, else all of them, arranged in a ring of single IPCQ hops.
 *
 * Throws `RUNTIME_INVALID` for a backend other than `"ahbm"`, a bad config (`cclConfig`), a world
 * size with no ring on the hardware (naming its shape), or a slot size larger than the topology's.
 */
export function initProcessGroup(sim: Simulator, options: ProcessGroupOptions): ProcessGroup {
  return new ProcessGroup(sim, options);
}

/** The IPCQ slot size of a PE of `sip`/`cube` (pe_cpu `ipcq_slot_bytes`), else {@link DEFAULT_SLOT_BYTES}. */
function slotBytesOf(sim: Simulator, sip: number, cube: number): number {
  return peCpuParam(sim, sip, cube, "ipcq_slot_bytes", DEFAULT_SLOT_BYTES);
}

/** A whole-number pe_cpu param (> 0) of PE 0 of `sip`/`cube`, else `fallback` (an impl without it). */
function peCpuParam(sim: Simulator, sip: number, cube: number, name: string, fallback: number): number {
  const id = `sip${sip}.cube${cube}.pe0.pe_cpu`;
  if (!sim.machine.has(id)) return fallback;
  const value = Number((sim.machine.component(id).params as Record<string, unknown>)[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}
