import type { RoutingInput } from "./route.js";
import { groupEdges } from "./routing-arrays.js";

/**
 * The regions of the region router (region-router.ts) as flat arrays: the nodes of each region,
 * each node's place in its region, and the boundary nodes (those with an edge to or from another
 * region). @internal
 */
export interface RegionPartition {
  /** Region of each node (`RegionRoutingInput.region`). */
  readonly region: Int32Array;
  /** Number of regions: one more than the largest region number. */
  readonly regionCount: number;
  /** Nodes of each region, ascending: `regionNodes[regionStart[r] .. regionStart[r + 1] - 1]`. */
  readonly regionStart: Int32Array;
  readonly regionNodes: Int32Array;
  /** Position of each node in its region's node list. */
  readonly indexInRegion: Int32Array;
  /** Boundary nodes of each region, ascending. */
  readonly boundaryStart: Int32Array;
  readonly boundaryNodes: Int32Array;
  /** 1 for a boundary node, 0 for others. */
  readonly isBoundary: Uint8Array;
}

/**
 * The {@link RegionPartition} of the nodes of `input` by `input.region`; throws when a node's
 * region is not a nonnegative integer. @internal
 */
export function regionPartition(
  input: Pick<RoutingInput, "edges" | "edgeSrc" | "edgeDst"> & { readonly region: Int32Array },
): RegionPartition {
  const { region, edgeSrc, edgeDst } = input;
  const nodeCount = region.length;
  let regionCount = 0;
  for (let n = 0; n < nodeCount; n++) {
    const r = region[n] as number;
    if (!Number.isInteger(r) || r < 0) throw new Error(`RegionRouter: node ${n} has region ${r}`);
    if (r >= regionCount) regionCount = r + 1;
  }
  const [regionStart, regionNodes] = groupEdges(regionCount, region);
  const indexInRegion = new Int32Array(nodeCount);
  for (let r = 0; r < regionCount; r++) {
    const end = regionStart[r + 1] as number;
    for (let k = regionStart[r] as number; k < end; k++) {
      indexInRegion[regionNodes[k] as number] = k - (regionStart[r] as number);
    }
  }
  const isBoundary = new Uint8Array(nodeCount);
  for (let e = 0; e < input.edges.length; e++) {
    const a = edgeSrc[e] as number;
    const b = edgeDst[e] as number;
    if (region[a] !== region[b]) {
      isBoundary[a] = 1;
      isBoundary[b] = 1;
    }
  }
  const boundaryRegion: number[] = [];
  const boundaryOf: number[] = [];
  for (let n = 0; n < nodeCount; n++) {
    if (isBoundary[n] === 1) {
      boundaryRegion.push(region[n] as number);
      boundaryOf.push(n);
    }
  }
  const [boundaryStart, boundaryIndex] = groupEdges(regionCount, Int32Array.from(boundaryRegion));
  const boundaryNodes = boundaryIndex.map((k) => boundaryOf[k] as number);
  return {
    region,
    regionCount,
    regionStart,
    regionNodes,
    indexInRegion,
    boundaryStart,
    boundaryNodes,
    isBoundary,
  };
}
