import { type Event, type Resource, Store } from "@kb/des";
import { KbError } from "@kb/errors";
import * as z from "zod";
import { Component, type ComponentContext, type ComponentPeak, type StageWork } from "../component.js";
import { defineComponent } from "../define.js";
import { Transfer } from "../fabric.js";
import { tcmAddress } from "../machine.js";
import { MATH_OPS } from "../math-ops.js";
import { type DmaCopy, type Message, PipelineContext, ServiceRequest, TileToken } from "../message.js";
import { type Feed, feedOf, type PeEngines } from "../plan.js";
import { Submission } from "../program.js";
import { queueDepthParam } from "./fabric-impls.js";
import { compute, computeSlotOf, ns, peOf, wrongMessage } from "./pe-support.js";

// ---------------------------------------------------------------------------------------------
// PE_SCHEDULER

const schedulerParams = z.strictObject({
  tile_m: z.number().int().min(1).default(128).describe("Default composite GEMM tile rows."),
  tile_n: z.number().int().min(1).default(128).describe("Default composite GEMM tile columns."),
  tile_k: z.number().int().min(1).default(128).describe("Default composite GEMM K tile."),
  tile_buffers: z
    .number()
    .int()
    .min(1)
    .default(4)
    .describe("Tile-buffer sets in the scheduler's reserved TCM (tiles in flight)."),
  acc_buffers: z
    .number()
    .int()
    .min(1)
    .default(2)
    .describe("Accumulators (output tiles being accumulated at once)."),
  reserved_tcm_bytes: z
    .number()
    .int()
    .min(1)
    .default(2 ** 20)
    .describe("SchedulerReservedTCM (ADR-0014 D5.1): bytes at the start of the PE's TCM for tile buffers."),
  math_tile_bytes: z
    .number()
    .int()
    .min(1)
    .default(64 * 1024)
    .describe("Target bytes of one composite MATH tile (inputs + output)."),
  queue_depth: queueDepthParam(8),
});

type SchedulerParams = z.output<typeof schedulerParams>;

interface QueuedFeed {
  readonly feed: Feed;
  readonly pipeline: PipelineContext;
}

/**
 * PE_SCHEDULER v2 (ADR-0021): turns each command into per-tile plans, enqueues them on one FIFO
 * feeder (no interleaving of tiles across commands) and returns at once; tokens route themselves
 * stage to stage; the last stage completes the tile exactly once. @internal
 */
export class PeSchedulerV2 extends Component<SchedulerParams> {
  private engines!: PeEngines;
  private readonly feeds: Store<QueuedFeed>;
  private freeSets: Store<number> | null = null;
  private freeAccs: Store<number> | null = null;
  private layout = "";
  private setBytes = 0;
  private accBytes = 0;
  /** Commands completed. */
  completed = 0;

  constructor(context: ComponentContext, params: SchedulerParams) {
    super(context, params, { queueDepth: params.queue_depth });
    this.feeds = new Store<QueuedFeed>(context.env, { name: `${this.id}.feeds` });
  }

  override init(): void {
    const pe = peOf(this);
    const node = this.machine.graph.node(pe);
    this.engines = {
      dma: this.machine.component(`${pe}.pe_dma`),
      fetchStore: this.machine.component(`${pe}.pe_fetch_store`),
      gemm: this.machine.component(`${pe}.pe_gemm`),
      math: this.machine.component(`${pe}.pe_math`),
      pe,
      sip: node.sip as number,
      cube: node.cube as number,
      peIndex: node.pe as number,
      tcmBase: tcmAddress(node.sip as number, node.cube as number, node.pe as number, 0),
    };
    this.env.process(feeder(this), `${this.id}.feeder`);
  }

  process(message: Message): null {
    if (!(message instanceof Submission)) throw wrongMessage(this, message, "commands from PE_CPU");
    const feed = feedOf(message.id, message.command, this.engines, {
      tileM: this.params.tile_m,
      tileN: this.params.tile_n,
      tileK: this.params.tile_k,
      mathTileBytes: this.params.math_tile_bytes,
    });
    const tracer = this.machine.tracer;
    if (tracer !== null) {
      tracer.record("command_submitted", this.env.now, this.id, message.label);
      message.done.addCallback(() => tracer.record("command_complete", this.env.now, this.id, message.label));
    }
    message.done.addCallback(() => {
      this.completed++;
    });
    this.feeds.put({ feed, pipeline: new PipelineContext(message.id, feed.tileCount, message.done) });
    return null;
  }

