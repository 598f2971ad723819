import { type DeviceTensor, defineBench } from "@kb/runtime";
import { type Dtype, Tensor } from "@kb/tensor";
import type { ScaledFormat, TL } from "@kb/tl";
import * as z from "zod";
import { commonParams, firstCube, gemmInputRange, gridOf } from "../../benches/lib/params.js";
import { matmul } from "../../benches/lib/reference.js";

// Triton's tutorial 10 (block scaled matrix multiplication), its `block_scaled_matmul_kernel`
// written with @kb/tl: one program per [BLOCK_M, BLOCK_N] block of C (`pid_m = pid % num_pid_m`,
// `pid_n = pid // num_pid_m`), a K loop that loads a block of A [BLOCK_M, BLOCK_K], a block of B
// stored [N, K] ([BLOCK_N, BLOCK_K], used as b.T) and their scales (one per VEC_SIZE elements
// along K), and accumulates `tl.dotScaled(a, scale_a, fmt, b.T, scale_b, fmt, acc)` in f32; C is
// stored in the bench's dtype. `format` picks nvfp4 (e2m1 elements, f8e4m3 scales per 16: Triton's
// default), mxfp8 (e4m3 elements), mxfp4 (e2m1 elements), both with e8m0 scales per 32, or mixed
// (A e4m3, B e2m1: Triton's `MIXED_PREC` branch, `tl.dot_scaled(a, scale_a, "e4m3", b.T,
// scale_b, "e2m1", accumulator)`).
//
// Differences from Triton's file: the scales are plain row-major [M, K/VEC_SIZE] and
// [N, K/VEC_SIZE] tensors (Triton preshuffles them into a 5-D layout for the tensor memory of
// sm_100), and f4e2m1 elements are one per byte (Triton packs two per uint8).
// Triton's kernel picks the formats from ELEM_PER_BYTE_A / _B; here the config names them.

/** An operand's element format: its dtype, `tl.dotScaled` name and the range of its random values. */
interface OperandFormat {
  readonly dtype: Dtype;
  readonly name: ScaledFormat;
  readonly elementRange: number;
}

const E4M3 = { dtype: "f8e4m3", name: "e4m3", elementRange: 4 } as const satisfies OperandFormat;
const E2M1 = { dtype: "f4e2m1", name: "e2m1", elementRange: 6 } as const satisfies OperandFormat;

/** Elements along K per e8m0 scale (Triton's VEC_SIZE for the mx formats). */
export const VEC_SIZE = 32;

/** Elements along K per f8e4m3 scale (Triton's VEC_SIZE for nvfp4). */
export const NV_VEC_SIZE = 16;

/** The block-scaled formats of the tutorial: A's and B's element formats, elements per scale. */
export const FORMATS = {
  nvfp4: { a: E2M1, b: E2M1, vecSize: NV_VEC_SIZE },
  mxfp8: { a: E4M3, b: E4M3, vecSize: VEC_SIZE },
  mxfp4: { a: E2M1, b: E2M1, vecSize: VEC_SIZE },
  mixed: { a: E4M3, b: E2M1, vecSize: VEC_SIZE },
} as const satisfies Record<string, { a: OperandFormat; b: OperandFormat; vecSize: number }>;

/** The block sizes and formats of {@link blockScaledMatmulKernel} (Triton's meta-parameters). */
export interface BlockScaledConfig {
  readonly BLOCK_M: number;
  readonly BLOCK_N: number;
  readonly BLOCK_K: number;
  /** A's element format (`"e4m3"` or `"e2m1"`). */
  readonly aFormat: ScaledFormat;
  /** B's element format: the same as A's, or `"e2m1"` under `"e4m3"` (Triton's mixed case). */
  readonly bFormat: ScaledFormat;
  /** Elements along K per scale: 32 (e8m0, mx formats) or 16 (f8e4m3, nvfp4). */
  readonly VEC_SIZE: number;
}

/**
 * `C = (A * scale_a) @ (B * scale_b)^T` for A `[M, K]`, B `[N, K]` (both in the format's
 * elements), scale_a `[M, K / VEC_SIZE]`, scale_b `[N, K / VEC_SIZE]` (e8m0 bytes, or f8e4m3
 * values for nvfp4) and C `[M, N]`, all
 * row-major in device memory: program `pid` computes the block of C at row block
 * `pid % cdiv(M, BLOCK_M)`, column block `pid // cdiv(M, BLOCK_M)` (edge blocks are smaller).
 */
