import type { TopologyEdge } from "./graph.js";
import type { RegionPartition } from "./region-partition.js";
import { Router, type RoutingInput } from "./route.js";
import type { RoutingArrays } from "./routing-arrays.js";

/**
 * A Router over the nodes of some regions (a corridor of the region router, region-router.ts),
 * and where each global node sits in it. @internal
 */
export interface Corridor {
  readonly router: Router;
  /** First local node number of each region of the corridor. */
  readonly base: Map<number, number>;
  /** Its number of nodes. */
  readonly nodes: number;
}

/**
 * A Router over the nodes of `regions` (ascending) and the edges between them, in edge order:
 * the regions' nodes one region after the other, each region's in its order. @internal
 */
export function buildCorridor(
  input: RoutingInput,
  arrays: Pick<RoutingArrays, "outStart" | "outList">,
  partition: RegionPartition,
  regions: readonly number[],
): Corridor {
  const { ids, edges, edgeSrc, edgeDst, firstFlitNs, forwards, kindSize, direction } = input;
  const { region, regionStart, regionNodes, indexInRegion } = partition;
  const { outStart, outList } = arrays;
  const base = new Map<number, number>();
  let nodeCount = 0;
  for (const r of regions) {
    base.set(r, nodeCount);
    nodeCount += (regionStart[r + 1] as number) - (regionStart[r] as number);
  }
  const localIds = new Array<string>(nodeCount);
  const localFirstFlit = new Float64Array(nodeCount);
  const localForwards = new Uint8Array(nodeCount);
  const localKindSize = new Int32Array(nodeCount);
  const edgeNumbers: number[] = [];
  let local = 0;
  for (const r of regions) {
    const end = regionStart[r + 1] as number;
    for (let k = regionStart[r] as number; k < end; k++, local++) {
      const node = regionNodes[k] as number;
      localIds[local] = ids[node] as string;
      localFirstFlit[local] = firstFlitNs[node] as number;
      localForwards[local] = forwards[node] as number;
      localKindSize[local] = kindSize[node] as number;
      const last = outStart[node + 1] as number;
      for (let j = outStart[node] as number; j < last; j++) {
        const edge = outList[j] as number;
        const far = region[edgeDst[edge] as number] as number;
        if (far === r || base.has(far)) edgeNumbers.push(edge);
      }
    }
  }
  // Edge order decides between parallel edges of equal latency: keep the graph's.
  const sorted = Float64Array.from(edgeNumbers).sort();
  const edgeCount = sorted.length;
  const localEdges = new Array<TopologyEdge>(edgeCount);
  const localSrc = new Int32Array(edgeCount);
  const localDst = new Int32Array(edgeCount);
  for (let e = 0; e < edgeCount; e++) {
    const edge = sorted[e] as number;
    const src = edgeSrc[edge] as number;
    const dst = edgeDst[edge] as number;
    localEdges[e] = edges[edge] as TopologyEdge;
    localSrc[e] = (base.get(region[src] as number) as number) + (indexInRegion[src] as number);
    localDst[e] = (base.get(region[dst] as number) as number) + (indexInRegion[dst] as number);
  }
  const router = new Router({
    ids: localIds,
    edges: localEdges,
    edgeSrc: localSrc,
    edgeDst: localDst,
    firstFlitNs: localFirstFlit,
    forwards: localForwards,
    kindSize: localKindSize,
    ...(direction === undefined ? {} : { direction }),
  });
  return { router, base, nodes: nodeCount };
}
