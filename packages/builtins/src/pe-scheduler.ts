import {
  Component,
  type ComponentContext,
  defineComponent,
  type Message,
  PipelineContext,
  TileToken,
} from "@kb/components";
import { type Feed, feedOf, type PeEngines, peOf, Submission, wrongMessage } from "@kb/components/engine";
import { type Event, Store } from "@kb/des";
import { KbError } from "@kb/errors";
import { queueDepthParam } from "@kb/spec";
import { tcmAddress } from "@kb/topology";
import * as z from "zod";

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
    // None of the scheduler's records carries a flow: a tracer that reads only flows skips them.
    if (tracer !== null && tracer.flowsOnly !== true) {
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
    if (tracer !== null && tracer.flowsOnly !== true)
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
      if (tracer !== null && tracer.flowsOnly !== true)
        tracer.record("sub_command_dispatched", env.now, scheduler.id, token.label);
      const put = first.enqueue(token);
      if (put !== null) yield put;
    }
  }
}

export const peSchedulerV2 = defineComponent({
  kind: "pe_scheduler",
  impl: "pe_scheduler_v2",
  analytic: true,
  description:
    "PE dispatcher (ADR-0021): builds per-tile plans (composite GEMM with K-tile accumulation in TCM and epilogues; composite MATH; simple commands as one stage), one FIFO feeder injects tiles as tile buffers free up, tokens chain engine to engine.",
  params: schedulerParams,
  create: (context, params) => new PeSchedulerV2(context, params),
});
