import { formatIssuePath, KbError } from "@kb/errors";

/** The resolved `cube.hbm` of a topology, as this file reads it (no import of the schema: no cycle). */
type HbmSpec = { readonly params: Readonly<Record<string, unknown>> } & {
  readonly [key in (typeof HBM_NODE_KEYS)[number]]?: unknown;
};

/**
 * The keys of `cube.hbm` the topology writes into every HBM controller node's params, after
 * `cube.hbm.params`, in this order: the geometry ({@link HBM_GEOMETRY_KEYS}) plus the timing
 * only the controller's model reads (`access_latency_ns`, `flit_bytes`, `preset`), which an
 * override may change per stack.
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

/** The keys of a controller node's params that only its model reads: an override may change them. */
const HBM_TIMING_KEYS: readonly string[] = ["access_latency_ns", "flit_bytes", "preset"];

/**
 * The keys of `cube.hbm` that fix the organisation of an HBM stack: besides the controller's
 * model, the graph (its channel and pseudo-channel nodes and their links), the fabric (capacity,
 * lanes), the address map and the peaks read them from `cube.hbm`. One value for every stack: an
 * override may not change them on a controller node (see {@link hbmGeometryOverrideError}).
 */
export const HBM_GEOMETRY_KEYS: readonly (typeof HBM_NODE_KEYS)[number][] = HBM_NODE_KEYS.filter(
  (key) => !HBM_TIMING_KEYS.includes(key),
);

/** The params an HBM controller node gets from `cube.hbm` (its `params`, then the keys it sets). */
export function hbmNodeParams(hbm: HbmSpec): Record<string, unknown> {
  const params: Record<string, unknown> = { ...hbm.params };
  for (const key of HBM_NODE_KEYS) {
    if (hbm[key] !== undefined) params[key] = hbm[key];
  }
  return params;
}

/**
 * The error for override `index`, whose params set a geometry key on `nodes` (HBM controllers):
 * the organisation has one source, `cube.hbm`. Undefined when it sets none.
 */
export function hbmGeometryOverrideError(
  index: number,
  params: Readonly<Record<string, unknown>>,
  nodes: readonly { readonly id: string }[],
  hbm: HbmSpec,
): KbError | undefined {
  const key = HBM_GEOMETRY_KEYS.find((name) => Object.hasOwn(params, name));
  const first = nodes[0];
  if (key === undefined || first === undefined) return undefined;
  const who = nodes.length === 1 ? `node ${first.id}` : `${nodes.length} nodes, e.g. ${first.id},`;
  const path = ["overrides", index, "params", key];
  return new KbError(
    "TOPOLOGY_INVALID",
    `${formatIssuePath(path)}: ${JSON.stringify(params[key])} would change the HBM organisation of ${who} for its model only: the pseudo-channel nodes, the fabric, the address map and the peaks are built from cube.hbm.${key} (${JSON.stringify(hbm[key])}). Set cube.hbm.${key} instead (every stack has the organisation cube.hbm gives).`,
    { context: { path } },
  );
}
