import { formatIssuePath, KbError } from "@kb/errors";
import { HBM_GEOMETRY_KEYS, HBM_NODE_KEYS, type HbmNodeKey } from "@kb/spec";

/** The resolved `cube.hbm` of a topology, as this file reads it (no import of the schema: no cycle). */
type HbmSpec = { readonly params: Readonly<Record<string, unknown>> } & {
  readonly [key in HbmNodeKey]?: unknown;
};

/**
 * The params an HBM controller node gets from `cube.hbm` (its `params`, then the keys it sets:
 * `HBM_NODE_KEYS` of @kb/spec, where the list is defined).
 */
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
