import { type DeviceTensor, defineBench } from "@kb/runtime";
import { DTYPE_BYTES, type Dtype, Tensor } from "@kb/tensor";
import type { TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gemmInputRange, gridOf } from "../../benches/lib/params.js";
import { matmul } from "../../benches/lib/reference.js";

// Triton's tutorial 08 (grouped GEMM), its `grouped_matmul_kernel` written with @kb/tl: one
// launch of NUM_SM programs computes a group of GEMMs of different sizes. The host writes the
// group's description to device tensors, as Triton's does: the matrices' addresses
// (`group_a_ptrs`, `group_b_ptrs`, `group_c_ptrs`), their sizes `<M, N, K>` and leading dimensions
// `<lda, ldb, ldc>`. Each program walks the tiles of every GEMM in turn, taking tiles
// `pid, pid + NUM_SM, ...` of the group's concatenated tile list: it loads the sizes to find where
// each GEMM's tiles start, and for a tile of its own loads the GEMM's leading dimensions and
// pointers, then runs a K loop of tl.dot from those addresses. Loaded values are known in phase 1
// (the host wrote them), so the addresses formed from them are exact when each load is timed, and
// phase 2 replays the same copies.
//
// A pointer is 8 bytes in Triton (an int64 tensor); @kb/tl has no 64-bit integer dtype, so a
// pointer table here is u32 [group_size, 2], the address's low and high words, and the kernel
// forms `lo + hi * 2^32` from the loaded words (loadPointer).

/** The block sizes and grid of {@link groupedMatmulKernel} (Triton's autotuned meta-parameters). */
export interface GroupedGemmConfig {
  /** Programs of the launch ("virtual SMs"): program `p` takes tiles `p, p + NUM_SM, ...`. */
  readonly NUM_SM: number;
  readonly BLOCK_SIZE_M: number;
  readonly BLOCK_SIZE_N: number;
  readonly BLOCK_SIZE_K: number;
}

/** The `count` integers of dtype `dtype` at `ptr` (Triton's scalar `tl.load(ptr + i)`), loaded in one copy. */
async function loadScalars(
  tl: TL,
  ptr: number | DeviceTensor,
  count: number,
  dtype: Dtype,
): Promise<number[]> {
  const tile = await tl.load(ptr, [count], dtype);
  return Array.from(tile.data.toFloat64Array());
}

/** Entry `g` of a pointer table (u32 `[group_size, 2]`: low word, high word): a device address. */
async function loadPointer(tl: TL, table: DeviceTensor, g: number): Promise<number> {
  const [lo, hi] = (await loadScalars(tl, table.at(g, 0), 2, "u32")) as [number, number];
  return lo + hi * 2 ** 32;
}

/**
 * `C_g = A_g @ B_g` for every GEMM `g` of the group: `A_g` `[M, K]`, `B_g` `[K, N]`, `C_g` `[M, N]`
 * of dtype `dtype` at the addresses of the pointer tables, rows `lda`, `ldb`, `ldc` elements apart,
 * sizes from `group_gemm_sizes` (i32 `[group_size, 3]`: M, N, K) and `g_lds` (i32
 * `[group_size, 3]`). Every size is a multiple of its block (Triton's kernel assumes full tiles).
 */
