import type * as z from "zod";
import type { HbmAddressMap } from "../hbm-address-map.js";
import {
  type ComponentPeak,
  type ContractStamp,
  checkDefinitionBase,
  definitionFailure,
  definitionWhere,
  type ModelDefinitionBase,
  type SimEnvironment,
  stamp,
} from "./model-definition.js";
import type { ModelStat } from "./model-stats.js";

/**
 * What a memory model services: one packet's share of a block on one port (an HBM
 * pseudo-channel, or the single port of an SRAM). Built by the framework from the fabric's
 * packet; a model reads it and answers with a {@link MemoryTiming}.
 */
export interface MemoryRequest {
  /** A read (data goes back to the requester) or a write (data is committed here). */
  readonly kind: "read" | "write";
  /** The port: HBM lane `channel x pseudo_channels + pseudo_channel`, 0 for a single-port memory. */
  readonly port: number;
  /** Simulated time the request's head arrived (the current time when `service` is called), ns. */
  readonly arrivalNs: number;
  /** Time the last byte of a write's data arrives (>= arrivalNs); `arrivalNs` for a read. */
  readonly tailNs: number;
  /** Bytes read or written on this port. */
  readonly bytes: number;
  /**
   * The address ranges on this port, as `[offset, bytes, offset, bytes, ...]`: byte offsets
   * within the memory (the HBM stack, the SRAM), contiguous pieces merged, in block order. Locate
   * a byte's bank, row and column with {@link MemoryModelContext.addressMap}. Computed on first
   * read, so a model that does not look costs nothing.
   */
  readonly ranges: readonly number[];
  /** The requester's node id (a PE_DMA, an M_CPU.DMA, `host`). */
  readonly requester: string;
  /**
   * Answers a request that {@link MemoryModel.service} left pending (returned `undefined`), at
   * or after the current time. Each request is answered exactly once.
   */
  complete(timing: MemoryTiming): void;
}

/** When a memory finished with a request. */
export interface MemoryTiming {
  /**
   * A read: when its first data leaves the port (the response's head); a write: when the port
   * started taking its data. Not before the request's arrival.
   */
  readonly startNs: number;
  /** A read: when its last data leaves the port (the response's tail); a write: when it is committed. */
  readonly endNs: number;
  /** Data-bus time the request occupied, ns, for statistics and the bandwidth counter (default `endNs - startNs`). */
  readonly busyNs?: number;
}

/** A memory model instance: what {@link defineMemoryModel}'s `create` returns. */
export interface MemoryModel {
  /**
   * Services a request at its arrival (the current simulated time). Return its timing, or
   * `undefined` to answer later with `request.complete(timing)` (a controller that queues and
   * reorders requests); schedule that with `context.env` (`env.timeout(ns).addCallback(...)`).
   */
  service(request: MemoryRequest): MemoryTiming | undefined;
  /**
   * Requests a port holds unanswered before it takes no more (a controller queue; default:
   * unbounded). While a port is full, the requests that reach it wait in its FIFO, in arrival order.
   */
  readonly maxPending?: number;
  /** The best rate of the whole memory (every port), for rooflines; default unknown. */
  peak?(): ComponentPeak;
  /**
   * The counters the model keeps (row hits, activates, ...), per port where it counts per port
   * (`perPort[p]` of port p): read once after the run into `components[].stats` of the results,
   * where `kb run`, `kb web` and a sweep's metrics find them. Default: none. Declare them on the
   * definition too (`counters`), so `kb components list` documents them.
   */
  stats?(): readonly ModelStat[];
}

/** What a memory model is created with. */
export interface MemoryModelContext {
  /** The simulation's clock: `env.now`, `env.timeout(ns, value).addCallback(...)` to answer later. */
  readonly env: SimEnvironment;
  /** The topology node id (`sip0.cube0.hbm`). */
  readonly id: string;
  /** Ports (HBM pseudo-channels, or 1). */
  readonly ports: number;
  /** The HBM stack's address mapping (bank, row and column of an offset); null for SRAM. */
  readonly addressMap: HbmAddressMap | null;
}