  /** @internal */
  get queuedFeeds(): Store<QueuedFeed> {
    return this.feeds;
  }

  /** @internal The buffer stores for a feed's layout; waits for every buffer of an older layout first. */
  *prepare(feed: Feed): Generator<Event<any>, void, any> {
    const needs = feed.needs;
    if (needs === null) return;
    const key = `${needs.setBytes}/${needs.accBytes}`;
    if (key === this.layout) return;
    const { tile_buffers: sets, acc_buffers: accs, reserved_tcm_bytes: reserved } = this.params;
    const total = sets * needs.setBytes + accs * needs.accBytes;
    if (total > reserved) {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `${this.engines.pe} command ${feed.id}: ${sets} tile-buffer set(s) of ${needs.setBytes} B and ${accs} accumulator(s) of ${needs.accBytes} B need ${total} B, more than the scheduler's reserved_tcm_bytes (${reserved}). Use a smaller tile or raise pe_scheduler params.reserved_tcm_bytes.`,
        { context: { nodeId: this.id, simTimeNs: this.env.now } },
      );
    }
    // Buffers of the previous layout may still be in flight: take them all back first.
    if (this.freeSets !== null && this.freeAccs !== null) {
      for (let i = 0; i < sets; i++) yield this.freeSets.get();
      for (let i = 0; i < accs; i++) yield this.freeAccs.get();
    }
    this.freeSets = new Store<number>(this.env, { name: `${this.id}.tile_buffers` });
    this.freeAccs = new Store<number>(this.env, { name: `${this.id}.accumulators` });
    for (let i = 0; i < sets; i++) this.freeSets.put(i);
    for (let i = 0; i < accs; i++) this.freeAccs.put(i);
    this.layout = key;
    this.setBytes = needs.setBytes;
    this.accBytes = needs.accBytes;
  }

  /** @internal */
  get buffers(): { sets: Store<number>; accs: Store<number> } {
    return { sets: this.freeSets as Store<number>, accs: this.freeAccs as Store<number> };
  }

  /** @internal TCM address of buffer set `slot` and accumulator `acc`. */
  addresses(slot: number, acc: number): [number, number] {
    const base = this.engines.tcmBase;
    const accRegion = this.params.acc_buffers * this.accBytes;
    return [base + accRegion + slot * this.setBytes, base + Math.max(acc, 0) * this.accBytes];
  }

  /** @internal Called when a tile's last stage finished: frees its buffers. */
  readonly release = (token: TileToken): void => {
    const tracer = this.machine.tracer;
    if (tracer !== null)
      tracer.record("tile_ready", this.env.now, this.id, `${token.pipeline.id}/t${token.plan.tileId}`);
    if (token.bufferSlot >= 0) (this.freeSets as Store<number>).put(token.bufferSlot);
    if (token.releasesAcc) (this.freeAccs as Store<number>).put(token.accSlot);
  };
}

/** The scheduler's single FIFO feeder (ADR-0021 D2 `_feed_loop`). */
function* feeder(scheduler: PeSchedulerV2): Generator<Event<any>, void, any> {
  const feeds = scheduler.queuedFeeds;
  const env = scheduler.env;
  for (;;) {
    const { feed, pipeline }: QueuedFeed = yield feeds.get();
    yield* scheduler.prepare(feed);
    const tracer = scheduler.machine.tracer;
    const usesBuffers = feed.needs !== null;
    const group = feed.groupSize;
    let acc = -1;
    for (let index = 0; index < feed.tileCount; index++) {
      let slot = -1;
      if (usesBuffers) {
        const { sets, accs } = scheduler.buffers;
        if (feed.needs?.accBytes !== 0 && index % group === 0) acc = yield accs.get();
        slot = yield sets.get();
      }
      const [setAddress, accAddress] = scheduler.addresses(Math.max(slot, 0), acc);
      const token = new TileToken(feed.build(index, setAddress, accAddress), pipeline, scheduler.release);
      token.bufferSlot = slot;
      token.accSlot = acc;
      token.releasesAcc = usesBuffers && feed.needs?.accBytes !== 0 && index % group === group - 1;
      const first = token.stage.component;
      if (tracer !== null) tracer.record("sub_command_dispatched", env.now, scheduler.id, token.label);
      const put = first.enqueue(token);
      if (put !== null) yield put;
    }
  }
}

