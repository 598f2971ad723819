import {
  Component,
  type ComponentContext,
  type DmaCopy,
  defineComponent,
  type Message,
  ServiceRequest,
  type StageWork,
  TileToken,
  Transfer,
} from "@kb/components";
import { type AtomicStage, ns, peOf, wrongMessage } from "@kb/components/engine";
import type { Event } from "@kb/des";
import { queueDepthParam } from "@kb/spec";
import { decodeAddress } from "@kb/topology";
import * as z from "zod";

// ---------------------------------------------------------------------------------------------
// PE_DMA

const dmaParams = z.strictObject({
  setup_ns: ns("Descriptor setup per copy before its first packet, ns.", 0),
  atomic_alu_ns: ns(
    "An atomic's ALU op at the memory controller per element, between its read and its write, ns.",
    2,
  ),
  queue_depth: queueDepthParam(4),
});

/**
 * PE_DMA: a read channel and a write channel of capacity 1 each (ADR-0014 D4). Each copy is
 * translated by the PE_MMU, then moved by the fabric: egress to the XBAR for HBM, to the NOC
 * for SRAM and remote cubes (the topology's routes). @internal
 */
export class PeDmaV1 extends Component<z.output<typeof dmaParams>> {
  private mmu!: Component;
  private tcm!: Component;

  constructor(context: ComponentContext, params: z.output<typeof dmaParams>) {
    super(context, params, { lanes: 2, queueDepth: params.queue_depth });
  }

  override init(): void {
    this.mmu = this.machine.component(`${peOf(this)}.pe_mmu`);
    this.tcm = this.machine.component(`${peOf(this)}.pe_tcm`);
  }

  override laneOf(message: Message): number {
    return (message as TileToken).stage.type === "dma_write" ? 1 : 0;
  }

  override laneName(index: number): string {
    return index === 1 ? "write" : "read";
  }

  process(message: Message): StageWork {
    if (!(message instanceof TileToken)) throw wrongMessage(this, message, "DMA stages of tile tokens");
    const params = message.stage.params;
    if (params.type !== "dma_read" && params.type !== "dma_write")
      throw wrongMessage(this, message, "DMA stages");
    if (params.atomic !== undefined) return this.atomic(params.copies, params.atomic);
    return this.copy(params.type === "dma_read", params.copies, true);
  }

  /**
   * An atomic (docs/latency-model.md, "Atomics"): once every earlier atomic on one of its addresses
   * wrote (the order their stages started in, which is the op log's), the runs are read, each
   * element goes through the memory controller's ALU (`atomic_alu_ns`), and the runs are written.
   */
  private *atomic(copies: readonly DmaCopy[], atomic: AtomicStage): StageWork {
    const locks = atomicLocks(this.machine);
    const earlier = new Set<Event<unknown>>();
    for (const address of atomic.addresses) {
      const previous = locks.get(address);
      if (previous !== undefined) earlier.add(previous);
    }
    const done = this.env.event<unknown>();
    for (const address of atomic.addresses) locks.set(address, done);
    for (const event of earlier) if (!event.processed) yield event;
    // The operand tile is read from TCM once; the read-modify-write happens at the memory.
    yield* tcmAccess(this.tcm, "read", copiesBytes(copies));
    yield* this.copy(
      true,
      copies.map((copy) => ({ src: copy.dst, dst: copy.src })),
      false,
    );
    yield this.env.timeout(this.params.atomic_alu_ns * atomic.addresses.length);
    yield* this.copy(false, copies, false);
    done.succeed(null);
    for (const address of atomic.addresses) if (locks.get(address) === done) locks.delete(address);
  }

  /**
   * The copies' translations and fabric transfer. With `tcm`, the TCM side too (ADR-0021 D5): a
   * drain reads its bytes from PE_TCM before its first packet leaves, a fill writes them to PE_TCM
   * once its last response has arrived.
   */
  private *copy(read: boolean, copies: readonly DmaCopy[], tcm: boolean): StageWork {
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
    if (tcm && !read) yield* tcmAccess(this.tcm, "read", copiesBytes(copies));
    const transfer = new Transfer(env);
    for (const { address, copy } of physical) {
      const far = read ? copy.src : copy.dst;
      const moved = { address, rows: far.rows, rowBytes: far.rowBytes, stride: far.stride };
      const observer = this.machine.hbmAccessObserver;
      if (observer !== null && decodeAddress(address).space === "hbm")
        observer(!read, address, far.rows, far.rowBytes, far.stride);
      if (read) fabric.read(this.id, moved, transfer, `${this.id} dma_read`);
      else fabric.write(this.id, moved, transfer, `${this.id} dma_write`);
    }
    transfer.seal();
    this.stats.bytes += transfer.bytes;
    yield transfer.done;
    if (tcm && read) yield* tcmAccess(this.tcm, "write", transfer.bytes);
  }
}

/** Bytes of the TCM side of copies (every row of each block). */
function copiesBytes(copies: readonly DmaCopy[]): number {
  let bytes = 0;
  for (const copy of copies) bytes += copy.src.rows * copy.src.rowBytes;
  return bytes;
}

/** One PE_TCM request of `bytes` (a read or a write), waited for: queueing, latency_ns, bytes / bw_gbs. */
function* tcmAccess(tcm: Component, action: "read" | "write", bytes: number): StageWork {
  if (bytes <= 0) return;
  const request = new ServiceRequest(tcm.env.event(), action, bytes);
  const put = tcm.enqueue(request);
  if (put !== null) yield put;
  yield request.done;
}

/** Per machine: the completion of the last atomic on each device address (serialisation). */
const ATOMIC_LOCKS = new WeakMap<object, Map<number, Event<unknown>>>();

function atomicLocks(machine: object): Map<number, Event<unknown>> {
  let locks = ATOMIC_LOCKS.get(machine);
  if (locks === undefined) {
    locks = new Map();
    ATOMIC_LOCKS.set(machine, locks);
  }
  return locks;
}

export const peDmaV1 = defineComponent({
  kind: "pe_dma",
  impl: "pe_dma_v1",
  analytic: true,
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
  analytic: true,
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
  analytic: true,
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

  override laneName(index: number): string {
    return index === 1 ? "store" : "fetch";
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

  private *move(action: "read" | "write", bytes: number): StageWork {
    this.stats.bytes += bytes;
    if (this.params.overhead_ns > 0) yield this.env.timeout(this.params.overhead_ns);
    yield* tcmAccess(this.tcm, action, bytes);
  }
}

export const peFetchStoreV1 = defineComponent({
  kind: "pe_fetch_store",
  impl: "pe_fetch_store_v1",
  analytic: true,
  description:
    "PE fetch/store unit (ADR-0021 D5): a fetch lane (TCM -> register file before compute) and a store lane (register file -> TCM after), each overhead_ns plus a PE_TCM request.",
  params: fetchStoreParams,
  create: (context, params) => new PeFetchStoreV1(context, params),
});