/** The kinds a memory model times. */
export type MemoryModelKind = "hbm_ctrl" | "sram";

/** A memory model's declaration, for {@link defineMemoryModel}. */
export interface MemoryModelDefinition<S extends z.ZodType = z.ZodType> extends ModelDefinitionBase<S> {
  /** `"hbm_ctrl"` (an HBM stack: one port per pseudo-channel) or `"sram"` (one port). */
  readonly kind: MemoryModelKind;
  /** A memory model times one kind. */
  readonly alsoKinds?: never;
  /**
   * The params schema. The topology passes an HBM node its geometry (`channels`,
   * `pseudo_channels`, ...; see `hbmTopologyParams`) and an SRAM its `capacity_bytes`, `bw_gbs`,
   * `latency_ns`, so an HBM model's schema extends `hbmTopologyParams`.
   */
  readonly params: S;
  /** Inbox capacity per port (the hardware queue in front of the model; default the params' `queue_depth`, else 64). */
  queueDepth?(params: z.output<S>): number;
  /** Creates the model for one topology node. */
  create(context: MemoryModelContext, params: z.output<S>): MemoryModel;
}

/** What {@link defineMemoryModel} returns: the checked definition as plain data, for the framework to adapt. */
export type MemoryModelSpec<S extends z.ZodType = z.ZodType> = MemoryModelDefinition<S> &
  ContractStamp<"memory">;

/**
 * Declares a memory model: one service function over typed requests. Returns the definition as
 * plain data ({@link MemoryModelSpec}); the framework (`@kb/components`) does the rest: it turns
 * fabric packets into {@link MemoryRequest}s (one per port a block touches, with its address
 * ranges), sends a read's response from `startNs` to `endNs`, completes a write at `endNs`, keeps
 * `stats` (ops, bytes, busy time), draws each request's data-bus time on its port's trace track,
 * makes a port's requests wait (FIFO) while the model has `maxPending` requests unanswered, and
 * reports a model that answers wrongly (a time before the arrival or now, twice) or never.
 *
 * ```ts
 * export const fixedLatency = defineMemoryModel({
 *   kind: "hbm_ctrl",
 *   impl: "fixed_latency",
 *   description: "Every request takes latency_ns plus its bytes at pc_bw_gbs; ports never queue.",
 *   params: hbmTopologyParams.extend({ latency_ns: z.number().min(0).default(50) }),
 *   create: (_context, params) => ({
 *     service: (request) => {
 *       const startNs = request.arrivalNs + params.latency_ns;
 *       return { startNs, endNs: startNs + request.bytes / params.pc_bw_gbs };
 *     },
 *   }),
 * });
 * ```
 *
 * Throws `COMPONENT_INVALID_DEFINITION` (`defineMemoryModel("impl"): ...`) for a kind other than
 * `hbm_ctrl`/`sram`, a missing `create`, or a malformed name, description, params or counters.
 */
export function defineMemoryModel<S extends z.ZodType>(
  definition: MemoryModelDefinition<S>,
): MemoryModelSpec<S> {
  checkMemoryModel(definition);
  return stamp(definition, "memory");
}

/** The checks of {@link defineMemoryModel} (also run on a loaded plug-in's data). @internal */
export function checkMemoryModel(definition: unknown): void {
  const where = definitionWhere("defineMemoryModel", definition);
  const fail = definitionFailure(where);
  if (definition === null || typeof definition !== "object") fail("expects an object.");
  const d = definition as Partial<MemoryModelDefinition>;
  if (d.kind !== "hbm_ctrl" && d.kind !== "sram") {
    fail(`kind must be "hbm_ctrl" or "sram", got ${JSON.stringify(d.kind)}.`);
  }
  if (d.alsoKinds !== undefined) fail("alsoKinds: a memory model times one kind (hbm_ctrl or sram).");
  if (typeof d.create !== "function") {
    fail("create(context, params) must be a function returning { service(request) }.");
  }
  if (d.queueDepth !== undefined && typeof d.queueDepth !== "function") {
    fail("queueDepth(params) must be a function returning the inbox capacity per port.");
  }
  checkDefinitionBase(definition, where);
}