export const peSchedulerV2 = defineComponent({
  kind: "pe_scheduler",
  impl: "pe_scheduler_v2",
  description:
    "PE dispatcher (ADR-0021): builds per-tile plans (composite GEMM with K-tile accumulation in TCM and epilogues; composite MATH; simple commands as one stage), one FIFO feeder injects tiles as tile buffers free up, tokens chain engine to engine.",
  params: schedulerParams,
  create: (context, params) => new PeSchedulerV2(context, params),
});

// ---------------------------------------------------------------------------------------------
// PE_DMA

const dmaParams = z.strictObject({
  setup_ns: ns("Descriptor setup per copy before its first packet, ns.", 0),
  queue_depth: queueDepthParam(4),
});

/**
 * PE_DMA: a read channel and a write channel of capacity 1 each (ADR-0014 D4). Each copy is
 * translated by the PE_MMU, then moved by the fabric: egress to the XBAR for HBM, to the NOC
 * for SRAM and remote cubes (the topology's routes). @internal
 */
export class PeDmaV1 extends Component<z.output<typeof dmaParams>> {
  private mmu!: Component;

  constructor(context: ComponentContext, params: z.output<typeof dmaParams>) {
    super(context, params, { lanes: 2, queueDepth: params.queue_depth });
  }

  override init(): void {
    this.mmu = this.machine.component(`${peOf(this)}.pe_mmu`);
  }

  override laneOf(message: Message): number {
    return (message as TileToken).stage.type === "dma_write" ? 1 : 0;
  }

  process(message: Message): StageWork {
    if (!(message instanceof TileToken)) throw wrongMessage(this, message, "DMA stages of tile tokens");
    const params = message.stage.params;
    if (params.type !== "dma_read" && params.type !== "dma_write")
      throw wrongMessage(this, message, "DMA stages");
    return this.copy(params.type === "dma_read", params.copies);
  }

  private *copy(read: boolean, copies: readonly DmaCopy[]): StageWork {
    const env = this.env;
    const fabric = this.machine.fabric;
    const physical: { address: number; copy: DmaCopy }[] = [];
    for (const copy of copies) {
      const far = read ? copy.src : copy.dst;
      const request = new ServiceRequest<number>(
        env.event(),
        "translate",
        far.rows === 1 ? far.rowBytes : (far.rows - 1) * far.stride + far.rowBytes,
        far.address,
      );
      const put = this.mmu.enqueue(request);
      if (put !== null) yield put;
      const address: number = yield request.done;
      physical.push({ address, copy });
    }
    if (this.params.setup_ns > 0) yield env.timeout(this.params.setup_ns * copies.length);
    const transfer = new Transfer(env);
    for (const { address, copy } of physical) {
      const far = read ? copy.src : copy.dst;
      const moved = { address, rows: far.rows, rowBytes: far.rowBytes, stride: far.stride };
      if (read) fabric.read(this.id, moved, transfer, `${this.id} dma_read`);
      else fabric.write(this.id, moved, transfer, `${this.id} dma_write`);
    }
    transfer.seal();
    this.stats.bytes += transfer.bytes;
    yield transfer.done;
  }
}

export const peDmaV1 = defineComponent({
  kind: "pe_dma",
  impl: "pe_dma_v1",
  description:
    "PE DMA engine: read and write channels of capacity 1 each; per copy an MMU translation, setup_ns, then one packet per HBM pseudo-channel touched (requests and responses for reads) over the topology's routes.",
  params: dmaParams,
  create: (context, params) => new PeDmaV1(context, params),
});

// ---------------------------------------------------------------------------------------------
// PE_MMU

const mmuParams = z.strictObject({
  tlb_entries: z.number().int().min(1).default(32).describe("TLB entries (LRU)."),
  page_bytes: z
    .number()
    .int()
    .min(4096)
    .default(2 * 2 ** 20)
    .describe("Page size of the TLB, bytes."),
  hit_ns: ns("Translation time per page on a TLB hit, ns.", 1),
  miss_ns: ns("Translation time per page on a TLB miss (page walk), ns.", 50),
  queue_depth: queueDepthParam(8),
});

