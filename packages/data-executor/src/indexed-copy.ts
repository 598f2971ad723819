import type { MemoryOpRecord } from "@kb/oplog";
import type { MemoryStore } from "./memory-store.js";

// Phase 2 of a gather or scatter (`index_runs`): the op log's runs copied in order. @internal

/**
 * Copies a `dma_read` / `dma_write` record's `index_runs` (`[srcOffset, dstOffset, bytes, ...]`
 * from `src_addr` / `dst_addr`) in order, after filling the destination tile (`nbytes`) with
 * `mask_fill` when there is one (a gather's `other`). A later run over the same bytes wins, as in
 * phase 1.
 */
export function indexedCopy(
  store: MemoryStore,
  params: MemoryOpRecord["params"],
  runs: readonly number[],
): void {
  const { src_addr, dst_addr, nbytes, mask_fill } = params;
  if (mask_fill !== undefined && mask_fill.length > 0) {
    const tile = new Uint8Array(nbytes);
    for (let i = 0; i < nbytes; i++) tile[i] = mask_fill[i % mask_fill.length] as number;
    store.write(dst_addr, tile);
  }
  for (let i = 0; i + 2 < runs.length; i += 3)
    store.copy(src_addr + (runs[i] as number), dst_addr + (runs[i + 1] as number), runs[i + 2] as number);
}

/**
 * The spans an indexed copy reads and writes: from its lowest run to the end of its highest on
 * each side (the whole destination tile too with `mask_fill`); conservative, as strided copies.
 */
export function indexedSpans(
  params: MemoryOpRecord["params"],
  runs: readonly number[],
): { src: [number, number]; dst: [number, number] } {
  const fill = params.mask_fill !== undefined;
  const src: [number, number] = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
  const dst: [number, number] = fill ? [params.dst_addr, params.dst_addr + params.nbytes] : [...src];
  for (let i = 0; i + 2 < runs.length; i += 3) {
    const bytes = runs[i + 2] as number;
    const from = params.src_addr + (runs[i] as number);
    const to = params.dst_addr + (runs[i + 1] as number);
    src[0] = Math.min(src[0], from);
    src[1] = Math.max(src[1], from + bytes);
    dst[0] = Math.min(dst[0], to);
    dst[1] = Math.max(dst[1], to + bytes);
  }
  return { src, dst };
}