export async function groupedMatmulKernel(
  tl: TL,
  group_a_ptrs: DeviceTensor,
  group_b_ptrs: DeviceTensor,
  group_c_ptrs: DeviceTensor,
  group_gemm_sizes: DeviceTensor,
  g_lds: DeviceTensor,
  group_size: number,
  dtype: Dtype,
  config: GroupedGemmConfig,
): Promise<void> {
  const { NUM_SM, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K } = config;
  const bytes = DTYPE_BYTES[dtype];
  let tile_idx = tl.programId(0);
  let last_problem_end = 0;
  for (let g = 0; g < group_size; g++) {
    // The GEMM's size: gm, gn, gk = tl.load(group_gemm_sizes + g * 3 + 0, 1, 2).
    const [gm, gn, gk] = (await loadScalars(tl, group_gemm_sizes.at(g, 0), 3, "i32")) as [
      number,
      number,
      number,
    ];
    const num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M);
    const num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N);
    const num_tiles = num_m_tiles * num_n_tiles;
    // The tiles of this GEMM that are this program's.
    while (tile_idx >= last_problem_end && tile_idx < last_problem_end + num_tiles) {
      const mark = tl.scratchMark();
      const k = gk;
      const [lda, ldb, ldc] = (await loadScalars(tl, g_lds.at(g, 0), 3, "i32")) as [number, number, number];
      const a_ptr = await loadPointer(tl, group_a_ptrs, g);
      const b_ptr = await loadPointer(tl, group_b_ptrs, g);
      const c_ptr = await loadPointer(tl, group_c_ptrs, g);
      // The tile's coordinates in this GEMM.
      const tile_idx_in_gemm = tile_idx - last_problem_end;
      const tile_m_idx = Math.floor(tile_idx_in_gemm / num_n_tiles);
      const tile_n_idx = tile_idx_in_gemm % num_n_tiles;
      const m0 = tile_m_idx * BLOCK_SIZE_M;
      const n0 = tile_n_idx * BLOCK_SIZE_N;
      // a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]: a block at a byte address.
      let accumulator = tl.zeros([BLOCK_SIZE_M, BLOCK_SIZE_N], "f32");
      for (let kk = 0; kk < tl.cdiv(k, BLOCK_SIZE_K); kk++) {
        const step = tl.scratchMark();
        const k0 = kk * BLOCK_SIZE_K;
        const a = await tl.load(a_ptr + (m0 * lda + k0) * bytes, [BLOCK_SIZE_M, BLOCK_SIZE_K], dtype, {
          stride: lda,
        });
        const b = await tl.load(b_ptr + (k0 * ldb + n0) * bytes, [BLOCK_SIZE_K, BLOCK_SIZE_N], dtype, {
          stride: ldb,
        });
        accumulator = await tl.dot(a, b, accumulator);
        tl.scratchRelease(step);
      }
      const c = dtype === "f32" ? accumulator : await tl.cast(accumulator, dtype);
      await tl.store(c_ptr + (m0 * ldc + n0) * bytes, c, { stride: ldc });
      // Go to the next tile by advancing NUM_SM.
      tile_idx += NUM_SM;
      tl.scratchRelease(mark);
    }
    // Get ready to go to the next GEMM.
    last_problem_end += num_tiles;
  }
}

/** One GEMM of the group: `[M, K] @ [K, N]`. */
export interface GemmSize {
  readonly M: number;
  readonly N: number;
  readonly K: number;
}

/** `"1024x1024x1024,512x512x512"` (M x N x K per GEMM) as sizes. */
export function parseGroupSizes(text: string): GemmSize[] {
  return text.split(",").map((item) => {
    const [M, N, K] = item.split("x").map(Number) as [number, number, number];
    return { M, N, K };
  });
}

/** The tiles of the whole group: the programs' shared work list. */
export function groupTiles(sizes: readonly GemmSize[], config: GroupedGemmConfig): number {
  return sizes.reduce(
    (sum, { M, N }) => sum + Math.ceil(M / config.BLOCK_SIZE_M) * Math.ceil(N / config.BLOCK_SIZE_N),
    0,
  );
}

/** A u32 `[n, 2]` pointer table (low and high words of each address). */
function pointerTable(addresses: readonly number[]): Tensor {
  const words = addresses.flatMap((address) => [address % 2 ** 32, Math.floor(address / 2 ** 32)]);
  return Tensor.fromArray(words, [addresses.length, 2], "u32");
}

/**
 * Tutorial 08: a group of GEMMs of different sizes in one launch of NUM_SM programs (default: the
 * grid's PEs), the group described by device tensors of pointers, sizes and leading dimensions.
 */