/** PE_MMU: VA -> PA through the machine's page table, timed per page by an LRU TLB. @internal */
export class PeMmuV1 extends Component<z.output<typeof mmuParams>> {
  private readonly tlb = new Map<number, true>();
  hits = 0;
  misses = 0;

  constructor(context: ComponentContext, params: z.output<typeof mmuParams>) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  process(message: Message): Event<unknown> | null {
    if (!(message instanceof ServiceRequest)) throw wrongMessage(this, message, "translation requests");
    const request = message as ServiceRequest<number>;
    const { page_bytes: page, tlb_entries: entries, hit_ns: hit, miss_ns: miss } = this.params;
    const first = Math.floor(request.address / page);
    const last = Math.floor((request.address + Math.max(request.bytes, 1) - 1) / page);
    let time = 0;
    for (let p = first; p <= last; p++) {
      if (this.tlb.has(p)) {
        this.tlb.delete(p);
        this.hits++;
        time += hit;
      } else {
        this.misses++;
        time += miss;
        if (this.tlb.size >= entries) this.tlb.delete(this.tlb.keys().next().value as number);
      }
      this.tlb.set(p, true);
    }
    request.result = this.machine.pageTable.translate(request.address, `${this.id}`);
    return time > 0 ? this.env.timeout(time) : null;
  }
}

export const peMmuV1 = defineComponent({
  kind: "pe_mmu",
  impl: "pe_mmu_v1",
  description:
    "PE MMU: translates DMA addresses through the machine's page table (identity until pages are mapped); per page touched hit_ns on a TLB hit, miss_ns on a miss (LRU TLB of tlb_entries).",
  params: mmuParams,
  create: (context, params) => new PeMmuV1(context, params),
});

// ---------------------------------------------------------------------------------------------
// PE_TCM and PE_FETCH_STORE

const tcmParams = z.strictObject({
  capacity_bytes: z
    .number()
    .int()
    .min(1)
    .default(4 * 2 ** 20)
    .describe("TCM capacity, bytes."),
  bw_gbs: z.number().positive().default(512).describe("TCM bandwidth, GB/s (requests are serialised)."),
  latency_ns: ns("Access latency per request, ns.", 1),
  queue_depth: queueDepthParam(8),
});

/** PE_TCM: a bandwidth-serialised scratchpad: each request takes latency_ns + bytes / bw_gbs. @internal */
export class PeTcmV1 extends Component<z.output<typeof tcmParams>> {
  constructor(context: ComponentContext, params: z.output<typeof tcmParams>) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  process(message: Message): Event<unknown> {
    if (!(message instanceof ServiceRequest)) throw wrongMessage(this, message, "read/write requests");
    this.stats.bytes += message.bytes;
    return this.env.timeout(this.params.latency_ns + message.bytes / this.params.bw_gbs);
  }
}

export const peTcmV1 = defineComponent({
  kind: "pe_tcm",
  impl: "pe_tcm_v1",
  description: "PE scratchpad SRAM: requests served one at a time, each latency_ns + bytes / bw_gbs.",
  params: tcmParams,
  create: (context, params) => new PeTcmV1(context, params),
});

const fetchStoreParams = z.strictObject({
  overhead_ns: ns("Fixed time per fetch or store besides the TCM access, ns.", 0),
  queue_depth: queueDepthParam(4),
});

/**
 * PE_FETCH_STORE: moves operands TCM -> registers (fetch lane) and results back (store lane)
 * through PE_TCM. Two lanes, because one queue for both directions deadlocks: a full fetch
 * queue behind a full engine queue would block the engine's store. @internal
 */
export class PeFetchStoreV1 extends Component<z.output<typeof fetchStoreParams>> {
  private tcm!: Component;

  constructor(context: ComponentContext, params: z.output<typeof fetchStoreParams>) {
    super(context, params, { lanes: 2, queueDepth: params.queue_depth });
  }

  override laneOf(message: Message): number {
    return (message as TileToken).stage.type === "store" ? 1 : 0;
  }

  override init(): void {
    this.tcm = this.machine.component(`${peOf(this)}.pe_tcm`);
  }

