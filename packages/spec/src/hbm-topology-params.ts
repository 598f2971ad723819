import * as z from "zod";

// What the topology tells an HBM stack's controller: the one list of the keys of `cube.hbm` a
// controller node receives, split into the organisation (one value for every stack) and the
// timing only the controller's model reads, and the schema a memory model parses them with.

/** The JEDEC parts whose timing a bank-aware controller (`hbm_ctrl_v2`) knows (`cube.hbm.preset`). */
export const hbmPresetNameSchema = z.enum(["hbm2", "hbm2e", "hbm3", "hbm3e"]);

/**
 * The keys of `cube.hbm` the topology writes into every HBM controller node's params, after
 * `cube.hbm.params`, in this order: the geometry ({@link HBM_GEOMETRY_KEYS}) plus the timing
 * only the controller's model reads ({@link HBM_TIMING_KEYS}), which an override may change per
 * stack.
 */
export const HBM_NODE_KEYS = [
  "channels",
  "pseudo_channels",
  "pc_bw_gbs",
  "access_latency_ns",
  "interleave_bytes",
  "flit_bytes",
  "capacity_bytes",
  "mapping",
  "preset",
  "sids",
  "bank_groups",
  "banks_per_group",
  "row_bytes",
  "burst_bytes",
] as const;

/** One of {@link HBM_NODE_KEYS}. */
export type HbmNodeKey = (typeof HBM_NODE_KEYS)[number];

/** The keys of a controller node's params that only its model reads: an override may change them. */
export const HBM_TIMING_KEYS: readonly HbmNodeKey[] = ["access_latency_ns", "flit_bytes", "preset"];

/**
 * The keys of `cube.hbm` that fix the organisation of an HBM stack: besides the controller's
 * model, the graph (its channel and pseudo-channel nodes and their links), the fabric (capacity,
 * lanes), the address map and the peaks read them from `cube.hbm`. One value for every stack: an
 * override may not change them on a controller node.
 */
export const HBM_GEOMETRY_KEYS: readonly HbmNodeKey[] = HBM_NODE_KEYS.filter(
  (key) => !HBM_TIMING_KEYS.includes(key),
);

/**
 * `queue_depth` of a component's params: the capacity of its inbox per lane (the hardware queue
 * depth), `depth` when the topology does not set it.
 */
export const queueDepthParam = (depth: number) =>
  z.number().int().min(1).default(depth).describe("Inbox capacity per lane: the hardware queue depth.");

/** The schema of each key of {@link HBM_NODE_KEYS} as a controller's model receives it. */
const hbmNodeShape = {
  channels: z.number().int().min(1).describe("Channels (set by the topology's cube.hbm)."),
  pseudo_channels: z.number().int().min(1).describe("Pseudo-channels per channel."),
  pc_bw_gbs: z.number().positive().describe("Bandwidth of one pseudo-channel, GB/s."),
  access_latency_ns: z.number().min(0).describe("Access latency of a pseudo-channel, ns."),
  interleave_bytes: z.number().int().min(1).describe("Address interleave unit (mapping: interleave), bytes."),
  flit_bytes: z.number().int().min(1).describe("Flit size: the bus commits a flit at a time."),
  capacity_bytes: z.number().int().min(1).describe("Stack capacity, bytes."),
  mapping: z.string().default("interleave").describe("Address mapping (cube.hbm.mapping)."),
  preset: hbmPresetNameSchema.optional().describe("JEDEC part (cube.hbm.preset)."),
  sids: z.number().int().min(1).default(1).describe("SIDs per pseudo-channel."),
  bank_groups: z.number().int().min(1).default(4).describe("Bank groups per SID."),
  banks_per_group: z.number().int().min(1).default(4).describe("Banks per bank group."),
  row_bytes: z.number().int().min(1).default(1024).describe("Row (page) size, bytes."),
  burst_bytes: z.number().int().min(1).default(32).describe("Bytes per column access."),
} satisfies Record<HbmNodeKey, z.ZodType>;

/**
 * The params the topology gives every HBM controller node (`cube.hbm`, keys
 * {@link HBM_NODE_KEYS}) and its `queue_depth`: an HBM memory model's schema extends this
 * (`hbmTopologyParams.extend({ ... })`) so its strict parse accepts them.
 */
export const hbmTopologyParams = z.strictObject({ ...hbmNodeShape, queue_depth: queueDepthParam(64) });