export async function blockScaledMatmulKernel(
  tl: TL,
  a_desc: DeviceTensor,
  a_scale: DeviceTensor,
  b_desc: DeviceTensor,
  b_scale: DeviceTensor,
  c_desc: DeviceTensor,
  config: BlockScaledConfig,
): Promise<void> {
  const { BLOCK_M, BLOCK_N, BLOCK_K, aFormat, bFormat, VEC_SIZE } = config;
  const [M, K] = a_desc.shape as [number, number];
  const N = b_desc.shape[0] as number;
  const stride_sc = K / VEC_SIZE;
  const pid = tl.programId(0);
  const num_pid_m = tl.cdiv(M, BLOCK_M);
  const pid_m = pid % num_pid_m;
  const pid_n = Math.floor(pid / num_pid_m);
  const offs_am = pid_m * BLOCK_M;
  const offs_bn = pid_n * BLOCK_N;
  const m = Math.min(BLOCK_M, M - offs_am);
  const n = Math.min(BLOCK_N, N - offs_bn);
  let accumulator = tl.zeros([m, n], "f32");
  for (let k = 0; k < tl.cdiv(K, BLOCK_K); k++) {
    const mark = tl.scratchMark();
    const offs_k = k * BLOCK_K;
    const kb = Math.min(BLOCK_K, K - offs_k);
    const a = await tl.load(a_desc.at(offs_am, offs_k), [m, kb], a_desc.dtype, { stride: K });
    const b = await tl.load(b_desc.at(offs_bn, offs_k), [n, kb], b_desc.dtype, { stride: K });
    const offs_sk = offs_k / VEC_SIZE;
    const scale_a = await tl.load(a_scale.at(offs_am, offs_sk), [m, kb / VEC_SIZE], a_scale.dtype, {
      stride: stride_sc,
    });
    const scale_b = await tl.load(b_scale.at(offs_bn, offs_sk), [n, kb / VEC_SIZE], b_scale.dtype, {
      stride: stride_sc,
    });
    accumulator = await tl.dotScaled(a, scale_a, aFormat, tl.trans(b), scale_b, bFormat, accumulator);
    tl.scratchRelease(mark);
  }
  const out = c_desc.dtype === "f32" ? accumulator : await tl.cast(accumulator, c_desc.dtype);
  await tl.store(c_desc.at(offs_am, offs_bn), out, { stride: N });
}

/**
 * Random e8m0 scale bytes `[rows, K / 32]` around `2^center` (bytes `127 + center - 1` to
 * `127 + center + 1`, from `seed`), in an i8 tensor (the bytes Triton keeps in a uint8 tensor).
 */
export function randomScales(rows: number, blocks: number, center: number, seed: number): Tensor {
  const offsets = Tensor.random([rows * blocks], "i32", { seed, low: -1, high: 1 }).toFloat64Array();
  const bytes = Uint8Array.from(offsets, (offset) => 127 + center + offset);
  return new Tensor([rows, blocks], "i8", bytes);
}

/**
 * Random f8e4m3 scales `[rows, K / 16]` (nvfp4's) between `2^center / 2` and `2^center * 1.5`
 * (from `seed`): Triton's `torch.rand(...).to(torch.float8_e4m3fn)`, centred as the e8m0 ones.
 */
export function randomNvScales(rows: number, blocks: number, center: number, seed: number): Tensor {
  return Tensor.random([rows, blocks], "f8e4m3", { seed, low: 2 ** center / 2, high: 2 ** center * 1.5 });
}

/**
 * `values` `[rows, K]` times their block scales `[rows, K / vecSize]`, in f32 (exact): e8m0 bytes
 * (`2^(byte - 127)`) in a 1-byte integer tensor, or f8e4m3 values (nvfp4).
 */
export function applyScales(values: Tensor, scales: Tensor, vecSize = VEC_SIZE): Tensor {
  const [rows, k] = values.shape as [number, number];
  const blocks = k / vecSize;
  const decoded = values.toFloat64Array();
  const nv = scales.dtype === "f8e4m3" ? scales.toFloat64Array() : null;
  for (let i = 0; i < decoded.length; i++) {
    const at = Math.floor(i / k) * blocks + Math.floor((i % k) / vecSize);
    const scale = nv !== null ? (nv[at] as number) : 2 ** ((scales.bytes[at] as number) - 127);
    decoded[i] = (decoded[i] as number) * scale;
  }
  return Tensor.fromArray(decoded, [rows, k], "f32");
}

/** `x` `[rows, cols]` transposed, in f32. */
function transposed(x: Tensor): Tensor {
  const [rows, cols] = x.shape as [number, number];
  const values = x.toFloat64Array();
  const out = new Float64Array(values.length);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c] as number;
  return Tensor.fromArray(out, [cols, rows], "f32");
}

