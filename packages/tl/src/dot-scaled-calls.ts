import { scaleBlockOf } from "@kb/spec";
import { DTYPE_BYTES, type Dtype, formatShape, isFloatDtype } from "@kb/tensor";
import { runDot } from "./compute.js";
import type { TLContext } from "./context.js";
import { type TensorHandle, TensorHandle as TensorHandleClass } from "./handles.js";
import type { DotOptions } from "./options.js";
import { checkOwned } from "./validate.js";

// Triton's `tl.dot_scaled` as `tl.dotScaled`: a GEMM of fp8 or fp4 operands with e8m0 block
// scales (the OCP microscaling formats mxfp8 and mxfp4), one PE_GEMM command carrying the scales'
// TCM addresses, timed at the operands' rate plus one streamed step per block of 32 along K
// (docs/latency-model.md, "Scaled GEMM"); phase 2 applies the scales before its f32 GEMM. The two
// operands may be of different narrow formats (Triton tutorial 10's "mixed": e4m3 x e2m1): the
// command names B's dtype, and PE_GEMM streams at the slower of the two rates. nvfp4 (tutorial 10's
// default): e2m1 elements with f8e4m3 scales, one per 16 along K, named in the command
// (`scaleDtype`), one streamed step per block of 16.

/** An operand format of `tl.dotScaled`, as Triton names it. */
export type ScaledFormat = "e4m3" | "e5m2" | "e2m1" | "bf16" | "fp16";

/** The dtype of each {@link ScaledFormat}'s elements. */
export const SCALED_FORMAT_DTYPES: Readonly<Record<ScaledFormat, Dtype>> = Object.freeze({
  e4m3: "f8e4m3",
  e5m2: "f8e5m2",
  e2m1: "f4e2m1",
  bf16: "bf16",
  fp16: "f16",
});

/** Options of `tl.dotScaled`: the accumulator (Triton's `acc`) and `outDtype` (f32, Triton's default). */
export interface DotScaledOptions {
  acc?: TensorHandle;
  outDtype?: Dtype;
}

/** `tl.dotScaled` (installed on `TLContext` by context.ts). */
export interface DotScaledCalls {
  /**
   * Triton's `tl.dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc)`:
   * `sum_k (a[i, k] * 2^(sa[i, k/32] - 127)) * (b[k, j] * 2^(sb[j, k/32] - 127))` accumulated in
   * f32 (+ `acc`). `a` `[M, K]` and `b` `[K, N]` hold the formats' elements (`"e4m3"`: f8e4m3,
   * `"e5m2"`: f8e5m2, `"e2m1"`: f4e2m1, one per byte; `"bf16"`, `"fp16"` take no scale); the
   * scales are e8m0 bytes in a 1-byte integer tensor, `aScale` `[M, K/32]` and `bScale`
   * `[N, K/32]` (Triton's layouts), or null for a scale of 1. One PE_GEMM command at the format's
   * `dtype_cycles` rate with `ceil(K/32)` more streamed steps; consumes `acc` as `tl.dot` does.
   * `aFormat` and `bFormat` may differ among `"e4m3"`, `"e5m2"`, `"e2m1"` (mxfp8 x mxfp4): the
   * GEMM streams at the slower of the two formats' rates. nvfp4: f8e4m3 `aScale` `[M, K/16]` and
   * `bScale` `[N, K/16]` with `"e2m1"` on both sides, each element times its block's scale value,
   * `ceil(K/16)` more streamed steps.
   */
  dotScaled(
    a: TensorHandle,
    aScale: TensorHandle | null,
    aFormat: ScaledFormat,
    b: TensorHandle,
    bScale: TensorHandle | null,
    bFormat: ScaledFormat,
    acc?: TensorHandle | DotScaledOptions | null,
  ): Promise<TensorHandle>;
}

/** The formats a mixed-format GEMM may pair (Triton's mxfp8 x mxfp4; PE_GEMM streams at the slower rate). */
const NARROW_FORMATS: readonly ScaledFormat[] = ["e4m3", "e5m2", "e2m1"];

function isFormat(value: unknown): value is ScaledFormat {
  return typeof value === "string" && Object.hasOwn(SCALED_FORMAT_DTYPES, value);
}

