import {
  type AllGatherArgs,
  type AllReduceArgs,
  initProcessGroup,
  type ProcessGroup,
  type ReduceScatterArgs,
  type Region,
  ringPerCube,
} from "@kb/ccl";
import { KbError } from "@kb/errors";
import type { DeviceTensor, Grid, LaunchRecord, Simulator } from "@kb/runtime";
import type { TL } from "@kb/tl";

// The all-reduce of a tensor-parallel group that spans the cubes of several SIPs, in two levels
// (as NCCL's hierarchical all-reduce): a reduce-scatter around each SIP's cube ring, an
// all-reduce of each segment between the corresponding cubes of every SIP (their SIP ring), an
// all-gather around each SIP's cube ring. Each level is one launch on every PE of the group,
// running @kb/ccl's algorithm kernels (chosen by its ccl.yaml rules for the level's message size):
// a SIP's cubes are the ranks of the cube-ring levels, each cube index's SIPs those of the middle
// one, so every level's rings run side by side in one launch.

/** One launch of an all-reduce: its name in the layer's table and its record. */
export interface ReduceLaunch {
  readonly name: string;
  readonly record: LaunchRecord;
}

/** Sums the ranks' tensors in place (rank order = the grid's SIPs outer, cubes inner). */
export type TpAllReduce = (name: string, tensors: readonly DeviceTensor[]) => Promise<ReduceLaunch[]>;

/** The all-reduce of a group of one process group's ranks: one @kb/ccl collective launch. */
export function flatAllReduce(group: ProcessGroup): TpAllReduce {
  return async (name, tensors) => {
    const result = await group.allReduce([...tensors], "sum");
    return [{ name, record: result.launch }];
  };
}

const regionOf = (t: DeviceTensor): Region => ({ address: t.address, count: t.size, dtype: t.dtype });

/**
 * The two-level all-reduce over every cube of `sips` SIPs (`grid`: SIPs `0..sips-1`, cubes
 * `0..cubes-1`). Each rank needs a scratch segment of `1 / cubes` of the tensor; they are made
 * (f32, in the rank's HBM) on the first call for a size and reused. Throws `RUNTIME_INVALID` when
 * the tensor's elements are not a multiple of the cubes per SIP.
 */
export function hierarchicalAllReduce(sim: Simulator, grid: Grid): TpAllReduce {
  const sips = grid.sips.length;
  const cubes = grid.cubes.length;
  const cubeRing = initProcessGroup(sim, {
    backend: "ahbm",
    scope: "cubes",
    sip: 0,
    cclConfig: { defaults: { worldSize: cubes } },
  });
  const sipRing = initProcessGroup(sim, {
    backend: "ahbm",
    scope: "sips",
    cube: 0,
    cclConfig: { defaults: { worldSize: sips } },
  });
  const common = {
    slotBytes: Math.min(cubeRing.slotBytes, sipRing.slotBytes),
    queueSlots: cubeRing.queueSlots,
  };
  const segments = new Map<string, DeviceTensor[]>();
  const segmentsOf = (tensors: readonly DeviceTensor[]) => {
    const first = tensors[0] as DeviceTensor;
    const key = `${first.size} ${first.dtype}`;
    let found = segments.get(key);
    if (found === undefined) {
      found = tensors.map((_t, r) =>
        sim.empty([first.size / cubes], first.dtype, {
          sip: grid.sips[Math.floor(r / cubes)] as number,
          cube: grid.cubes[r % cubes] as number,
          name: `tp_segment.r${r}`,
        }),
      );
      segments.set(key, found);
    }
    return found;
  };
  return async (name, tensors) => {
    const first = tensors[0] as DeviceTensor;
    if (tensors.length !== sips * cubes || first.size % cubes !== 0) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-layer: the two-level all-reduce over ${sips} SIPs x ${cubes} cubes needs ${sips * cubes} tensors whose elements are a multiple of ${cubes}; got ${tensors.length} of ${first.size}.`,
      );
    }
    const bytes = first.nbytes;
    const seg = segmentsOf(tensors);
    const inSip = (s: number, list: readonly DeviceTensor[]) =>
      list.slice(s * cubes, (s + 1) * cubes).map(regionOf);
    const sipIndices = Array.from({ length: sips }, (_, s) => s);
    const cubeIndices = Array.from({ length: cubes }, (_, c) => c);

    const scatter = cubeRing.algorithmFor("reduceScatter", bytes);
    const scatterArgs: ReduceScatterArgs[] = sipIndices.map((s) => ({
      group: cubeRing.group,
      buffers: inSip(s, tensors),
      outputs: inSip(s, seg),
      op: "sum",
      ...common,
    }));
    const across = sipRing.algorithmFor("allReduce", bytes / cubes);
    const acrossArgs: AllReduceArgs[] = cubeIndices.map((c) => ({
      // One SIP ring per cube index, each with its own segments: a PE is a lane of its cube.
      group: ringPerCube(sipRing.group),
      buffers: sipIndices.map((s) => regionOf(seg[s * cubes + c] as DeviceTensor)),
      op: "sum",
      ...common,
    }));
    const gather = cubeRing.algorithmFor("allGather", bytes);
    const gatherArgs: AllGatherArgs[] = sipIndices.map((s) => ({
      group: cubeRing.group,
      buffers: inSip(s, tensors),
      inputs: inSip(s, seg),
      ...common,
    }));
    const launches: ReduceLaunch[] = [];
    const run = async <A>(level: string, fn: (tl: TL, args: readonly A[]) => Promise<void>, args: A[]) => {
      const record = await sim.launch(fn as never, { grid, args: [args] as never, name: `${name} ${level}` });
      launches.push({ name: `${name}: ${level}`, record });
    };
    await run(
      `reduce-scatter (${scatter.name}, cubes)`,
      (tl, a) => scatter.kernel(tl, a[tl.programId(2)]!),
      scatterArgs,
    );
    await run(
      `all-reduce (${across.name}, SIPs)`,
      (tl, a) => across.kernel(tl, a[tl.programId(1)]!),
      acrossArgs,
    );
    await run(
      `all-gather (${gather.name}, cubes)`,
      (tl, a) => gather.kernel(tl, a[tl.programId(2)]!),
      gatherArgs,
    );
    return launches;
  };
}
