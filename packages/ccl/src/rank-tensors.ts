import { KbError } from "@kb/errors";
import type { DeviceTensor } from "@kb/runtime";
import { DTYPE_BYTES, type Dtype } from "@kb/tensor";
import { COLLECTIVE_DTYPES, type Region } from "./kernel-support.js";

/** A rank's tensors: one device tensor per rank, or one tensor whose first dimension is the rank. */
export type RankTensors = DeviceTensor | readonly DeviceTensor[];

/**
 * Each of `n` ranks' buffer: a list of tensors (one per rank), or one tensor stacked by rank. The
 * dtype must be one the collectives move, and every rank's the same; so must the sizes, unless
 * `sameSize` is false (all-to-all-v). Throws `RUNTIME_INVALID` starting with `what`.
 */
export function rankRegions(what: string, tensors: RankTensors, n: number, sameSize = true): Region[] {
  let regions: Region[];
  if (Array.isArray(tensors)) {
    const list = tensors as readonly DeviceTensor[];
    if (list.length !== n) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${what}: expected one tensor per rank (${n}), got ${list.length}.`,
      );
    }
    regions = list.map((tensor) => ({ address: tensor.address, count: tensor.size, dtype: tensor.dtype }));
  } else {
    const tensor = tensors as DeviceTensor;
    if (n > 1 && tensor.shape[0] !== n) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${what}: ${tensor.describe()} is not one tensor per rank: pass a list of ${n} tensors, or one tensor whose first dimension is the world size (${n}).`,
      );
    }
    const count = tensor.size / n;
    regions = Array.from({ length: n }, (_, r) => ({
      address: tensor.address + r * count * tensor.itemBytes,
      count,
      dtype: tensor.dtype,
    }));
  }
  const first = regions[0] as Region;
  if (!(COLLECTIVE_DTYPES as readonly string[]).includes(first.dtype)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${what}: dtype ${first.dtype} is not supported; the collectives move ${COLLECTIVE_DTYPES.join(", ")}.`,
    );
  }
  for (const [r, region] of regions.entries()) {
    if ((sameSize && region.count !== first.count) || region.dtype !== first.dtype) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${what}: rank ${r} has ${region.count} x ${region.dtype}, rank 0 ${first.count} x ${first.dtype}; every rank needs the same ${sameSize ? "size and dtype" : "dtype"}.`,
      );
    }
  }
  return regions;
}

/** The blocks of an all-to-all: `sends[s][d]` in rank `s`'s memory, `recvs[d][s]` in rank `d`'s. */
export interface AllToAllBlocks {
  readonly sends: Region[][];
  readonly recvs: Region[][];
}

/**
 * The blocks of torch `all_to_all(output_tensor_list, input_tensor_list)` for every rank:
 * `inputs[s][d]` goes to `outputs[d][s]`. Throws `RUNTIME_INVALID` for lists that are not `n x n`,
 * an unsupported or mixed dtype, or a pair of blocks of different sizes, naming the pair.
 */
export function listBlocks(
  outputs: readonly (readonly DeviceTensor[])[],
  inputs: readonly (readonly DeviceTensor[])[],
  n: number,
): AllToAllBlocks {
  for (const [name, lists] of [
    ["outputs", outputs],
    ["inputs", inputs],
  ] as const) {
    if (
      !Array.isArray(lists) ||
      lists.length !== n ||
      lists.some((l) => !Array.isArray(l) || l.length !== n)
    ) {
      throw new KbError(
        "RUNTIME_INVALID",
        `allToAll: ${name} must be ${n} lists (one per rank) of ${n} tensors (one per peer).`,
      );
    }
  }
  const regionOf = (t: DeviceTensor): Region => ({ address: t.address, count: t.size, dtype: t.dtype });
  const sends = inputs.map((list) => list.map(regionOf));
  const recvs = outputs.map((list) => list.map(regionOf));
  checkPairs("allToAll", sends, recvs, "inputs", "outputs");
  return { sends, recvs };
}

/**
 * The blocks of torch `all_to_all_single(output, input, output_split_sizes, input_split_sizes)`
 * for every rank. Without split sizes each rank's tensor is `n` equal blocks (a list of tensors or
 * one stacked by rank). With them (all-to-all-v), `inputSplitSizes[s][d]` rows (first-dimension
 * entries) of rank `s`'s input go to rank `d`, and `outputSplitSizes[d][s]` rows of rank `d`'s
 * output come from rank `s`; one of the two may be left out (it is the other transposed). Throws
 * `RUNTIME_INVALID` saying which rank's sizes do not add up or disagree.
 */