  process(message: Message): StageWork {
    if (!(message instanceof TileToken))
      throw wrongMessage(this, message, "fetch/store stages of tile tokens");
    const params = message.stage.params;
    if (params.type !== "fetch" && params.type !== "store")
      throw wrongMessage(this, message, "fetch/store stages");
    return this.move(params.type === "fetch" ? "read" : "write", params.bytes);
  }

  private *move(action: string, bytes: number): StageWork {
    const env = this.env;
    this.stats.bytes += bytes;
    if (this.params.overhead_ns > 0) yield env.timeout(this.params.overhead_ns);
    const request = new ServiceRequest(env.event(), action, bytes);
    const put = this.tcm.enqueue(request);
    if (put !== null) yield put;
    yield request.done;
  }
}

export const peFetchStoreV1 = defineComponent({
  kind: "pe_fetch_store",
  impl: "pe_fetch_store_v1",
  description:
    "PE fetch/store unit (ADR-0021 D5): a fetch lane (TCM -> register file before compute) and a store lane (register file -> TCM after), each overhead_ns plus a PE_TCM request.",
  params: fetchStoreParams,
  create: (context, params) => new PeFetchStoreV1(context, params),
});

// ---------------------------------------------------------------------------------------------
// PE_MATH (PE_GEMM: pe-gemm-v1.ts, pe-gemm-v2.ts; the compute slot they share: pe-support.ts)

const mathParams = z.strictObject({
  freq_ghz: z.number().positive().default(1).describe("Clock, GHz."),
  lanes: z.number().int().min(1).default(64).describe("SIMD lanes (elements per cycle per pass)."),
  op_cycles: z
    .record(z.string(), z.number().min(0))
    .default({})
    .describe("Cycles per vector by op, overriding the defaults (add 1, div 4, exp 4, softmax 11, ...)."),
  overhead_cycles: z.number().int().min(0).default(4).describe("Fixed cycles per op."),
  queue_depth: queueDepthParam(4),
});

/**
 * PE_MATH timing: `ceil(elements / lanes) * cycles(op)` plus, for reductions, a lane tree of
 * `ceil(log2(min(length, lanes)))` cycles per output row (twice for softmax: max and sum), plus
 * `overhead_cycles`; divided by `freq_ghz`. Ops joined with "+" (epilogues) add up.
 */
export function simdNs(
  params: z.output<typeof mathParams>,
  op: string,
  elements: number,
  reduceLength: number,
): number {
  const vectors = Math.ceil(elements / params.lanes);
  let cycles = params.overhead_cycles;
  for (const name of op.split("+")) {
    const perVector = params.op_cycles[name] ?? MATH_OPS[name]?.cycles ?? 1;
    cycles += vectors * perVector;
    if (reduceLength > 0 && (MATH_OPS[name]?.shape === "reduce" || name === "softmax")) {
      const rows = Math.ceil(elements / reduceLength);
      const tree = Math.ceil(Math.log2(Math.max(2, Math.min(reduceLength, params.lanes))));
      cycles += rows * tree * (name === "softmax" ? 2 : 1);
    }
  }
  return cycles / params.freq_ghz;
}

/** PE_MATH v1: SIMD timing. @internal */
export class PeMathV1 extends Component<z.output<typeof mathParams>> {
  private slot!: Resource;

  constructor(context: ComponentContext, params: z.output<typeof mathParams>) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  override init(): void {
    this.slot = computeSlotOf(this);
  }

  process(message: Message): StageWork {
    if (!(message instanceof TileToken)) throw wrongMessage(this, message, "MATH stages of tile tokens");
    const params = message.stage.params;
    if (params.type !== "math") throw wrongMessage(this, message, "MATH stages");
    this.stats.flops += params.elements * params.op.split("+").length;
    return compute(this, this.slot, simdNs(this.params, params.op, params.elements, params.reduceLength));
  }

  /** One op per lane per cycle. */
  override peak(): ComponentPeak {
    return { flopsPerNs: this.params.lanes * this.params.freq_ghz };
  }
}

export const peMathV1 = defineComponent({
  kind: "pe_math",
  impl: "pe_math_v1",
  description:
    "SIMD engine: ceil(elements / lanes) x cycles(op) (+ a log2 lane tree per row for reductions, twice for softmax) + overhead_cycles, over freq_ghz, on the PE's shared compute slot.",
  params: mathParams,
  create: (context, params) => new PeMathV1(context, params),
});