/**
 * Tutorial 10: `C = (A * scale_a) @ (B * scale_b)^T` in nvfp4, mxfp8, mxfp4 or mixed on a grid of
 * `cdiv(M, BLOCK_M) x cdiv(N, BLOCK_N)` programs, with A, B, the scales and C in the HBM of the
 * grid's first cube. Elements are random in the format's range and the scales centred so that C
 * has about unit variance (as benches/lib's gemmInputRange).
 */
export default defineBench({
  name: "triton-10-block-scaled-matmul",
  description:
    "Triton tutorial 10: C = (A * scale_a) @ (B * scale_b)^T in nvfp4 (e2m1, f8e4m3 scales per 16 elements along K), mxfp8 (e4m3), mxfp4 (e2m1) or mixed (A e4m3, B e2m1) with e8m0 scales per 32 elements along K, one program per [BLOCK_M, BLOCK_N] block of C, a K loop of tl.dotScaled accumulating in f32 (A, B [N, K], the scales and C in the HBM of the grid's first cube).",
  params: z.object({
    M: z.number().int().positive().default(512).describe("Rows of A and C."),
    N: z.number().int().positive().default(512).describe("Rows of B, columns of C."),
    K: z
      .number()
      .int()
      .positive()
      .multipleOf(VEC_SIZE)
      .default(1024)
      .describe("Columns of A and B (a multiple of 32: one scale per 32 elements)."),
    format: z
      .enum(["mxfp8", "mxfp4", "mixed", "nvfp4"])
      .default("mxfp8")
      .describe(
        "Element formats: mxfp8 (e4m3), mxfp4 (e2m1), mixed (A e4m3, B e2m1), all with e8m0 scales per 32, or nvfp4 (e2m1, f8e4m3 scales per 16).",
      ),
    BLOCK_M: z.number().int().positive().default(128).describe("Rows of a block of C (one program)."),
    BLOCK_N: z.number().int().positive().default(128).describe("Columns of a block of C."),
    BLOCK_K: z
      .number()
      .int()
      .positive()
      .multipleOf(VEC_SIZE)
      .default(128)
      .describe("Columns of A and B per K step (a multiple of 32)."),
    ...commonParams,
  }),
  async run(sim, p) {
    const grid = gridOf(sim, p);
    const where = firstCube(grid);
    const format = FORMATS[p.format];
    const blocks = p.K / format.vecSize;
    const rangeOf = (f: OperandFormat) => ({ low: -f.elementRange, high: f.elementRange });
    const a = sim.random([p.M, p.K], format.a.dtype, { seed: p.seed, ...rangeOf(format.a) });
    const b = sim.random([p.N, p.K], format.b.dtype, { seed: p.seed + 1, ...rangeOf(format.b) });
    // Scales around gemmInputRange(K) / elementRange: C's entries have about unit variance.
    const centerOf = (f: OperandFormat) => Math.round(Math.log2(gemmInputRange(p.K) / f.elementRange));
    const scalesOf = format.vecSize === NV_VEC_SIZE ? randomNvScales : randomScales;
    const sa = scalesOf(p.M, blocks, centerOf(format.a), p.seed + 2);
    const sb = scalesOf(p.N, blocks, centerOf(format.b), p.seed + 3);
    const A = await sim.toDevice(a, { ...where, name: "A" });
    const B = await sim.toDevice(b, { ...where, name: "B" });
    const SA = await sim.toDevice(sa, { ...where, name: "scale_a" });
    const SB = await sim.toDevice(sb, { ...where, name: "scale_b" });
    const C = sim.empty([p.M, p.N], p.dtype, { ...where, name: "C" });
    const config: BlockScaledConfig = {
      BLOCK_M: p.BLOCK_M,
      BLOCK_N: p.BLOCK_N,
      BLOCK_K: p.BLOCK_K,
      aFormat: format.a.name,
      bFormat: format.b.name,
      VEC_SIZE: format.vecSize,
    };
    await sim.launch(blockScaledMatmulKernel, {
      grid,
      programs: [Math.ceil(p.M / p.BLOCK_M) * Math.ceil(p.N / p.BLOCK_N)],
      args: [A, SA, B, SB, C, config],
      name: "block_scaled_matmul_kernel",
    });
    return {
      check: {
        C: {
          actual: C,
          reference: (context) =>
            matmul(
              applyScales(a, sa, format.vecSize),
              transposed(applyScales(b, sb, format.vecSize)),
              p.dtype,
              context?.progress,
            ),
        },
      },
    };
  },
});