export default defineBench({
  name: "triton-08-grouped-gemm",
  description:
    "Triton tutorial 08: a group of GEMMs C_g = A_g @ B_g of different sizes in one launch, NUM_SM programs (the grid's PEs by default) each taking every NUM_SM-th tile of the group's tiles; the group's pointers, sizes and leading dimensions are device tensors the kernel loads (A_g, B_g, C_g and the tables in the HBM of the grid's first cube).",
  params: z
    .object({
      sizes: z
        .string()
        .regex(
          /^\d+x\d+x\d+(,\d+x\d+x\d+)*$/,
          "M x N x K per GEMM, comma separated: 1024x1024x1024,512x512x512",
        )
        .default("1024x1024x1024,512x512x512,256x256x256,128x128x128")
        .describe(
          "The GEMMs of the group, M x N x K each, comma separated (Triton's: 1024, 512, 256, 128 cubed).",
        ),
      BLOCK_SIZE_M: z.number().int().positive().default(128).describe("Rows of a tile of C."),
      BLOCK_SIZE_N: z.number().int().positive().default(128).describe("Columns of a tile of C."),
      BLOCK_SIZE_K: z
        .number()
        .int()
        .positive()
        .default(32)
        .describe("Columns of A and rows of B per K step."),
      NUM_SM: z
        .number()
        .int()
        .positive()
        .optional()
        .describe("Programs of the launch (Triton's virtual SMs; default: the grid's PEs)."),
      ...commonParams,
    })
    .superRefine((p, context) => {
      // Triton's kernel assumes full tiles: every size a whole number of blocks.
      for (const [g, { M, N, K }] of parseGroupSizes(p.sizes).entries()) {
        if (M % p.BLOCK_SIZE_M === 0 && N % p.BLOCK_SIZE_N === 0 && K % p.BLOCK_SIZE_K === 0 && M * N * K > 0)
          continue;
        context.addIssue({
          code: "custom",
          path: ["sizes"],
          message: `GEMM ${g} (${M}x${N}x${K}) must be a whole number of ${p.BLOCK_SIZE_M}x${p.BLOCK_SIZE_N}x${p.BLOCK_SIZE_K} blocks, as Triton's grouped kernel assumes full tiles: round the size up to the blocks, or pass smaller BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K.`,
        });
      }
    }),
  async run(sim, p) {
    const dtype: Dtype = p.dtype;
    const sizes = parseGroupSizes(p.sizes);
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const inputs = sizes.map(({ M, N, K }, g) => {
      const range = gemmInputRange(K);
      return {
        a: sim.random([M, K], dtype, { seed: p.seed + 2 * g, low: -range, high: range }),
        b: sim.random([K, N], dtype, { seed: p.seed + 2 * g + 1, low: -range, high: range }),
      };
    });
    const A: DeviceTensor[] = [];
    const B: DeviceTensor[] = [];
    const C: DeviceTensor[] = [];
    for (const [g, { a, b }] of inputs.entries()) {
      A.push(await sim.toDevice(a, { ...where, name: `A${g}` }));
      B.push(await sim.toDevice(b, { ...where, name: `B${g}` }));
      C.push(sim.empty([a.shape[0] as number, b.shape[1] as number], dtype, { ...where, name: `C${g}` }));
    }
    const table = (name: string, tensor: Tensor) => sim.toDevice(tensor, { ...where, name });
    const d_a_ptrs = await table("group_a_ptrs", pointerTable(A.map((t) => t.address)));
    const d_b_ptrs = await table("group_b_ptrs", pointerTable(B.map((t) => t.address)));
    const d_c_ptrs = await table("group_c_ptrs", pointerTable(C.map((t) => t.address)));
    const g_sizes = sizes.flatMap(({ M, N, K }) => [M, N, K]);
    const g_lds = sizes.flatMap(({ N, K }) => [K, N, N]); // row-major: A.stride(0), B.stride(0), C.stride(0)
    const d_g_sizes = await table("group_gemm_sizes", Tensor.fromArray(g_sizes, [sizes.length, 3], "i32"));
    const d_g_lds = await table("g_lds", Tensor.fromArray(g_lds, [sizes.length, 3], "i32"));
    const blocks = {
      BLOCK_SIZE_M: p.BLOCK_SIZE_M,
      BLOCK_SIZE_N: p.BLOCK_SIZE_N,
      BLOCK_SIZE_K: p.BLOCK_SIZE_K,
    };
    const config: GroupedGemmConfig = { NUM_SM: p.NUM_SM ?? grid.size, ...blocks };
    await sim.launch(groupedMatmulKernel, {
      grid,
      programs: [config.NUM_SM],
      args: [d_a_ptrs, d_b_ptrs, d_c_ptrs, d_g_sizes, d_g_lds, sizes.length, dtype, config],
      name: "grouped_matmul_kernel",
    });
    const check = Object.fromEntries(
      inputs.map(({ a, b }, g) => [
        `C${g}`,
        { actual: C[g] as DeviceTensor, reference: () => matmul(a, b, dtype) },
      ]),
    );
    return { check };
  },
});