export function singleBlocks(
  output: RankTensors,
  input: RankTensors,
  n: number,
  outputSplitSizes?: readonly (readonly number[])[],
  inputSplitSizes?: readonly (readonly number[])[],
): AllToAllBlocks {
  const what = "allToAllSingle";
  const split = outputSplitSizes !== undefined || inputSplitSizes !== undefined;
  const ins = rankRegions(`${what} input`, input, n, !split);
  const outs = rankRegions(`${what} output`, output, n, !split);
  if (!split) {
    const count = (ins[0] as Region).count;
    if (count !== (outs[0] as Region).count || count % n !== 0) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${what}: each rank's input and output must hold the same number of elements, a multiple of the world size (${n}); got ${count} and ${(outs[0] as Region).count}. Pass split sizes for blocks of different sizes.`,
      );
    }
    const even = Array.from({ length: n }, () => Array.from({ length: n }, () => count / n));
    return { sends: blocksOf(ins, even), recvs: blocksOf(outs, even) };
  }
  if (!Array.isArray(input) || !Array.isArray(output)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${what}: with split sizes, pass input and output as lists of ${n} tensors.`,
    );
  }
  const rows = (list: readonly DeviceTensor[], r: number) => (list[r] as DeviceTensor).shape[0] ?? 1;
  const rowElements = (input[0] as DeviceTensor).size / rows(input, 0);
  for (const [name, list] of [
    ["input", input],
    ["output", output],
  ] as const) {
    for (const [r, tensor] of (list as readonly DeviceTensor[]).entries()) {
      if (tensor.size / rows(list, r) !== rowElements) {
        throw new KbError(
          "RUNTIME_INVALID",
          `${what}: rank ${r}'s ${name} ${tensor.describe()} has rows of ${tensor.size / rows(list, r)} elements, rank 0's input ${rowElements}; split sizes count rows, which must be the same everywhere.`,
        );
      }
    }
  }
  const transpose = (sizes: readonly (readonly number[])[]) =>
    Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => sizes[j]?.[i] as number));
  const inSizes = checkSizes(
    what,
    "inputSplitSizes",
    inputSplitSizes ?? transpose(outputSplitSizes ?? []),
    input,
    n,
  );
  const outSizes = checkSizes(what, "outputSplitSizes", outputSplitSizes ?? transpose(inSizes), output, n);
  const scale = (sizes: number[][]) => sizes.map((row) => row.map((rowsOf) => rowsOf * rowElements));
  const sends = blocksOf(ins, scale(inSizes));
  const recvs = blocksOf(outs, scale(outSizes));
  checkPairs(what, sends, recvs, "inputSplitSizes", "outputSplitSizes");
  return { sends, recvs };
}

/** Split sizes: `n` rows of `n` whole numbers >= 0, rank `r`'s adding up to its tensor's rows. */
function checkSizes(
  what: string,
  name: string,
  sizes: readonly (readonly number[])[],
  tensors: readonly DeviceTensor[],
  n: number,
): number[][] {
  if (!Array.isArray(sizes) || sizes.length !== n) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${what}: ${name} must list ${n} ranks' split sizes, got ${String(sizes?.length)}.`,
    );
  }
  return sizes.map((row, r) => {
    if (!Array.isArray(row) || row.length !== n || row.some((v) => !Number.isInteger(v) || v < 0)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${what}: ${name}[${r}] must be ${n} whole numbers >= 0 (rows per peer), got ${JSON.stringify(row)}.`,
      );
    }
    const total = row.reduce((a, b) => a + b, 0);
    const have = (tensors[r] as DeviceTensor).shape[0] ?? 1;
    if (total !== have) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${what}: ${name}[${r}] adds up to ${total} rows, but rank ${r}'s tensor ${(tensors[r] as DeviceTensor).describe()} has ${have}.`,
      );
    }
    return [...row];
  });
}

/** Each rank's blocks back to back in its region: `counts[r][k]` elements for block `k`. */
function blocksOf(regions: readonly Region[], counts: readonly (readonly number[])[]): Region[][] {
  return regions.map((region, r) => {
    let at = region.address;
    return (counts[r] as readonly number[]).map((count) => {
      const block = { address: at, count, dtype: region.dtype };
      at += count * DTYPE_BYTES[region.dtype];
      return block;
    });
  });
}

/** `sends[s][d]` and `recvs[d][s]` must have one size and a supported dtype, the same everywhere. */
function checkPairs(
  what: string,
  sends: readonly (readonly Region[])[],
  recvs: readonly (readonly Region[])[],
  sendName: string,
  recvName: string,
): void {
  const dtype = sends[0]?.[0]?.dtype as Dtype;
  if (!(COLLECTIVE_DTYPES as readonly string[]).includes(dtype)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${what}: dtype ${dtype} is not supported; the collectives move ${COLLECTIVE_DTYPES.join(", ")}.`,
    );
  }
  for (const [s, row] of sends.entries()) {
    for (const [d, sent] of row.entries()) {
      const got = recvs[d]?.[s] as Region;
      if (sent.count !== got.count || sent.dtype !== dtype || got.dtype !== dtype) {
        throw new KbError(
          "RUNTIME_INVALID",
          `${what}: rank ${s} sends ${sent.count} x ${sent.dtype} to rank ${d} (${sendName}[${s}][${d}]), which expects ${got.count} x ${got.dtype} (${recvName}[${d}][${s}]); they must match.`,
        );
      }
    }
  }
}