export const dotScaledCalls: DotScaledCalls & ThisType<TLContext> = {
  dotScaled(a, aScale, aFormat, b, bScale, bFormat, acc) {
    return this._call("dotScaled", (site) => {
      const formats = Object.keys(SCALED_FORMAT_DTYPES).map((f) => `"${f}"`);
      for (const [name, format] of [
        ["aFormat", aFormat],
        ["bFormat", bFormat],
      ] as const) {
        if (!isFormat(format)) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dotScaled: ${name} must be one of ${formats.join(", ")}, got ${JSON.stringify(format)}.`,
          );
        }
      }
      checkOwned(this, "dotScaled", a);
      checkOwned(this, "dotScaled", b);
      for (const [name, operand, format] of [
        ["a", a, aFormat],
        ["b", b, bFormat],
      ] as const) {
        const dtype = SCALED_FORMAT_DTYPES[format];
        if (operand.dtype !== dtype) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dotScaled: ${name} ${operand.describe()} holds ${operand.dtype}, but format "${format}" is ${dtype} elements. Load it as ${dtype} (tl.load(ptr, shape, "${dtype}")), or pass the format of its elements.`,
          );
        }
      }
      if (aFormat !== bFormat && !(NARROW_FORMATS.includes(aFormat) && NARROW_FORMATS.includes(bFormat))) {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.dotScaled: "${aFormat}" x "${bFormat}": PE_GEMM mixes only the narrow formats (${NARROW_FORMATS.join(", ")}), each with its own scales; cast the ${aFormat === "bf16" || aFormat === "fp16" ? "a" : "b"} operand to the other's format (tl.cast) first.`,
        );
      }
      if (a.shape.length !== 2 || b.shape.length !== 2 || a.shape[1] !== b.shape[0]) {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.dotScaled needs (M, K) x (K, N) operands, got ${formatShape(a.shape)} x ${formatShape(b.shape)}.`,
        );
      }
      const [m, k] = a.shape as [number, number];
      const n = b.shape[1] as number;
      const scales = [
        ["aScale", aScale, m, aFormat],
        ["bScale", bScale, n, bFormat],
      ] as const;
      for (const [name, scale, , format] of scales) {
        if (scale === null || scale === undefined) continue;
        if (!(scale instanceof TensorHandleClass)) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dotScaled: ${name} must be a tensor handle or null, got ${typeof scale}.`,
          );
        }
        checkOwned(this, "dotScaled", scale);
        if (format === "bf16" || format === "fp16") {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dotScaled: format "${format}" takes no scale (Triton's rule); pass null for ${name}.`,
          );
        }
      }
      const scaleDtype = nvfp4Scales(this, aScale, aFormat, bScale, bFormat);
      const block = scaleBlockOf(scaleDtype);
      for (const [name, scale, rows] of scales) {
        if (scale === null || scale === undefined) continue;
        if (k % block !== 0) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dotScaled: K (${k}) must be a multiple of ${block}: one ${scaleDtype ?? "e8m0"} scale covers ${block} elements along K.`,
          );
        }
        const expected = [rows, k / block];
        if (formatShape(scale.shape) !== formatShape(expected)) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dotScaled: ${name} ${scale.describe()} must be ${formatShape(expected)} (one scale per ${block} elements along K of each ${name === "aScale" ? "row of a" : "column of b"}).`,
          );
        }
        if (
          scaleDtype === undefined &&
          (DTYPE_BYTES[scale.dtype] !== 1 || isFloatDtype(scale.dtype) || scale.dtype === "i1")
        ) {
          throw this._error(
            "TL_INVALID_CALL",
            `tl.dotScaled: ${name} ${scale.describe()} must hold e8m0 bytes in a 1-byte integer tensor (Triton's uint8 scales), or f8e4m3 scales with "e2m1" elements (nvfp4), got ${scale.dtype}.`,
          );
        }
      }
      const options: DotOptions =
        acc instanceof TensorHandleClass ? { acc } : acc === null || acc === undefined ? {} : acc;
      if ((options.outDtype ?? options.acc?.dtype ?? "f32") !== "f32") {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.dotScaled accumulates in f32: the accumulator and outDtype must be f32, got ${options.outDtype ?? options.acc?.dtype}. Cast the result afterwards.`,
        );
      }
      return runDot(this._scope, site, a, b, options, {
        a: aScale ?? undefined,
        b: bScale ?? undefined,
        dtype: scaleDtype,
      });
    });
  },
};

/**
 * The scales' dtype of a `tl.dotScaled`: `"f8e4m3"` when a scale is an f8e4m3 tensor (Triton's
 * nvfp4, one scale per 16 along K), undefined for e8m0 bytes. nvfp4 takes e2m1 elements on both
 * sides, and both scales (when given) of one kind.
 */
function nvfp4Scales(
  tl: TLContext,
  aScale: TensorHandle | null,
  aFormat: ScaledFormat,
  bScale: TensorHandle | null,
  bFormat: ScaledFormat,
): "f8e4m3" | undefined {
  const given = [
    ["aScale", aScale],
    ["bScale", bScale],
  ].filter((entry): entry is [string, TensorHandle] => entry[1] !== null && entry[1] !== undefined);
  const nv = given.find(([, scale]) => scale.dtype === "f8e4m3");
  if (nv === undefined) return undefined;
  const [name, scale] = nv;
  const other = given.find(([, s]) => s.dtype !== "f8e4m3");
  if (other !== undefined) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dotScaled: ${name} ${scale.describe()} holds f8e4m3 scales (nvfp4) but ${other[0]} ${other[1].describe()} does not: one GEMM takes one kind of scale. Give both f8e4m3 scales per 16 along K (nvfp4), or both e8m0 bytes per 32 (mxfp4).`,
    );
  }
  if (aFormat !== "e2m1" || bFormat !== "e2m1") {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.dotScaled: ${name} ${scale.describe()} holds f8e4m3 scales, which nvfp4 pairs only with "e2m1" elements on both sides (got "${aFormat}" x "${bFormat}"). Use e8m0 scales (a [rows, K/32] u8 tensor) for ${aFormat === "e2m1" ? bFormat : aFormat} operands.`,
    );
  }
  return "f8e4m3";
}
